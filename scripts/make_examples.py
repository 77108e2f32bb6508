#!/usr/bin/python3
"""Writes the bundled example models to public/examples/: graph-only ONNX exports (weights stripped to
an external-data file that is deleted), so the page and `npm start` have real models of a few KB.

Run with Debian's Python (/usr/bin/python3), which has torch and torchvision: scripts/setup.sh --python.
"""
import argparse
import os
import sys
import tempfile

import onnx
import torch
import torchvision


def graph_only(model_path: str, out_path: str) -> None:
    """Moves every initializer's payload to an external file that is then discarded."""
    m = onnx.load(model_path)
    with tempfile.TemporaryDirectory() as tmp:
        onnx.save_model(m, os.path.join(tmp, "m.onnx"), save_as_external_data=True,
                        all_tensors_to_one_file=True, location="weights.bin", size_threshold=0)
        stripped = onnx.load(os.path.join(tmp, "m.onnx"), load_external_data=False)
    onnx.save_model(stripped, out_path)


def export_resnet50(out_dir: str, opset: int) -> str:
    torch.set_num_threads(1)
    model = torchvision.models.resnet50(weights=None).eval()
    out = os.path.join(out_dir, "resnet50.onnx")
    with tempfile.TemporaryDirectory() as tmp:
        full = os.path.join(tmp, "full.onnx")
        torch.onnx.export(model, torch.randn(1, 3, 224, 224), full, opset_version=opset,
                          input_names=["image"], output_names=["logits"],
                          dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})
        graph_only(full, out)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "public", "examples"))
    ap.add_argument("--opset", type=int, default=13)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    path = export_resnet50(args.out, args.opset)
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
