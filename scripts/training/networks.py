"""What the training scripts of the networks (gnn.py, transformer.py) share around their own model: the
command line, the rows, the held-out report, and writing the shipped file with its measured storage cost."""
from __future__ import annotations

import argparse
import datetime
import json

import numpy as np
import pandas as pd

from scripts.roofline.perfcard_eval import refresh_manifest
from scripts.training import quantization, report, rows as trows
from scripts.training.trees import git_commit, target
from scripts.weights import pcwt


def arguments(doc: str, name: str, hyper: dict, argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help=f"export weights/{name}.pcwt and the parity rows")
    ap.add_argument("--storage", choices=quantization.STORAGES, default="q8_0")
    ap.add_argument("--epochs", type=int, default=hyper["epochs"])
    ap.add_argument("--help-sample", type=int, default=1000, help="NAS-Bench-201 cells taken from HELP")
    ap.add_argument("--parity-only", action="store_true",
                    help=f"rewrite tests/data/{name}_parity.pcwt from the committed weights/{name}.pcwt (no training)")
    args = ap.parse_args(argv)
    hyper["epochs"] = args.epochs
    return args


def rows(help_sample: int) -> tuple[dict, int, int, pd.DataFrame]:
    """The core's schema, the op vocabulary and class counts of the embeddings, and the labelled rows."""
    schema = trows.schema()
    df, missing = trows.load(help_sample=help_sample)
    if missing:
        print("sources without rows (their zoo graphs are not exported?): " + ", ".join(missing))
    return schema, len(schema["ops"]) + 1, len(schema["op_classes"]), df


def held_out(test: pd.DataFrame, train: pd.DataFrame, margin: np.ndarray, name: str) -> dict:
    """Sets test[f"{name}_ms"] (the margin held to the training labels' range, as the core holds it), prints
    the held-out table and each device family's figures; returns the accuracy the file records."""
    clamp = target(train)
    test[f"{name}_ms"] = test.roofline_ms * np.exp(np.clip(margin, clamp.min(), clamp.max()))
    print(report.markdown(report.table(test, "held-out families", learned=f"{name}_ms", name=name), name=name))
    accuracy = report.family_accuracy(test, learned=f"{name}_ms")
    for fam, a in sorted(accuracy.items()):
        print(f"  {fam}: {name} {a['mape']:.1%} vs roofline {a['roofline_mape']:.1%} on {a['rows']} rows")
    return accuracy


def provenance(what: str, hyper: dict, train: pd.DataFrame, help_sample: int) -> str:
    return (f"{what} {json.dumps(hyper, sort_keys=True)}; rows: " +
            ", ".join(f"{s} {n}" for s, n in train.source.value_counts().items()) +
            f"; train split of a by-family split (30% of families held out); HELP sample {help_sample} cells")


def write(make, name: str, out: str, storage: str, test: pd.DataFrame) -> bytes:
    """`make(storage, quantized)` gives the file's bytes: each storage is measured by the core on the held-out
    rows, and the shipped storage is written with the measurement in its metadata."""
    quantized = quantization.heldout({s: make(s, None) for s in quantization.STORAGES}, name, test)
    print("\n".join(quantization.printable(quantized)))
    data = make(storage, quantized)
    with open(out, "wb") as f:
        f.write(data)
    refresh_manifest()
    return data


def parity_sample(test: pd.DataFrame, sizes: np.ndarray, largest: int, limit: int = 24) -> pd.DataFrame:
    """A per-source sample of the held-out rows whose input (graph, sequence) has at most `largest` items
    (`sizes`: per row of `test`), about `limit` rows in all: the parity fixture stays small."""
    small = test[sizes <= largest]
    per = max(1, limit // small.source.nunique())
    return pd.concat([g.sample(min(len(g), per), random_state=0) for _, g in small.groupby("source")])


def parity_metadata(name: str, version: int, schema: dict, schema_key: str, take: pd.DataFrame) -> dict:
    """The metadata of tests/data/<name>_parity.pcwt; `schema_key`: the input's schema ("graph", "sequence")."""
    return {"predictor": f"{name}-parity", "predictor.version": version, "feature_schema.hash": schema["hash"],
            f"{schema_key}_schema.hash": schema[schema_key]["hash"], "created_by": f"scripts/training/{name}.py",
            "training.commit": git_commit(), "training.date": datetime.date.today().isoformat(),
            "training.provenance": f"held-out rows and the numpy float64 forward pass on weights/{name}.pcwt as stored",
            "training.sources": pcwt.Array("string", sorted(take.source.unique()))}
