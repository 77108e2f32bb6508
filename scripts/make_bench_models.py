#!/usr/bin/python3
"""Makes the benchmark's large models (not committed: they are hundreds of MB) under build/bench-models/:
  resnet50_full.onnx  ~100 MB, torchvision resnet50 with its weights embedded (random init)
  mlp_1gb.onnx        ~1 GB, a MatMul chain with 1 GiB of embedded float weights
Run with Debian's Python (/usr/bin/python3): it has torch, torchvision and onnx.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def resnet50(path):
    import torch
    import torchvision
    torch.set_num_threads(1)
    m = torchvision.models.resnet50(weights=None).eval()
    torch.onnx.export(m, torch.randn(1, 3, 224, 224), path, opset_version=13, input_names=["image"],
                      dynamic_axes={"image": {0: "batch"}})


def mlp_1gb(path, layers=16, width=4096):
    # 16 x 4096 x 4096 float32 = 1 GiB of embedded weights.
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", width])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", width])
    nodes, inits, prev = [], [], "x"
    rng = np.random.default_rng(0)
    for i in range(layers):
        w = rng.standard_normal((width, width), dtype=np.float32)
        inits.append(numpy_helper.from_array(w, f"w{i}"))
        out = "y" if i == layers - 1 else f"h{i}"
        nodes.append(helper.make_node("MatMul", [prev, f"w{i}"], [out], name=f"matmul{i}"))
        prev = out
    g = helper.make_graph(nodes, "mlp_1gb", [x], [y], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="perfcard-bench")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "build", "bench-models")
    os.makedirs(out, exist_ok=True)
    for name, fn in (("resnet50_full.onnx", resnet50), ("mlp_1gb.onnx", mlp_1gb)):
        p = os.path.join(out, name)
        if not os.path.exists(p):
            fn(p)
        print(f"{p}: {os.path.getsize(p) / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
