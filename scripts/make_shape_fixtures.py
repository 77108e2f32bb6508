#!/usr/bin/python3
"""Writes the shape-inference fixtures of tests/shape_inference_test.cpp into tests/data/shapes/.

Every fixture is a tiny .onnx file (weights inline, all fixtures together well under 200 KB):
  * tiny BERT-, GPT-2-, LLaMA-decode- (past KV cache) and ViT-style transformers exported with
    torch.onnx.export from the plain-torch modules of scripts/check_shapes.py,
  * graphs built with onnx.helper: shape-value chains, attribute-vs-input forms at opset 11 and 13,
    quantized ops, If/Loop with outer-scope values, data-dependent ops, and unknown (custom) ops.

expected.json holds the dim bindings and, per fixture, every value as onnx's own shape inference
(onnx.shape_inference.infer_shapes with data_prop=True, on a copy whose symbolic input dims are replaced
by the bound numbers) reports it: name -> [dtype, shape], the shape a list with null for a dim onnx does
not know, or null for an unknown rank. It is never produced by perfcard. Regenerate with

    /usr/bin/python3 scripts/make_shape_fixtures.py
"""
from __future__ import annotations

import io
import json
import os
import sys
import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
OUT = os.path.join(REPO, "tests", "data", "shapes")
sys.path.insert(0, HERE)

import check_shapes  # noqa: E402  (the plain-torch transformer modules and the quantized graphs)

BINDINGS = {"batch": 8, "sequence": 128, "past": 16}
DTYPES = check_shapes.DTYPE_NAMES


def const_i64(name, values):
    return numpy_helper.from_array(np.asarray(values, dtype=np.int64), name)


def model(nodes, inputs, outputs, inits=(), opset=13, extra_opsets=(), value_info=(), name="g"):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits), value_info=list(value_info))
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(g, opset_imports=ops, producer_name="make_shape_fixtures")
    m.ir_version = 8
    return m


def vi(name, t, dims):
    return helper.make_tensor_value_info(name, t, dims)


# ---------------------------------------------------------------------------------------------------
# torch exports of tiny transformers
# ---------------------------------------------------------------------------------------------------

def torch_export(mod, args, in_names, out_names, dyn, opset):
    import torch
    torch.manual_seed(0)
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(mod, args, f, opset_version=opset, input_names=in_names, output_names=out_names,
                          dynamic_axes=dyn, do_constant_folding=True)
    m = onnx.load_from_string(f.getvalue())
    check_shapes.strip_value_info(m.graph)
    m.producer_name = "make_shape_fixtures (torch.onnx.export)"
    return m


def transformers():
    import torch
    torch.manual_seed(0)
    torch.set_num_threads(1)
    T = check_shapes.transformer_modules()
    out = {}

    bert = T["Bert"](vocab=32, hidden=8, layers=1, heads=2, inter=16, max_pos=256, type_vocab=2).eval()
    ids = torch.randint(0, 32, (2, 5))
    mask = torch.ones(2, 5, dtype=torch.long)
    out["bert_tiny_op13"] = torch_export(
        bert, (ids, mask), ["input_ids", "attention_mask"], ["hidden", "pooled"],
        {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
         "hidden": {0: "batch", 1: "sequence"}, "pooled": {0: "batch"}}, 13)

    gpt2 = T["GPT2"](vocab=32, n_embd=8, n_layer=1, n_head=2, n_pos=256).eval()
    out["gpt2_tiny_op14"] = torch_export(
        gpt2, (ids,), ["input_ids"], ["logits"],
        {"input_ids": {0: "batch", 1: "sequence"}, "logits": {0: "batch", 1: "sequence"}}, 14)

    llama = T["Llama"](vocab=32, dim=8, layers=1, n_heads=2, n_kv_heads=1, hidden=16, with_past=True).eval()
    step = torch.randint(0, 32, (2, 1))
    pk, pv = torch.randn(2, 1, 3, 4), torch.randn(2, 1, 3, 4)
    out["llama_decode_tiny_op17"] = torch_export(
        llama, (step, pk, pv), ["input_ids", "past_key_0", "past_value_0"], ["logits", "present_key_0", "present_value_0"],
        {"input_ids": {0: "batch", 1: "sequence"}, "past_key_0": {0: "batch", 2: "past"},
         "past_value_0": {0: "batch", 2: "past"}, "logits": {0: "batch", 1: "sequence"},
         "present_key_0": {0: "batch", 2: "total"}, "present_value_0": {0: "batch", 2: "total"}}, 17)

    vit = T["ViT"](img=32, patch=16, dim=8, depth=1, heads=2, mlp=16, classes=4).eval()
    out["vit_tiny_op15"] = torch_export(
        vit, (torch.randn(2, 3, 32, 32),), ["pixels"], ["logits"], {"pixels": {0: "batch"}, "logits": {0: "batch"}}, 15)
    return out


