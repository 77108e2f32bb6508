#!/usr/bin/python3
"""Writes a graph-only LLaMA-style decoder (public/examples/llama7b_decoder.onnx) from a config, with
onnx.helper: the structure a PyTorch export of a LLaMA-7B-class model has (token embedding, per layer
RMSNorm -> q/k/v projections -> rotary embedding -> causal attention -> o projection -> residual, RMSNorm
-> SwiGLU MLP -> residual; final RMSNorm; LM head), with symbolic `batch` and `sequence` dims.

Every weight is an initializer whose data is marked external (a data file that does not exist, no
payload in the .onnx): PerfCard reads only names, shapes and dtypes, so the file is a few hundred KB
while describing ~6.7 B parameters. Node names follow the exporter's module scopes
("/model/layers.0/input_layernorm/Pow") so runtimes' fusion of decomposed modules applies.

  /usr/bin/python3 web/tools/make_decoder_example.py [--out public/examples/llama7b_decoder.onnx]
      [--hidden 4096 --layers 32 --heads 32 --intermediate 11008 --vocab 32000 --max-position 4096]
"""
import argparse
import math

import onnx
from onnx import TensorProto, helper

OPSET = 17


class Builder:
    def __init__(self):
        self.nodes, self.inits, self.count = [], [], 0

    def weight(self, name, dims, dtype=TensorProto.FLOAT):
        t = TensorProto()  # no payload: the data is external
        t.name, t.data_type = name, dtype
        t.dims.extend(dims)
        t.data_location = TensorProto.EXTERNAL
        size = math.prod(dims) * 4
        for k, v in (("location", "llama7b_decoder.onnx.weights"), ("offset", str(self.count)), ("length", str(size))):
            e = t.external_data.add()
            e.key, e.value = k, v
        self.count += size
        self.inits.append(t)
        return name

    def const(self, name, values, dtype=TensorProto.INT64):
        self.inits.append(helper.make_tensor(name, dtype, [len(values)], values))
        return name

    def scalar(self, name, value, dtype=TensorProto.FLOAT):
        self.inits.append(helper.make_tensor(name, dtype, [], [value]))
        return name

    def op(self, op_type, name, inputs, n_out=1, **attrs):
        outs = [f"{name}_output_{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=name, **attrs))
        return outs[0] if n_out == 1 else outs


def rms_norm(b, scope, x, hidden):
    w = b.weight(f"{scope[1:].replace('/', '.')}.weight", [hidden])
    p = b.op("Pow", f"{scope}/Pow", [x, "two"])
    m = b.op("ReduceMean", f"{scope}/ReduceMean", [p], axes=[-1], keepdims=1)
    a = b.op("Add", f"{scope}/Add", [m, "eps"])
    s = b.op("Sqrt", f"{scope}/Sqrt", [a])
    r = b.op("Reciprocal", f"{scope}/Reciprocal", [s])
    y = b.op("Mul", f"{scope}/Mul", [x, r])
    return b.op("Mul", f"{scope}/Mul_1", [y, w])


def linear(b, scope, x, n_in, n_out):
    w = b.weight(f"{scope[1:].replace('/', '.')}.weight", [n_in, n_out])
    return b.op("MatMul", f"{scope}/MatMul", [x, w])


def rotary(b, scope, x, cos, sin, half):
    x1 = b.op("Slice", f"{scope}/Slice", [x, "zero1", "half1", "minus1"])
    x2 = b.op("Slice", f"{scope}/Slice_1", [x, "half1", "big1", "minus1"])
    n = b.op("Neg", f"{scope}/Neg", [x2])
    rot = b.op("Concat", f"{scope}/Concat", [n, x1], axis=-1)
    a = b.op("Mul", f"{scope}/Mul", [x, cos])
    c = b.op("Mul", f"{scope}/Mul_1", [rot, sin])
    return b.op("Add", f"{scope}/Add", [a, c])


def build(hidden, layers, heads, intermediate, vocab, max_position):
    head_dim = hidden // heads
    b = Builder()
    b.scalar("two", 2.0)
    b.scalar("eps", 1e-6)
    b.scalar("inv_sqrt_d", 1.0 / math.sqrt(head_dim))
    b.const("zero1", [0])
    b.const("one1", [1])
    b.const("two1", [2])
    b.const("minus1", [-1])
    b.const("half1", [head_dim // 2])
    b.const("big1", [2**62])
    b.const("split_heads", [0, 0, heads, head_dim])
    b.const("merge_heads", [0, 0, hidden])
    b.inits.append(helper.make_tensor("neg_inf", TensorProto.FLOAT, [1], [-3.0e38]))

    ids = "input_ids"
    emb = b.weight("model.embed_tokens.weight", [vocab, hidden])
    x = b.op("Gather", "/model/embed_tokens/Gather", [emb, ids])

    # Sequence length from the input, causal mask and rotary tables sliced to it.
    shape = b.op("Shape", "/model/Shape", [ids])
    seq = b.op("Slice", "/model/Slice", [shape, "one1", "two1", "zero1"])
    ss = b.op("Concat", "/model/Concat", [seq, seq], axis=0)
    full = b.op("ConstantOfShape", "/model/ConstantOfShape", [ss],
                value=helper.make_tensor("v", TensorProto.FLOAT, [1], [-3.0e38]))
    mask = b.op("Trilu", "/model/Trilu", [full, "one_scalar"], upper=1)
    b.inits.append(helper.make_tensor("one_scalar", TensorProto.INT64, [], [1]))
    cos_cached = b.weight("model.rotary_emb.cos_cached", [max_position, head_dim])
    sin_cached = b.weight("model.rotary_emb.sin_cached", [max_position, head_dim])
    cos = b.op("Slice", "/model/rotary_emb/Slice", [cos_cached, "zero1", seq, "zero1"])
    sin = b.op("Slice", "/model/rotary_emb/Slice_1", [sin_cached, "zero1", seq, "zero1"])

    for i in range(layers):
        L = f"/model/layers.{i}"
        h = rms_norm(b, f"{L}/input_layernorm", x, hidden)
        A = f"{L}/self_attn"
        heads_of = {}
        for name in ("q", "k", "v"):
            p = linear(b, f"{A}/{name}_proj", h, hidden, hidden)
            r = b.op("Reshape", f"{A}/Reshape_{name}", [p, "split_heads"])
            heads_of[name] = b.op("Transpose", f"{A}/Transpose_{name}", [r], perm=[0, 2, 1, 3])
        q = rotary(b, f"{A}/rotary_q", heads_of["q"], cos, sin, head_dim // 2)
        k = rotary(b, f"{A}/rotary_k", heads_of["k"], cos, sin, head_dim // 2)
        kt = b.op("Transpose", f"{A}/Transpose_kt", [k], perm=[0, 1, 3, 2])
        s = b.op("MatMul", f"{A}/MatMul", [q, kt])
        s = b.op("Mul", f"{A}/Mul", [s, "inv_sqrt_d"])
        s = b.op("Add", f"{A}/Add", [s, mask])
        pr = b.op("Softmax", f"{A}/Softmax", [s], axis=-1)
        o = b.op("MatMul", f"{A}/MatMul_1", [pr, heads_of["v"]])
        o = b.op("Transpose", f"{A}/Transpose", [o], perm=[0, 2, 1, 3])
        o = b.op("Reshape", f"{A}/Reshape", [o, "merge_heads"])
        o = linear(b, f"{A}/o_proj", o, hidden, hidden)
        x = b.op("Add", f"{L}/Add", [x, o])
        h = rms_norm(b, f"{L}/post_attention_layernorm", x, hidden)
        M = f"{L}/mlp"
        g = linear(b, f"{M}/gate_proj", h, hidden, intermediate)
        sg = b.op("Sigmoid", f"{M}/act_fn/Sigmoid", [g])
        g = b.op("Mul", f"{M}/act_fn/Mul", [g, sg])
        u = linear(b, f"{M}/up_proj", h, hidden, intermediate)
        gu = b.op("Mul", f"{M}/Mul", [g, u])
        d = linear(b, f"{M}/down_proj", gu, intermediate, hidden)
        x = b.op("Add", f"{L}/Add_1", [x, d])
    x = rms_norm(b, "/model/norm", x, hidden)
    logits = linear(b, "/lm_head", x, hidden, vocab)
    b.nodes.append(helper.make_node("Identity", [logits], ["logits"], name="/Identity"))

    graph = helper.make_graph(
        b.nodes, "llama_decoder",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "sequence", vocab])],
        initializer=b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="perfcard web/tools/make_decoder_example.py")
    model.doc_string = (f"Graph-only LLaMA-style decoder: hidden {hidden}, {layers} layers, {heads} heads, "
                        f"intermediate {intermediate}, vocab {vocab}. Weights are external and not shipped.")
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="public/examples/llama7b_decoder.onnx")
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--intermediate", type=int, default=11008)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--max-position", type=int, default=4096)
    a = ap.parse_args()
    m = build(a.hidden, a.layers, a.heads, a.intermediate, a.vocab, a.max_position)
    onnx.save_model(m, a.out)
    params = sum(math.prod(t.dims) for t in m.graph.initializer if t.data_location == TensorProto.EXTERNAL)
    print(f"{a.out}: {len(m.graph.node)} nodes, {params / 1e9:.2f} B external parameters "
          f"(incl. rotary tables), {m.ByteSize()} bytes")


if __name__ == "__main__":
    main()
