"""Recurrent and embedding-lookup models: exported with torch, timed with onnxruntime-node on this CPU, and
compared with `perfcard predict` for this machine's catalog entry at the same thread count.

    /usr/bin/python3 -m scripts.measure.sequence_check [--threads 1] [--runs 10] [--predict-only]

Why these: the roofline once charged a recurrent op as one large GEMM (its time steps really run one
after another) and a Gather its whole table (an embedding lookup reads only its rows). The models:
  gru_tagger       Embedding(20000, 128) -> bidirectional GRU(128 -> 256) -> Linear(512 -> 20), tokens [batch, sequence]
  lstm_tagger      Embedding(20000, 128) -> 2-layer LSTM(128 -> 256) -> Linear(256 -> 20)
  embbag_recsys    a DLRM-style recommender: 8 EmbeddingBag(200000, 64, mode=sum) tables (410 MB), a dense
                   bottom MLP, pairwise dot interactions and a top MLP; [batch] bags of 20 ids per table
Exports go to scripts/zoo/out/sequence/ (git-ignored; real random weights, since onnxruntime runs them).
Rows go to data/measured/cpu_ort_node_sequence.csv with this machine's id (data/measured/machines.json;
other machines' rows are kept, and only rows of a machine with a catalog entry are predicted);
drift: one reference configuration is timed before and after the rows, which are marked when it moved
more than 5%. --predict-only reuses the committed rows and prints the comparison (after a core
change, to see its effect without re-measuring).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys

from scripts import paths
from scripts.measure import campaign, machines

OUT = os.path.join(paths.ZOO_OUT, "sequence")
CSV = os.path.join(paths.MEASURED, "cpu_ort_node_sequence.csv")
CLI = paths.CLI
FIELDS = ["machine_id", "model", "batch", "sequence", "threads", "median_ms", "p10_ms", "p90_ms", "runs",
          "peak_rss_mib", "drift", "onnxruntime_node"]

# (model, batch, sequence): sequence 0 for models without one
CONFIGS = [("gru_tagger", 1, 32), ("gru_tagger", 1, 128), ("gru_tagger", 8, 64), ("gru_tagger", 32, 32),
           ("lstm_tagger", 1, 32), ("lstm_tagger", 1, 128), ("lstm_tagger", 8, 64),
           ("embbag_recsys", 1, 0), ("embbag_recsys", 16, 0), ("embbag_recsys", 128, 0)]
# Timed before and after the rows: when it moved more than the tolerance, the machine was not quiet and
# every row is marked (drift=1) and left out of the comparison.
REFERENCE = ("gru_tagger", 8, 64)
DRIFT_TOLERANCE = 0.05


def export_all():
    import torch
    from torch import nn

    torch.manual_seed(0)
    torch.set_num_threads(1)
    os.makedirs(OUT, exist_ok=True)

    class Tagger(nn.Module):
        def __init__(self, cell):
            super().__init__()
            self.emb = nn.Embedding(20000, 128)
            if cell == "gru":
                self.rnn = nn.GRU(128, 256, num_layers=1, bidirectional=True, batch_first=True)
                self.head = nn.Linear(512, 20)
            else:
                self.rnn = nn.LSTM(128, 256, num_layers=2, batch_first=True)
                self.head = nn.Linear(256, 20)

        def forward(self, tokens):
            y, _ = self.rnn(self.emb(tokens))
            return self.head(y)

    class Recsys(nn.Module):
        def __init__(self, tables=8, rows=200000, dim=64, dense=13):
            super().__init__()
            self.tables = nn.ModuleList(nn.EmbeddingBag(rows, dim, mode="sum") for _ in range(tables))
            self.bottom = nn.Sequential(nn.Linear(dense, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, dim), nn.ReLU())
            n = tables + 1
            iu = torch.triu_indices(n, n, offset=1)  # a constant of the graph (the op does not export)
            self.register_buffer("iu0", iu[0].clone())
            self.register_buffer("iu1", iu[1].clone())
            self.top = nn.Sequential(nn.Linear(dim + n * (n - 1) // 2, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 1))

        def forward(self, dense, ids):  # ids [batch, tables, 20]
            x = self.bottom(dense)
            feats = [x] + [t(ids[:, i, :]) for i, t in enumerate(self.tables)]
            z = torch.stack(feats, dim=1)
            inter = torch.bmm(z, z.transpose(1, 2))
            flat = inter[:, self.iu0, self.iu1]
            return torch.sigmoid(self.top(torch.cat([x, flat], dim=1)))

    def export(model, args, names, dynamic, name):
        path = os.path.join(OUT, name + ".onnx")
        model.eval()
        with torch.no_grad():
            torch.onnx.export(model, args, path, input_names=names, output_names=["y"], dynamic_axes=dynamic, opset_version=13)
        print(f"exported {path} ({os.path.getsize(path) / 1e6:.1f} MB)", file=sys.stderr)

    tokens = torch.randint(0, 20000, (2, 16))
    dyn = {"tokens": {0: "batch", 1: "sequence"}, "y": {0: "batch", 1: "sequence"}}
    export(Tagger("gru"), (tokens,), ["tokens"], dyn, "gru_tagger")
    export(Tagger("lstm"), (tokens,), ["tokens"], dyn, "lstm_tagger")
    dense, ids = torch.randn(2, 13), torch.randint(0, 200000, (2, 8, 20))
    export(Recsys(), (dense, ids), ["dense", "ids"], {"dense": {0: "batch"}, "ids": {0: "batch"}, "y": {0: "batch"}}, "embbag_recsys")


def dims(model, batch, seq):
    d = ["--dim", f"batch={batch}"]
    if seq:
        d += ["--dim", f"sequence={seq}"]
    return d


def measure(model, batch, seq, threads, runs):
    cmd = ["node", os.path.join(paths.MEASURE, "ort_run.mjs"), os.path.join(OUT, model + ".onnx"), "--threads", str(threads),
           "--runs", str(runs)] + dims(model, batch, seq)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, cwd=paths.MEASURE)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def predict(model, batch, seq, threads, catalog_id, cli=CLI):
    cmd = [cli, "predict", os.path.join(OUT, model + ".onnx"), "--device", catalog_id, "--threads", str(threads),
           "--batch", str(batch), "--json"] + (["--dim", f"sequence={seq}"] if seq else [])
    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(r.stdout)["predictions"][0]["latency_ms"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--predict-only", action="store_true")
    ap.add_argument("--cli", default=CLI, help="the perfcard CLI to predict with (an older build, to compare)")
    args = ap.parse_args()
    machine = machines.record(campaign.machine())
    if not all(os.path.exists(os.path.join(OUT, m + ".onnx")) for m, _, _ in CONFIGS):
        export_all()
    rows = []
    if args.predict_only:
        with open(CSV) as f:
            rows = [r for r in csv.DictReader(f) if machines.catalog_id(r["machine_id"]) and r["drift"] == "0"]
    else:
        ref0 = measure(*REFERENCE, args.threads, args.runs)["median_ms"]
        for model, batch, seq in CONFIGS:
            m = measure(model, batch, seq, args.threads, args.runs)
            rows.append({"machine_id": machine["machine_id"], "model": model, "batch": batch, "sequence": seq,
                         "threads": args.threads, "median_ms": m["median_ms"], "p10_ms": m["p10_ms"], "p90_ms": m["p90_ms"],
                         "runs": m["runs"], "peak_rss_mib": m["peak_rss_mib"], "drift": 0,
                         "onnxruntime_node": machine["onnxruntime_node"]})
            print(f"measured {model} batch {batch} seq {seq}: {m['median_ms']:.3f} ms", file=sys.stderr)
        ref1 = measure(*REFERENCE, args.threads, args.runs)["median_ms"]
        drift = abs(ref1 / ref0 - 1) > DRIFT_TOLERANCE
        for r in rows:
            r["drift"] = int(drift)
        others = []
        if os.path.exists(CSV):
            with open(CSV) as f:
                others = [r for r in csv.DictReader(f) if r["machine_id"] != machine["machine_id"]]
        with open(CSV, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS)
            w.writeheader()
            w.writerows(others + rows)
        print(f"wrote {len(rows)} rows to {os.path.relpath(CSV, paths.ROOT)} (reference {ref0:.2f} -> {ref1:.2f} ms"
              f"{', DRIFT: rows marked' if drift else ''})", file=sys.stderr)
    print(f"{'model':<16}{'batch':>6}{'seq':>6}{'measured ms':>13}{'predicted ms':>14}{'pred/meas':>11}")
    for r in rows:
        device = machines.catalog_id(r["machine_id"])
        if not device:
            print(f"{r['model']}: {r['machine_id']} has no catalog entry (scripts/measure/machines.py): not predicted")
            continue
        p = predict(r["model"], int(r["batch"]), int(r["sequence"]), int(r["threads"]), device, args.cli)
        meas = float(r["median_ms"])
        print(f"{r['model']:<16}{int(r['batch']):>6}{int(r['sequence']):>6}{meas:>13.3f}{p:>14.3f}{p / meas:>11.2f}")


if __name__ == "__main__":
    main()
