"""Tiny ONNX graphs with symbolic dims for kernel-level calibration: one file answers every (B, M, N, K)."""
import os

import onnx
from onnx import TensorProto, helper


def write_gemm_models(out_dir):
    """bmm: [B,M,K] x [B,K,N]; linear: [B,M,K] x [K,N] (the weight shared across the batch)."""
    os.makedirs(out_dir, exist_ok=True)
    paths = {}
    for name, b_shape in (("bmm", ["B", "K", "N"]), ("linear", ["K", "N"])):
        a = helper.make_tensor_value_info("a", TensorProto.FLOAT, ["B", "M", "K"])
        b = helper.make_tensor_value_info("b", TensorProto.FLOAT, b_shape)
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", "M", "N"])
        g = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["y"], name=name)], name, [a, b], [y])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="perfcard-calibration")
        p = os.path.join(out_dir, f"{name}.onnx")
        onnx.save(m, p)
        paths[name] = p
    return paths