# ---------------------------------------------------------------------------------------------------
# onnx.helper graphs
# ---------------------------------------------------------------------------------------------------

def chains_model():
    """Shape-value chains of exported transformer graphs, spelled out."""
    x = vi("x", TensorProto.FLOAT, ["batch", "sequence", 16])
    inits = [
        const_i64("i0", 0), const_i64("i1", 1), const_i64("ax0", [0]), const_i64("heads", [4]),
        const_i64("neg1", [-1]), const_i64("minus1_3", [-1, -1, -1]), const_i64("one", [1]),
        const_i64("zero1", [0]), const_i64("big", [np.iinfo(np.int64).max]), const_i64("two", [2]),
        const_i64("k10", [10]), const_i64("ones3", [1, 1, 1]),
        numpy_helper.from_array(np.zeros((1, 1, 16), np.float32), "cls"),
        numpy_helper.from_array(np.float32(0.5), "half"), numpy_helper.from_array(np.float32(1.0), "onef"),
        numpy_helper.from_array(np.arange(512, dtype=np.int64).reshape(1, 512), "position_ids"),
        const_i64("starts_rev", [-1]), const_i64("ends_rev", [np.iinfo(np.int64).min]), const_i64("step_rev", [-1]),
        const_i64("ax1", [1]),
    ]
    nodes = [
        # Gather of a Shape with scalar indices, Unsqueeze of the scalars, Concat with constants -> Reshape
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "i0"], ["b"], axis=0),
        helper.make_node("Gather", ["s", "i1"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["b", "ax0"], ["b1"]),
        helper.make_node("Unsqueeze", ["n", "ax0"], ["n1"]),
        helper.make_node("Concat", ["b1", "n1", "heads", "neg1"], ["split_shape"], axis=0),
        helper.make_node("Reshape", ["x", "split_shape"], ["heads4"]),
        # Expand with -1 as torch exports it: Where(Equal(shape, -1), 1, shape)
        helper.make_node("Concat", ["b1", "neg1", "neg1"], ["cls_req"], axis=0),
        helper.make_node("Equal", ["cls_req", "minus1_3"], ["is_neg"]),
        helper.make_node("Where", ["is_neg", "ones3", "cls_req"], ["cls_shape"]),
        helper.make_node("Expand", ["cls", "cls_shape"], ["cls_b"]),
        helper.make_node("Concat", ["cls_b", "x"], ["with_cls"], axis=1),
        # ConstantOfShape from a Concat of computed dims, then a mask chain
        helper.make_node("Concat", ["n1", "n1"], ["nn"], axis=0),
        helper.make_node("ConstantOfShape", ["nn"], ["mask0"],
                         value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])),
        # Range over the sequence length, int and float
        helper.make_node("Range", ["i0", "n", "i1"], ["pos"]),
        helper.make_node("Cast", ["n"], ["nf"], to=TensorProto.FLOAT),
        helper.make_node("Range", ["half", "nf", "onef"], ["posf"]),
        # Slice with an end taken from the Shape, and with INT64_MAX / INT64_MIN ends, negative step
        helper.make_node("Slice", ["position_ids", "zero1", "n1", "one"], ["pos_ids"]),
        helper.make_node("Slice", ["x", "one", "big", "ax1"], ["x_tail"]),
        helper.make_node("Slice", ["x", "starts_rev", "ends_rev", "ax1", "step_rev"], ["x_rev"]),
        # Shape with start/end (opset 15), ReduceProd of a shape, Size
        helper.make_node("Shape", ["x"], ["s_tail"], start=-2),
        helper.make_node("ReduceProd", ["s_tail"], ["tokens"], keepdims=1),
        helper.make_node("Concat", ["tokens", "neg1"], ["flat_shape"], axis=0),
        helper.make_node("Reshape", ["x", "flat_shape"], ["flat"]),
        helper.make_node("Size", ["x"], ["numel"]),
        # TopK with k = min(sequence, 10): a data-dependent-looking k that comes from shapes only
        helper.make_node("Min", ["n1", "k10"], ["k"]),
        helper.make_node("ReduceMean", ["x"], ["score"], axes=[2], keepdims=0),
        helper.make_node("TopK", ["score", "k"], ["top_v", "top_i"], axis=1),
        # Div/Mul/Sub of shape values (head dim = hidden // heads)
        helper.make_node("Gather", ["s", "two"], ["hidden1"], axis=0),
        helper.make_node("Div", ["hidden1", "heads"], ["hd"]),
        helper.make_node("Concat", ["b1", "heads", "n1", "hd"], ["bhnd"], axis=0),
        helper.make_node("Reshape", ["heads4", "bhnd"], ["q"]),
    ]
    outs = [vi(n, t, None) for n, t in [
        ("heads4", TensorProto.FLOAT), ("with_cls", TensorProto.FLOAT), ("mask0", TensorProto.FLOAT),
        ("pos", TensorProto.INT64), ("posf", TensorProto.FLOAT), ("pos_ids", TensorProto.INT64),
        ("x_tail", TensorProto.FLOAT), ("x_rev", TensorProto.FLOAT), ("flat", TensorProto.FLOAT),
        ("numel", TensorProto.INT64), ("top_v", TensorProto.FLOAT), ("top_i", TensorProto.INT64),
        ("q", TensorProto.FLOAT)]]
    return model(nodes, [x], outs, inits, opset=15)


