#!/usr/bin/python3
"""Gives a graph-only model (weights stripped to an external-data file that was not kept) weights to run
with: writes the model and a pseudo-random weights file of the right size into OUT_DIR. The contents do
not matter for timing dense CPU kernels; they are random rather than zero so no sparsity shortcut applies.

    /usr/bin/python3 -m scripts.measure.materialize MODEL.onnx OUT_DIR   -> prints the runnable model path
"""
import os
import sys

import numpy as np
import onnx


def materialize(src, out_dir):
    m = onnx.load(src, load_external_data=False)
    ends, zeros = {}, []
    for t in m.graph.initializer:
        if t.data_location != onnx.TensorProto.EXTERNAL:
            continue
        info = {e.key: e.value for e in t.external_data}
        loc = info["location"]
        dtype = np.dtype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[t.data_type])
        # The largest exports (vit_h_14, regnet_y_128gf) declare a location only: offset 0 and the tensor's
        # own size. Every such tensor then reads the head of one file, which is as good as any random bytes.
        size = int(info["length"]) if "length" in info else int(np.prod(t.dims, dtype=np.int64)) * dtype.itemsize
        offset = int(info.get("offset", 0))
        ends[loc] = max(ends.get(loc, 0), offset + size)
        if dtype.kind in "iub":
            # Integer buffers are indices (Swin's and MaxViT's relative-position tables feed a Gather):
            # random bits would be out of range, zero is always a valid index and costs the same.
            zeros.append((loc, offset, size))
    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(0)
    for loc, size in ends.items():
        path = os.path.join(out_dir, loc)
        with open(path, "wb") as f:
            chunk = 1 << 24
            left = size
            while left > 0:
                n = min(chunk, left)
                # Small floats: valid fp32 bit patterns for every 4-byte-aligned tensor in the file.
                f.write((rng.standard_normal(n // 4 + 1).astype(np.float32) * 0.02).tobytes()[:n])
                left -= n
    for loc, offset, size in zeros:
        with open(os.path.join(out_dir, loc), "r+b") as f:
            f.seek(offset)
            f.write(bytes(size))
    dst = os.path.join(out_dir, os.path.basename(src))
    onnx.save(m, dst)
    return dst


if __name__ == "__main__":
    print(materialize(sys.argv[1], sys.argv[2]))
