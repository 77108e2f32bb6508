"""Writes the weights-file fixtures of tests/weights_file_test.cpp to tests/data/weights/ with pcwt.py,
so that the C++ reader is tested on files the Python writer made (same layout, same quantization):

  example_v1.pcwt         a valid 1.0 file: every dtype, every metadata type; "x" is the fp32 source of
                          the f16 / bf16 / q8_0 / q4_0 tensors, which the C++ test re-derives bit for bit
  example_v1_1.pcwt       a 1.1 file with a metadata value type and a dtype 1.0 does not know (readable)
  example_v2.pcwt         major version 2 (rejected)
  example_truncated.pcwt  example_v1.pcwt cut short (rejected)
  trees_small_f16.pcwt    two hand-written trees over 3 features (margins known by hand; f16 leaves)
  trees_small_i8.pcwt     the same trees with i8 leaves and a per-tree scale
  trees_backward.pcwt     a split whose child points back at its parent (rejected: it would loop)
  trees_bad_feature.pcwt  a split reading feature 7 of 3 (rejected)
  trees_shared_child.pcwt a split whose two children are the same node (rejected: not a tree; laid out
                          for evaluation, shared nodes would multiply)

The output is deterministic; rerun after changing pcwt.py and commit the result.
"""
import os

import numpy as np

from scripts import paths
from scripts.cli import no_options
from scripts.weights import pcwt

OUT = os.path.join(paths.TEST_DATA, "weights")

METADATA = {
    "predictor": "example",
    "predictor.version": 7,
    "feature_schema.hash": "sha256:0123456789abcdef",
    "training.provenance": "synthetic fixture written by scripts/weights/make_test_files.py",
    "training.sources": ["synthetic"],
    "training.commit": "0000000",
    "training.date": "2025-01-01",
    "created_by": "scripts/weights/make_test_files.py",
    "example.learning_rate": 0.125,
    "example.quantized": True,
    "example.layers": [64, 32, 1],
    "example.loss_curve": [0.5, 0.25, -1.5e-3],
    "example.flags": [True, False, True],
    "example.empty": pcwt.Array("string", []),
    "example.unicode": "d\u00e9j\u00e0 vu \u2713",
}


def source_values():
    """[4, 64] float32: row 0 holds rounding edge cases, rows 1-3 random normals of three magnitudes."""
    edge = [
        1.0 + 2.0 ** -11,           # fp16 tie -> 1.0 (even)
        1.0 + 3 * 2.0 ** -11,       # fp16 tie -> 1 + 2^-9 (even)
        1.0 + 2.0 ** -11 + 2.0 ** -20,  # just above a tie -> up
        -(2.0 ** -14),              # smallest normal fp16
        2.0 ** -24,                 # smallest subnormal fp16
        2.0 ** -25,                 # tie between 0 and 2^-24 -> 0
        3 * 2.0 ** -26,             # above the tie -> 2^-24
        2.0 ** -14 - 2.0 ** -25,    # subnormal tie rounding up to the smallest normal
        65504.0, 65519.0, 65520.0, -1e5,  # fp16 max, rounds to max, rounds to inf, -inf
        1.0 + 2.0 ** -8,            # bf16 tie -> 1.0
        1.0 + 3 * 2.0 ** -8,        # bf16 tie -> 1 + 2^-6
        0.0, -0.0, 1.0 / 3.0, -2.5, 2.5, 3.5, 0.1, -0.1,
    ]
    rng = np.random.default_rng(20250101)
    row0 = np.concatenate([np.array(edge, np.float32), rng.standard_normal(64 - len(edge)).astype(np.float32)])
    rows = [row0] + [(rng.standard_normal(64) * s).astype(np.float32) for s in (1.0, 1e-3, 300.0)]
    x = np.stack(rows).astype(np.float32)
    x[2, 5] = 0.0
    x[3, 32:] = 0.0  # an all-zero block: scale 0
    return x


