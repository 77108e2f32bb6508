"""Scores the committed learned predictors on ../shared data, without retraining what ships:

    nice -n 19 /usr/bin/python3 -m scripts.training.evaluate [--update-doc | --check]

Held-out families: the core predicts every held-out row with `--predictor trees` (the committed
weights/trees.pcwt, through `perfcard eval`), beside the roofline on the same rows; and with `--predictor gnn`
`--predictor transformer` and `--predictor ensemble` (weights/gnn.pcwt, transformer.pcwt, ensemble.pcwt),
the cost of each network's storage as its file records it, with the ensemble's band coverage and
out-of-distribution figures, HELP's rows against the ceiling their own labels allow (help_ceiling.py), which predictor "auto" takes per device family, and the eager floor at the
smallest public batches (scripts/training/eager_floor.py; also docs/eager-floor.json, which the page
reads). Leave one device out
retrains (the shipped file never saw a held-out device only when that device is left out of training), with
the same deterministic recipe as scripts/training/trees.py. --update-doc writes the section of
docs/accuracy.md between its markers; --check exits 1 when the figures a clean clone computes differ from
the committed section (it never writes weights). When zoo graphs are missing the rows they would give
are missing too: the script names the sources and stops instead of reporting fewer rows.
"""
from __future__ import annotations

import argparse
import difflib
import json
import os
import sys

from scripts.training import eager_floor, help_ceiling, report, rows as trows, trees
from scripts.weights import pcwt


def committed_trees() -> pcwt.WeightsFile:
    if not os.path.exists(trees.OUT):
        raise SystemExit(f"{trees.OUT} is missing: train it with /usr/bin/python3 -m scripts.training.trees --write")
    with open(trees.OUT, "rb") as f:
        return pcwt.read_bytes(f.read())


def meta(w, key):
    return w.metadata[key]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--update-doc", action="store_true")
    g.add_argument("--check", action="store_true", help="exit 1 when docs/accuracy.md's section differs")
    ap.add_argument("--no-lodo", action="store_true")
    args = ap.parse_args(argv)

    w = committed_trees()
    schema = trows.schema()
    if meta(w, "feature_schema.hash") != schema["hash"]:
        raise SystemExit("weights/trees.pcwt was trained on another feature schema: retrain it")
    sample = int(json.loads(meta(w, "training.recipe"))["help_sample"])
    df, missing = trows.load(help_sample=sample)
    if missing:
        raise SystemExit("rows of " + ", ".join(missing) + " are missing (their zoo graphs are not exported: "
                         "/usr/bin/python3 -m scripts.zoo.all); the figures would not be the committed ones")
    test, versions = trows.score(df[df.split == "test"])
    version = versions["trees"]
    files = report.learned_metadata(("gnn", "transformer", "ensemble"))
    gnn_block = report.graph_lines(test, versions) + report.quantization_lines({k: files[k] for k in ("gnn", "transformer")})
    gnn_block += report.ensemble_lines(test, versions["ensemble"], files["ensemble"]) + \
        help_ceiling.lines(test, help_ceiling.labels()) + report.defaults_lines(test, dict(files, trees=w.metadata))
    floor = eager_floor.measure(df)
    gnn_block += eager_floor.lines(floor)
    held = report.table(test, "held-out families")
    accuracy = report.family_accuracy(test)
    lodo_tab = None
    if not args.no_lodo:
        lodo_tab = report.table(trees.lodo(df, sorted(df.device_id.unique())), "leave one device out")
    block = report.section(held, lodo_tab, accuracy, schema, version, gnn_block, report.unseen_lines(w.metadata))
    print(block)
    if args.update_doc:
        report.update_doc(block)
        eager_floor.write(floor)
    if args.check:
        committed = report.committed_section()
        if committed.strip() != block.strip():
            sys.stdout.writelines(difflib.unified_diff(committed.splitlines(True), block.splitlines(True),
                                                       "docs/accuracy.md (committed)", "this clone"))
            print("\nthe learned predictors' figures differ from docs/accuracy.md")
            return 1
        if eager_floor.committed() != json.loads(json.dumps(floor)):
            print("\nthe eager-floor figures differ from docs/eager-floor.json")
            return 1
        print("docs/accuracy.md's learned-predictor figures and docs/eager-floor.json reproduce")
    return 0


if __name__ == "__main__":
    sys.exit(main())