def forms_model(opset):
    """Ops whose axes/split/sizes moved from attributes to inputs: opset 11 (attributes) or 13 (inputs)."""
    x = vi("x", TensorProto.FLOAT, ["batch", "sequence", 12])
    inits = [const_i64("ax1", [1]), const_i64("ax_last", [-1]), const_i64("split", [4, 8])]
    attr = opset < 13
    nodes = [
        helper.make_node("Unsqueeze", ["x"] + ([] if attr else ["ax1"]), ["u"], **({"axes": [1]} if attr else {})),
        helper.make_node("Squeeze", ["u"] + ([] if attr else ["ax1"]), ["sq"], **({"axes": [1]} if attr else {})),
        helper.make_node("Split", ["sq"] + ([] if attr else ["split"]), ["p1", "p2"], axis=2,
                         **({"split": [4, 8]} if attr else {})),
        helper.make_node("Split", ["x"], ["h1", "h2", "h3"], axis=2),
        helper.make_node("ReduceSum", ["x"] + ([] if attr else ["ax_last"]), ["rs"], keepdims=0,
                         **({"axes": [-1]} if attr else {})),
        helper.make_node("ReduceMax", ["x"], ["rm"], axes=[1], keepdims=1),
        helper.make_node("Softmax", ["x"], ["sm"], axis=-1),
        helper.make_node("Clip", ["x"], ["cl"]),
    ]
    outs = [vi(n, TensorProto.FLOAT, None) for n in ("p1", "p2", "h1", "h2", "h3", "rs", "rm", "sm", "cl")]
    return model(nodes, [x], outs, inits, opset=opset)


