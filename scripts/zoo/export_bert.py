"""Export the plain-torch BERT encoder (scripts/zoo/bert.py) to a graph-only ONNX file.

    /usr/bin/python3 -m scripts.zoo.export_bert [--config base|tiny] [--opset 13] [--out PATH]

Inputs input_ids, token_type_ids, attention_mask: int64 [batch, sequence] with both dims symbolic
("batch", "sequence"). Outputs last_hidden_state [batch, sequence, hidden] and pooled [batch, hidden].
Weights are random (nothing is downloaded) and stripped: the .onnx keeps only the structure.
Writes a small JSON next to the model with the configuration's own parameter/MAC figures.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

import torch
import onnx

from scripts import paths
from scripts.zoo import graph_only, torch_count
from scripts.zoo.bert import BERT_BASE, BERT_TINY, Bert

CONFIGS = {"base": BERT_BASE, "tiny": BERT_TINY}


def export(config_name: str, opset: int, out_path: str, count_seq: int = 128) -> dict:
    cfg = CONFIGS[config_name]
    torch.manual_seed(0)
    model = Bert(cfg).eval()
    with torch.no_grad():  # distinct values: torch.onnx.export de-duplicates identical initializers
        for p in model.parameters():
            p.normal_(0, 0.02)
    batch, seq = 2, 16
    ids = torch.zeros(batch, seq, dtype=torch.long)
    args = (ids, torch.zeros_like(ids), torch.ones_like(ids))
    names = ["input_ids", "token_type_ids", "attention_mask"]
    dyn = {n: {0: "batch", 1: "sequence"} for n in names}
    dyn["last_hidden_state"] = {0: "batch", 1: "sequence"}
    dyn["pooled"] = {0: "batch"}
    out_dir = os.path.dirname(os.path.abspath(out_path))
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="perfcard_export_", dir=out_dir) as tmp:
        tmp_path = os.path.join(tmp, "m.onnx")
        with torch.no_grad():
            torch.onnx.export(model, args, tmp_path, opset_version=opset, input_names=names,
                              output_names=["last_hidden_state", "pooled"], dynamic_axes=dyn,
                              do_constant_folding=True)
        proto = onnx.load(tmp_path)
    graph_only.strip_to_graph_only(proto, out_path)
    ids = torch.zeros(1, count_seq, dtype=torch.long)
    c = torch_count.count(model, ids, torch.zeros_like(ids), torch.ones_like(ids))
    return {
        "model": os.path.splitext(os.path.basename(out_path))[0], "family": "bert", "config": config_name,
        "opset": opset, "nodes": len(proto.graph.node), "onnx_bytes": os.path.getsize(out_path),
        "config_params": cfg.expected_params(), "constructed_num_params": torch_count.num_params(model),
        "count_batch": 1, "count_sequence": count_seq,
        "config_macs": cfg.expected_macs(1, count_seq), "torch_macs": c["macs"],
        "config_activations": cfg.expected_activations(1, count_seq), "torch_activations": c["activations"],
        "hidden": cfg.hidden, "layers": cfg.layers, "heads": cfg.heads, "intermediate": cfg.intermediate,
        "vocab_size": cfg.vocab_size, "max_position": cfg.max_position, "type_vocab": cfg.type_vocab,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", choices=sorted(CONFIGS), default="base")
    ap.add_argument("--opset", type=int, default=13, choices=range(13, 18), metavar="{13..17}")
    ap.add_argument("--out", default=None, help="default: scripts/zoo/out/bert_<config>.onnx")
    args = ap.parse_args()
    torch.set_num_threads(1)
    out = args.out or os.path.join(paths.ZOO_OUT, f"bert_{args.config}.onnx")
    rec = export(args.config, args.opset, out)
    with open(os.path.splitext(out)[0] + ".json", "w") as f:
        json.dump(rec, f, indent=1, sort_keys=True)
    print(json.dumps(rec, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
