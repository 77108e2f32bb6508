"""What the training scripts of the networks (gnn.py, transformer.py) share around their own model: the
command line, the rows, the normalizers, the matrices as a weights file stores them, the committed recipe, the
held-out report, the parity fixture's sample, and writing the shipped file with its measured storage cost."""
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


class Norm:
    """Per-column mean and std of the training rows (NaN ignored; std 1 where a column is constant)."""

    def __init__(self, x: np.ndarray):
        with np.errstate(all="ignore"):
            self.mean = np.nan_to_num(np.nanmean(x, axis=0)).astype(np.float32)
            sd = np.nan_to_num(np.nanstd(x, axis=0))
        self.std = np.where(sd > 1e-6, sd, 1.0).astype(np.float32)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return np.nan_to_num((x - self.mean) / self.std, nan=0.0).astype(np.float32)


def pad32(n: int) -> int:
    return (n + 31) // 32 * 32


def stored_matrix(t, storage: str):
    """A torch weight [out, in] as the file holds it: `in` padded with zero columns to a multiple of 32 (so any
    storage can hold it), in `storage` (f32, f16 or q8_0)."""
    a = t.detach().numpy().astype(np.float32)
    padded = np.zeros((a.shape[0], pad32(a.shape[1])), np.float32)
    padded[:, :a.shape[1]] = a
    return {"q8_0": pcwt.Q8_0, "f16": lambda v: v.astype(np.float16), "f32": lambda v: v}[storage](padded)


def stored_weights(path: str) -> dict:
    """The tensors of a written file as float32, read back the way the core reads them."""
    with open(path, "rb") as f:
        w = pcwt.read_bytes(f.read())
    return {k: t.to_f32() for k, t in w.tensors.items()}


def committed_recipe(path: str) -> dict:
    """The training recipe a committed weights file records."""
    with open(path, "rb") as f:
        return json.loads(pcwt.read_bytes(f.read()).metadata["training.recipe"])


def recipe(module) -> dict:
    """A network module's hyper-parameters as its committed file (module.OUT) was trained with them."""
    return dict(module.HYPER, **{k: v for k, v in committed_recipe(module.OUT).items() if k in module.HYPER})


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