def resize_model():
    """Resize by scales and by sizes, Upsample-free (opset 13), and Pad with computed pads."""
    x = vi("x", TensorProto.FLOAT, ["batch", 3, 20, 30])
    inits = [
        numpy_helper.from_array(np.array([1, 1, 2, 0.5], np.float32), "scales"),
        const_i64("sizes", [1, 3, 7, 9]),
        const_i64("pads", [0, 0, 1, 2, 0, 0, 3, 4]),
        numpy_helper.from_array(np.array([], np.float32), "no_scales"),
    ]
    nodes = [
        helper.make_node("Resize", ["x", "", "scales"], ["by_scales"], mode="nearest"),
        helper.make_node("Shape", ["x"], ["xs"]),
        helper.make_node("Resize", ["x", "", "no_scales", "sizes"], ["by_sizes"], mode="linear"),
        helper.make_node("Pad", ["x", "pads"], ["padded"]),
        helper.make_node("GlobalAveragePool", ["x"], ["gap"]),
        helper.make_node("MaxPool", ["x"], ["mp"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
    ]
    outs = [vi(n, TensorProto.FLOAT, None) for n in ("by_scales", "by_sizes", "padded", "gap", "mp")]
    return model(nodes, [x], outs, inits, opset=13)


def control_model():
    """If with a condition computed from shapes, If with a run-time condition whose branches differ, and a
    Loop whose trip count comes from a Shape, whose body reads an outer-scope value, grows a carried tensor
    by Concat and emits a scan output."""
    x = vi("x", TensorProto.FLOAT, ["batch", 4])
    flag = vi("flag", TensorProto.BOOL, [])
    inits = [const_i64("i0", 0), numpy_helper.from_array(np.zeros((0, 4), np.float32), "empty"),
             numpy_helper.from_array(np.float32(2.0), "two_f")]
    # then: x * 2 (shape [batch, 4]); else: x[:, :2] (shape [batch, 2])
    then_g = helper.make_graph([helper.make_node("Mul", ["x", "two_f"], ["t_out"])], "then",
                               [], [vi("t_out", TensorProto.FLOAT, None)])
    sl = [const_i64("e_st", [0]), const_i64("e_en", [2]), const_i64("e_ax", [1])]
    else_g = helper.make_graph([helper.make_node("Slice", ["x", "e_st", "e_en", "e_ax"], ["e_out"])], "else",
                               [], [vi("e_out", TensorProto.FLOAT, None)], sl)
    then2 = helper.make_graph([helper.make_node("Identity", ["x"], ["t2"])], "then2", [], [vi("t2", TensorProto.FLOAT, None)])
    else2 = helper.make_graph([helper.make_node("Neg", ["x"], ["e2"])], "else2", [], [vi("e2", TensorProto.FLOAT, None)])
    body = helper.make_graph(
        [helper.make_node("Gather", ["x", "it"], ["row"], axis=0),            # outer-scope x
         helper.make_node("Unsqueeze", ["row", "b_ax0"], ["row2"]),
         helper.make_node("Concat", ["acc_in", "row2"], ["acc_out"], axis=0),
         helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Mul", ["row", "two_f"], ["scan_out"])],           # outer-scope initializer
        "body",
        [vi("it", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []), vi("acc_in", TensorProto.FLOAT, None)],
        [vi("cond_out", TensorProto.BOOL, []), vi("acc_out", TensorProto.FLOAT, None),
         vi("scan_out", TensorProto.FLOAT, None)],
        [const_i64("b_ax0", [0])])
    # a branch that only makes sense when the batch is empty: reshapes x to [0, 5]
    bad_else = helper.make_graph([helper.make_node("Reshape", ["x", "r_shape"], ["bad_out"])], "bad_else",
                                 [], [vi("bad_out", TensorProto.FLOAT, None)], [const_i64("r_shape", [0, 5])])
    nodes = [
        helper.make_node("Shape", ["x"], ["xs"]),
        helper.make_node("Gather", ["xs", "i0"], ["nb"], axis=0),
        helper.make_node("Greater", ["nb", "i0"], ["nonempty"]),
        helper.make_node("If", ["nonempty"], ["known_branch"], then_branch=then_g, else_branch=else_g),
        helper.make_node("If", ["nonempty"], ["guarded"], then_branch=then_g, else_branch=bad_else),
        helper.make_node("If", ["flag"], ["either"], then_branch=then_g, else_branch=else_g),
        helper.make_node("If", ["flag"], ["same"], then_branch=then2, else_branch=else2),
        helper.make_node("Constant", [], ["true"], value=helper.make_tensor("t", TensorProto.BOOL, [], [True])),
        helper.make_node("Loop", ["nb", "true", "empty"], ["rows", "scanned"], body=body),
    ]
    outs = [vi(n, TensorProto.FLOAT, None) for n in ("known_branch", "guarded", "either", "same", "rows", "scanned")]
    return model(nodes, [x, flag], outs, inits, opset=13)


def data_dependent_model():
    """NonZero, NonMaxSuppression and a Compress: their sizes depend on the data (upper bounds)."""
    x = vi("x", TensorProto.FLOAT, ["batch", 6])
    boxes = vi("boxes", TensorProto.FLOAT, [1, 50, 4])
    scores = vi("scores", TensorProto.FLOAT, [1, 3, 50])
    inits = [const_i64("max_out", [10]), numpy_helper.from_array(np.array([0.5], np.float32), "iou")]
    nodes = [
        helper.make_node("NonZero", ["x"], ["nz"]),
        helper.make_node("Transpose", ["nz"], ["nz_t"], perm=[1, 0]),
        helper.make_node("GatherND", ["x", "nz_t"], ["picked"]),
        helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou"], ["sel"]),
    ]
    outs = [vi("nz_t", TensorProto.INT64, None), vi("picked", TensorProto.FLOAT, None), vi("sel", TensorProto.INT64, None)]
    return model(nodes, [x, boxes, scores], outs, inits, opset=13)


def unknown_ops_model():
    """A custom op with no rule and no value_info, one described by value_info, and one inside an If body."""
    x = vi("x", TensorProto.FLOAT, ["batch", 8])
    flag = vi("flag", TensorProto.BOOL, [])
    inner = helper.make_graph([helper.make_node("Inner", ["x"], ["in_out"], domain="com.example")], "then",
                              [], [vi("in_out", TensorProto.FLOAT, None)])
    other = helper.make_graph([helper.make_node("Relu", ["x"], ["e_out"])], "else", [], [vi("e_out", TensorProto.FLOAT, None)])
    nodes = [
        helper.make_node("Frobnicate", ["x"], ["f"], domain="com.example"),
        helper.make_node("Relu", ["f"], ["after"]),
        helper.make_node("Described", ["x"], ["d"], domain="com.example"),
        helper.make_node("Relu", ["d"], ["d_relu"]),
        helper.make_node("If", ["flag"], ["branch"], then_branch=inner, else_branch=other),
    ]
    outs = [vi(n, TensorProto.FLOAT, None) for n in ("after", "d_relu", "branch")]
    return model(nodes, [x, flag], outs, opset=13, extra_opsets=[("com.example", 1)],
                 value_info=[vi("d", TensorProto.FLOAT, ["batch", 8])])


def misc_ops_model():
    """Recurrent layers, generators, DFT and a TopK whose k is read from the data (opset 17)."""
    x = vi("x", TensorProto.FLOAT, ["sequence", "batch", 16])
    xb = vi("xb", TensorProto.FLOAT, ["batch", "sequence", 16])
    sig = vi("sig", TensorProto.FLOAT, ["batch", 64, 1])
    rng = np.random.default_rng(3)
    f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    inits = [numpy_helper.from_array(f32(1, 128, 16), "lstm_w"), numpy_helper.from_array(f32(1, 128, 32), "lstm_r"),
             numpy_helper.from_array(f32(2, 96, 16), "gru_w"), numpy_helper.from_array(f32(2, 96, 32), "gru_r"),
             const_i64("win", 16), const_i64("ax_last", [-1])]
    nodes = [
        helper.make_node("LSTM", ["x", "lstm_w", "lstm_r"], ["lstm_y", "lstm_h", "lstm_c"], hidden_size=32),
        helper.make_node("GRU", ["xb", "gru_w", "gru_r"], ["gru_y", "gru_h"], hidden_size=32,
                         direction="bidirectional", layout=1),
        helper.make_node("RandomNormalLike", ["x"], ["noise"]),
        helper.make_node("DFT", ["sig"], ["spec"], onesided=1),
        helper.make_node("HannWindow", ["win"], ["window"]),
        # k from the data: the upper bound is the whole axis
        helper.make_node("ReduceMax", ["xb"], ["mx"], keepdims=0),
        helper.make_node("Cast", ["mx"], ["mx_i"], to=TensorProto.INT64),
        helper.make_node("Abs", ["mx_i"], ["k_abs"]),
        helper.make_node("Unsqueeze", ["k_abs", "ax_last"], ["k"]),
        helper.make_node("TopK", ["xb", "k"], ["top_v", "top_i"], axis=1),
    ]
    outs = [vi(n, TensorProto.FLOAT, None) for n in ("lstm_y", "lstm_h", "lstm_c", "gru_y", "gru_h", "noise", "spec",
                                                      "window", "top_v")]
    return model(nodes, [x, xb, sig], outs, inits, opset=17)


def bindings_model():
    """Symbolic dims: a named batch and sequence, and an unnamed dynamic dim."""
    a = vi("tokens", TensorProto.INT64, ["batch", "sequence"])
    b = helper.make_tensor_value_info("features", TensorProto.FLOAT, ["batch", None])  # unnamed dynamic dim
    inits = [numpy_helper.from_array(np.zeros((64, 8), np.float32), "table")]
    nodes = [helper.make_node("Gather", ["table", "tokens"], ["emb"], axis=0),
             helper.make_node("ReduceSum", ["features"], ["fsum"], keepdims=1)]
    return model(nodes, [a, b], [vi("emb", TensorProto.FLOAT, None), vi("fsum", TensorProto.FLOAT, None)], inits, opset=13)


# ---------------------------------------------------------------------------------------------------

def reference(m):
    """onnx's shape inference on a copy with bound input dims: {value name: [dtype, shape]}."""
    m = onnx.ModelProto.FromString(m.SerializeToString())
    check_shapes.strip_value_info(m.graph)
    for v in m.graph.input:
        for d in v.type.tensor_type.shape.dim:
            if d.HasField("dim_param") and d.dim_param in BINDINGS:
                d.dim_value = BINDINGS[d.dim_param]
    for v in m.graph.output:
        v.type.tensor_type.ClearField("shape")
    inf = shape_inference.infer_shapes(m, check_type=False, strict_mode=False, data_prop=True)
    out = {}

    def collect(g):
        for v in list(g.value_info) + list(g.output):
            tt = v.type.tensor_type
            shape = None
            if tt.HasField("shape"):
                shape = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
            out[v.name] = [DTYPES.get(tt.elem_type, "undefined"), shape]
        for n in g.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    collect(a.g)

    collect(inf.graph)
    return out


def graph_only(m):
    """Float weights over 64 bytes become external data whose file is not shipped: perfcard loads such
    models without the file (and needs no weight bytes), and the fixtures stay small."""
    m = onnx.ModelProto.FromString(m.SerializeToString())
    for t in m.graph.initializer:
        if t.data_type == TensorProto.FLOAT and len(t.raw_data) > 64:
            size = len(t.raw_data)
            t.ClearField("raw_data")
            t.data_location = TensorProto.EXTERNAL
            for k, v in (("location", "weights.bin"), ("offset", "0"), ("length", str(size))):
                e = t.external_data.add()
                e.key, e.value = k, v
    return m


def main():
    os.makedirs(OUT, exist_ok=True)
    fixtures = {
        "chains_op15": chains_model(),
        "forms_op11": forms_model(11),
        "forms_op13": forms_model(13),
        "resize_pad_op13": resize_model(),
        "control_op13": control_model(),
        "data_dependent_op13": data_dependent_model(),
        "unknown_ops_op13": unknown_ops_model(),
        "bindings_op13": bindings_model(),
        "misc_ops_op17": misc_ops_model(),
        "quant_conv_op13": check_shapes.quant_conv_model(13),
        "quant_matmul_op13": check_shapes.quant_matmul_model(13),
        "qdq_reshape_op13": check_shapes.qdq_model(13),
    }
    fixtures.update(transformers())
    expected = {"generated_by": "scripts/make_shape_fixtures.py: onnx " + onnx.__version__ +
                " shape_inference.infer_shapes(data_prop=True) with the bindings below",
                "bindings": BINDINGS, "models": {}}
    total = 0
    for name, m in sorted(fixtures.items()):
        path = os.path.join(OUT, name + ".onnx")
        data = graph_only(m).SerializeToString()
        with open(path, "wb") as f:
            f.write(data)
        total += len(data)
        expected["models"][name] = reference(m)
        print(f"{name + '.onnx':32} {len(data):7d} bytes, {len(expected['models'][name]):4d} values")
    with open(os.path.join(OUT, "expected.json"), "w") as f:  # one model a line
        f.write("{\"generated_by\":%s,\n\"bindings\":%s,\n\"models\":{\n" % (
            json.dumps(expected["generated_by"]), json.dumps(BINDINGS, sort_keys=True)))
        items = sorted(expected["models"].items())
        for i, (name, values) in enumerate(items):
            f.write("%s:%s%s\n" % (json.dumps(name), json.dumps(values, sort_keys=True, separators=(",", ":")),
                                   "," if i + 1 < len(items) else ""))
        f.write("}}\n")
    total += os.path.getsize(os.path.join(OUT, "expected.json"))
    print(f"total {total} bytes")
    if total > 200 * 1024:
        print("fixtures exceed 200 KB", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
