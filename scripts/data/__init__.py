"""PerfCard public-measurement loaders.

One package that turns every public source under ``../shared/data/public`` (relative to the repo
root) into tidy pandas tables with the same common columns, so that calibration, evaluation and
training read the same rows.

    devices.py              device spellings -> PerfCard device ids (unknown -> None, never guessed)
    sources.py              one loader per source (``load(name)``, ``SOURCES``)
    summary.py              per-source counts, unmapped spellings, dropped rows (``python3 -m scripts.data.summary``)
    timm_to_torchvision.py  confirmed timm <-> torchvision architecture pairs (``load_map()``)

Import from the repo root: ``from scripts.data import sources, devices``.
"""
