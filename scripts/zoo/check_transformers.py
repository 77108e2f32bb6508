"""Cross-check of scripts/zoo/transformers.py against torch.onnx.export of the same small configurations.

scripts/checks/check_shapes.py holds plain-torch BERT, GPT-2 and LLaMA (with and without a KV cache) modules; this
exports them (opset 17, dynamic batch/sequence/past) and builds the graph-only twins with transformers.py,
then compares PerfCard's `analyze` params and MACs of both at the same bindings. Exit 1 on any mismatch.

    /usr/bin/python3 -m scripts.zoo.check_transformers
"""
from __future__ import annotations

import os
import sys
import tempfile

import onnx

from scripts.cli import no_options
from scripts.zoo import manifest
from scripts.zoo import transformers as zt

# Known differences of the torch export, each checked exactly rather than tolerated:
#  - LLaMA's inv_freq buffer (head_dim/2 = 8 floats) is an initializer there; the builder computes it in-graph;
#  - the exporter constant-folds GPT-2's tied `wte.weight.t()` into a second vocab x hidden initializer
#    (1000 x 64); the builder reads the one matrix through a Transpose node, as published counts do;
#  - torch.outer for the rotary angles exports as a K=1 MatMul in every layer (2 layers x seq x 8 MACs at
#    batch-independent shapes); the builder forms the angles once with a broadcast Mul.
EXTRA_PARAMS = {"tiny-llama": 8, "tiny-llama.decode": 8, "tiny-gpt2": 1000 * 64}
EXTRA_MACS = {"tiny-llama": 2 * 16 * 8, "tiny-llama.decode": 2 * 1 * 8}


def torch_exports(tmp: str):
    import torch
    from scripts.checks import check_shapes as cs

    torch.manual_seed(0)
    torch.set_num_threads(1)
    cases = {"tiny-bert": cs._bert, "tiny-gpt2": cs._gpt2, "tiny-llama": cs._llama(False),
             "tiny-llama.decode": cs._llama(True)}
    out = {}
    for name, make in cases.items():
        m, args, in_names, out_names, dyn = make()
        # Distinct random values: torch 1.13 merges initializers with equal values (ones/zeros norms and
        # biases), which would hide parameters from the count.
        with torch.no_grad():
            for prm in m.parameters():
                prm.normal_()
        if name == "tiny-llama.decode":  # the builder's symbol names for the cache
            dyn = {k: {a: ("past_sequence" if s == "past" else s) for a, s in v.items()} for k, v in dyn.items()}
        path = os.path.join(tmp, name + ".onnx")
        with torch.no_grad():
            torch.onnx.export(m, args, path, input_names=in_names, output_names=out_names, dynamic_axes=dyn,
                              opset_version=zt.OPSET)
        out[name] = path
    return out


def main() -> int:
    binds = {"tiny-bert": {"batch": 2, "sequence": 16}, "tiny-gpt2": {"batch": 2, "sequence": 16},
             "tiny-llama": {"batch": 2, "sequence": 16},
             "tiny-llama.decode": {"batch": 2, "sequence": 1, "past_sequence": 8}}
    cfgs = {row[0]: row[3] for row in zt.CATALOG}
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        exported = torch_exports(tmp)
        print(f"{'graph':20s} {'params torch':>12s} {'params ours':>12s} {'MACs torch':>12s} {'MACs ours':>12s}"
              f" {'nodes t/o':>10s}")
        for name, tpath in exported.items():
            cid = name.split(".")[0]
            decode = name.endswith(".decode")
            ours = os.path.join(tmp, "ours_" + name + ".onnx")
            onnx.save_model(zt.build(cfgs[cid], name, decode), ours)
            t, o = manifest.analyze(tpath, binds[name]), manifest.analyze(ours, binds[name])
            params_ok = t["params"] - EXTRA_PARAMS.get(name, 0) == o["params"]
            macs_ok = t["macs"] - EXTRA_MACS.get(name, 0) == o["macs"]
            bad += not (params_ok and macs_ok)
            print(f"{name:20s} {t['params']:12,.0f} {o['params']:12,.0f} {t['macs']:12,.0f} {o['macs']:12,.0f}"
                  f" {t['nodes']:>4.0f}/{o['nodes']:<5.0f} {'ok' if params_ok and macs_ok else 'MISMATCH'}")
    print(f"exporter-only terms subtracted from torch: params {EXTRA_PARAMS}, MACs {EXTRA_MACS}")
    return 1 if bad else 0


if __name__ == "__main__":
    no_options(__doc__)
    sys.exit(main())
