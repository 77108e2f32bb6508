"""Make an exported ONNX model graph-only: weights become external-data references whose data file
is not kept, so the .onnx holds the structure (nodes, shapes, initializer names/dims/dtypes) only.

Small initializers (<= SMALL_BYTES, e.g. Reshape shape constants) stay inline: shape inference needs
their values. PerfCard loads such files without the data (payloads are never read).
"""
from __future__ import annotations

import os
import shutil
import tempfile

import onnx
from onnx import external_data_helper

SMALL_BYTES = 128  # 16 int64: any shape, axes or index constant


def strip_to_graph_only(model: onnx.ModelProto, out_path: str, small_bytes: int = SMALL_BYTES) -> None:
    """Write `model` to out_path with every initializer > small_bytes moved to an external data file,
    then delete that data file. Initializers already external (a >2 GB export) stay external."""
    out_dir = os.path.dirname(os.path.abspath(out_path)) or "."
    os.makedirs(out_dir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="perfcard_zoo_", dir=out_dir)
    try:
        base = os.path.basename(out_path)
        data_name = base + ".weights"  # referenced by the graph, never kept
        external_data_helper.convert_model_to_external_data(
            model, all_tensors_to_one_file=True, location=data_name, size_threshold=small_bytes,
            convert_attribute=True)
        tmp_model = os.path.join(tmp, base)
        onnx.save_model(model, tmp_model, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=data_name, size_threshold=small_bytes, convert_attribute=True)
        os.replace(tmp_model, out_path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # the weights file goes with the temp dir


def save(model: onnx.ModelProto, path: str) -> None:
    """Write `model` to `path` through a temporary name: a killed export never leaves a partial file, which
    the resumable exporters and the evaluations' ensure step would take for a finished one."""
    tmp = path + ".tmp"
    onnx.save_model(model, tmp)
    os.replace(tmp, path)


def load_structure(path: str) -> onnx.ModelProto:
    """Load an ONNX file without its external data (works whether or not the data file exists)."""
    return onnx.load(path, load_external_data=False)