def tensors():
    x = source_values()
    with np.errstate(over="ignore"):
        f16 = x.astype(np.float16)  # 65520 and -1e5 overflow to +-inf on purpose
    return {
        "x": x,
        "x_f16": f16,
        "x_bf16": pcwt.BF16(x),
        "x_q8_0": pcwt.Q8_0(x),
        "x_q4_0": pcwt.Q4_0(x),
        "bias": np.array([0.5, -0.25, 1e300], np.float64),
        "ids_i32": np.array([1, -2, 2147483647, -2147483648, 0], np.int32),
        "ids_i64": np.array([[1, -1], [2 ** 62, -(2 ** 63)]], np.int64),
        "mask_u8": np.arange(7, dtype=np.uint8) * 37,
        "small_i8": np.array([-128, 0, 127], np.int8),
        "scalar": np.array(2.5, np.float32),
        "empty": np.zeros((0, 3), np.float32),
    }


def small_trees(leaf_format="f16", left_of_root=1, feature_of_root=0, right_of_root=4):
    """Tree 0: x0 < 1.5 ? (x1 < 0 ? 0.25 : -0.5) : 1.0, NaN in x0 goes right, in x1 left.
    Tree 1: x2 < 10 ? 0.125 : 0.75, NaN goes left. base_score 0.5."""
    feature = np.array([feature_of_root, 1, -1, -1, -1, 2, -1, -1], np.int32)
    threshold = np.array([1.5, 0.0, 0, 0, 0, 10.0, 0, 0], np.float32)
    left = np.array([left_of_root, 2, -1, -1, -1, 6, -1, -1], np.int32)
    right = np.array([right_of_root, 3, -1, -1, -1, 7, -1, -1], np.int32)
    default_left = np.array([0, 1, 0, 0, 0, 1, 0, 0], np.uint8)
    leaf = np.array([0, 0, 0.25, -0.5, 1.0, 0, 0.125, 0.75], np.float32)
    meta = dict(METADATA, predictor="trees-fixture", **{"trees.base_score": 0.5})
    t = {"tree.first": np.array([0, 5], np.int32), "node.feature": feature, "node.threshold": threshold,
         "node.left": left, "node.right": right, "node.default_left": default_left}
    if leaf_format == "f16":
        t["node.leaf"] = leaf.astype(np.float16)
    else:
        scale = np.array([1.0 / 127, 0.75 / 127], np.float32)
        bounds = [(0, 5), (5, 8)]
        t["node.leaf"] = np.concatenate([np.rint(leaf[a:b] / scale[i]) for i, (a, b) in enumerate(bounds)]).astype(np.int8)
        t["tree.leaf_scale"] = scale
    return pcwt.write_bytes({k: v for k, v in meta.items() if not k.startswith("example.")}, t)


def main():
    os.makedirs(OUT, exist_ok=True)
    v1 = pcwt.write_bytes(METADATA, tensors(), alignment=64)
    newer = dict(METADATA)
    newer["example.future"] = pcwt.RawValue(9, b"\x01\x02\x03")  # a value type from "1.1"
    t11 = {"x": source_values(), "future": pcwt.Raw(77, [5], b"\xaa" * 10, byte_size=10)}
    files = {
        "example_v1.pcwt": v1,
        "example_v1_1.pcwt": pcwt.write_bytes(newer, t11, alignment=32, minor=1),
        "example_v2.pcwt": pcwt.write_bytes(METADATA, {"x": source_values()}, major=2, minor=3),
        "example_truncated.pcwt": v1[:1000],
        "trees_small_f16.pcwt": small_trees("f16"),
        "trees_small_i8.pcwt": small_trees("i8"),
        "trees_backward.pcwt": small_trees("f16", left_of_root=0),
        "trees_bad_feature.pcwt": small_trees("f16", feature_of_root=7),
        "trees_shared_child.pcwt": small_trees("f16", right_of_root=1),
    }
    for name, data in files.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
        print(f"{name}: {len(data)} bytes")
    pcwt.read_bytes(files["example_v1.pcwt"])
    pcwt.read_bytes(files["example_v1_1.pcwt"])


if __name__ == "__main__":
    no_options(__doc__)
    main()
