// Shape rules for quantization ops and for control flow (If, Loop, Scan), whose bodies are inferred
// as subgraphs with the types the op hands them.
#include "ops/rule_util.h"
#include "ops/rules.h"

namespace perfcard::ops {

void rule_quantize(ShapeContext& c) {
  ValueShape s = like_input(c, 0);
  s.dtype = c.has_input(2) ? c.input(2).dtype : DType::UInt8;
  if (c.node().has_attr("output_dtype") && c.node().attr_int("output_dtype", 0) != 0)
    s.dtype = DType(c.node().attr_int("output_dtype", 2));
  c.set_output(0, std::move(s));
}

void rule_dequantize(ShapeContext& c) {
  ValueShape s = like_input(c, 0);
  s.dtype = c.input(1).dtype;
  c.set_output(0, std::move(s));
}

void rule_dynamic_quantize(ShapeContext& c) {
  ValueShape s = like_input(c, 0);
  s.dtype = DType::UInt8;
  c.set_output(0, std::move(s));
  c.set_output(1, ValueShape::of(DType::Float, {}));
  c.set_output(2, ValueShape::of(DType::UInt8, {}));
}

// com.microsoft QLinearAdd/QLinearMul: (A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp).
void rule_qlinear_binary(ShapeContext& c) {
  const ValueShape& a = c.input(0);
  const ValueShape& b = c.input(3);
  ValueShape s;
  s.dtype = a.dtype;
  if (a.rank >= 0 && b.rank >= 0) s = ValueShape::of(a.dtype, broadcast(c, a.dims, b.dims));
  c.set_output(0, std::move(s));
}

namespace {

ValueShape merge(const ValueShape& a, const ValueShape& b) {
  if (a.rank != b.rank || a.rank < 0) return ValueShape{a.dtype != DType::Undefined ? a.dtype : b.dtype, -1, {}, nullptr, false};
  ValueShape s = ValueShape::of(a.dtype, a.dims);
  for (std::size_t i = 0; i < s.dims.size(); ++i)
    if (a.dims[i] != b.dims[i]) s.dims[i] = -1;
  s.estimated = a.estimated || b.estimated;
  return s;
}

const Graph& body(ShapeContext& c, const char* name) {
  const Attribute* a = c.node().attr(name);
  if (!a || a->graphs.empty()) c.fail(std::string("missing graph attribute '") + name + "'");
  return a->graphs[0];
}

}  // namespace

void rule_if(ShapeContext& c) {
  auto then_out = c.run_subgraph(body(c, "then_branch"), {});
  auto else_out = c.run_subgraph(body(c, "else_branch"), {});
  if (then_out.size() != else_out.size()) c.fail("If branches return different numbers of outputs");
  for (std::size_t i = 0; i < then_out.size(); ++i) c.set_output(i, merge(then_out[i], else_out[i]));
}

void rule_loop(ShapeContext& c) {
  const Graph& g = body(c, "body");
  std::vector<std::int64_t> m;
  std::int64_t trips = c.has_input(0) && c.input_ints(0, m) && m.size() == 1 ? m[0] : -1;
  std::vector<ValueShape> ins = {ValueShape::of(DType::Int64, {}), ValueShape::of(DType::Bool, {})};
  std::size_t carried = c.num_inputs() >= 2 ? c.num_inputs() - 2 : 0;
  for (std::size_t i = 0; i < carried; ++i) {
    ValueShape s = c.input(2 + i);
    s.value.reset();
    ins.push_back(std::move(s));
  }
  auto outs = c.run_subgraph(g, ins);
  if (outs.size() < 1 + carried) c.fail("Loop body returns fewer outputs than loop-carried values");
  for (std::size_t i = 0; i < carried; ++i) c.set_output(i, merge(outs[1 + i], ins[2 + i]));
  if (trips < 0 && outs.size() > 1 + carried)
    c.warn("Loop trip count is not known before running; scan outputs keep an unknown leading dim");
  for (std::size_t k = 1 + carried; k < outs.size(); ++k) {
    ValueShape s = outs[k];
    s.value.reset();
    if (s.rank >= 0) { s.dims.insert(s.dims.begin(), trips); s.rank += 1; }
    c.set_output(carried + (k - 1 - carried), std::move(s));
  }
}

void rule_scan(ShapeContext& c) {
  const Graph& g = body(c, "body");
  std::int64_t n_scan = c.node().attr_int("num_scan_inputs", 0);
  if (n_scan <= 0 || std::size_t(n_scan) > c.num_inputs()) c.fail("Scan num_scan_inputs is out of range");
  std::size_t n_state = c.num_inputs() - std::size_t(n_scan);
  std::vector<std::int64_t> in_axes = c.node().attr_ints("scan_input_axes");
  std::vector<std::int64_t> out_axes = c.node().attr_ints("scan_output_axes");
  std::vector<ValueShape> ins;
  std::int64_t length = -1;
  for (std::size_t i = 0; i < c.num_inputs(); ++i) {
    ValueShape s = c.input(i);
    s.value.reset();
    if (i >= n_state && s.rank >= 0) {
      std::size_t k = i - n_state;
      std::int64_t ax = c.normalize_axis(k < in_axes.size() ? in_axes[k] : 0, s.rank);
      length = s.dims[std::size_t(ax)];
      s.dims.erase(s.dims.begin() + ax);
      s.rank -= 1;
    }
    ins.push_back(std::move(s));
  }
  auto outs = c.run_subgraph(g, ins);
  for (std::size_t i = 0; i < outs.size(); ++i) {
    ValueShape s = outs[i];
    s.value.reset();
    if (i >= n_state && s.rank >= 0) {
      std::size_t k = i - n_state;
      std::int64_t ax = k < out_axes.size() ? out_axes[k] : 0;
      if (ax < 0) ax += s.rank + 1;
      if (ax < 0 || ax > s.rank) c.fail("Scan output axis out of range");
      s.dims.insert(s.dims.begin() + ax, length);
      s.rank += 1;
    }
    c.set_output(i, std::move(s));
  }
}

}  // namespace perfcard::ops
