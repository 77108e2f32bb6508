"""Writes tests/data/models/tiny_conv.onnx, the JS API tests' model: Conv, Relu, MaxPool, GlobalAveragePool,
Flatten, Gemm, Softmax on input [batch, 3, 32, 32], with small seeded weights (1.6 KB in all).

    /usr/bin/python3 tests/wasm/make_tiny_conv.py
"""
import os

import numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper
rng = np.random.default_rng(0)
W = numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "conv.weight")
B = numpy_helper.from_array(np.zeros(8, np.float32), "conv.bias")
FW = numpy_helper.from_array(rng.standard_normal((4, 8)).astype(np.float32), "fc.weight")
FB = numpy_helper.from_array(np.zeros(4, np.float32), "fc.bias")
nodes = [
    helper.make_node("Conv", ["input", "conv.weight", "conv.bias"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c"], ["r"], name="relu"),
    helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("GlobalAveragePool", ["p"], ["g"], name="gap"),
    helper.make_node("Flatten", ["g"], ["f"], name="flatten", axis=1),
    helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["logits"], name="fc", transB=1),
    helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
]
g = helper.make_graph(nodes, "tiny_conv",
    [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, 32, 32])],
    [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 4])],
    initializer=[W, B, FW, FB])
m = helper.make_model(g, producer_name="perfcard-tests", opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
onnx.checker.check_model(m)
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
onnx.save(m, os.path.join(root, "tests", "data", "models", "tiny_conv.onnx"))
