"""How far the trees' correction carries on our own GPU rows (issue 15): same machine, new model families;
and another machine. Trained on the `gpu_ours` source alone with the shipped trees' recipe (trees.fit), so
the figures say what those rows can teach, not what the shipped file does (it never trained on them).

    /usr/bin/python3 -m scripts.training.gpu_transfer

Prints, per GPU, the roofline's MAPE and the corrected one: (1) trained on that machine's training families,
scored on its held-out families; (2) trained on every other machine's rows, scored on all of its rows. The
two machines differ in their host as much as in their GPU (docs/accuracy.md, "Our GPU measurements").
"""
import sys

import numpy as np

from scripts.cli import no_options
from scripts.training import rows as trows
from scripts.training import trees


def mape(pred, meas) -> float:
    return float(100 * np.mean(np.abs(np.asarray(pred) / np.asarray(meas) - 1)))


def scored(train, test) -> tuple[int, float, float]:
    """(rows, roofline MAPE, corrected MAPE) of `test` with the trees fitted on `train`."""
    booster = trees.fit(train)
    corrected = test.roofline_ms.to_numpy() * np.exp(trees.margins(booster, test))
    return len(test), mape(test.roofline_ms, test.latency_ms), mape(corrected, test.latency_ms)


def main() -> int:
    df, missing = trows.load(sources=("gpu_ours",))
    if missing:
        print("no GPU campaign rows (data/measured/gpu_*_torch.csv)")
        return 1
    devices = sorted(df.device_id.unique())
    print("| device | trained on | scored on | rows | roofline MAPE | corrected MAPE |")
    print("|---|---|---|---:|---:|---:|")
    for dev in devices:
        mine, others = df[df.device_id == dev], df[df.device_id != dev]
        n, r, c = scored(mine[mine.split == "train"], mine[mine.split == "test"])
        print(f"| {dev} | its training families | its held-out families | {n} | {r:.1f}% | {c:.1f}% |")
        if len(others):
            n, r, c = scored(others, mine)
            print(f"| {dev} | {', '.join(sorted(others.device_id.unique()))} | all its rows | {n} | {r:.1f}% | {c:.1f}% |")
    return 0


if __name__ == "__main__":
    no_options(__doc__)
    sys.exit(main())
