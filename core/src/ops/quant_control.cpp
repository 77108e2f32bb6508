// Shape rules for quantization ops and for control flow (If, Loop, Scan), whose bodies are inferred
// as subgraphs with the types the op hands them.
#include <algorithm>

#include "perfcard/error.h"
#include "ops/rule_util.h"
#include "ops/rules.h"

namespace perfcard::ops {

namespace {

// (De)QuantizeLinear: a 1-D scale (and zero point) is per axis and must hold one value per slice of x along
// `axis`; a scalar (or a single value) is per tensor. A 2-D or higher scale is blocked quantization (opset 21), left to the
// runtime. Checked where the sizes are known.
void check_per_axis(ShapeContext& c) {
  const ValueShape& x = c.input(0);
  for (std::size_t i : {std::size_t(1), std::size_t(2)}) {
    const ValueShape* q = c.input_if(i);
    // one value is per tensor whatever its rank (runtimes accept a [1] scale as exporters write it)
    if (!q || q->rank != 1 || x.rank < 1 || q->dims[0] < 0 || q->dims[0] == 1) continue;
    const std::int64_t axis = c.normalize_axis(c.node().attr_int("axis", 1), x.rank);
    const std::int64_t d = x.dims[std::size_t(axis)];
    if (d >= 0 && q->dims[0] != d)
      c.fail(std::string(i == 1 ? "scale" : "zero point") + " has " + std::to_string(q->dims[0]) +
             " values, but x has " + std::to_string(d) + " along axis " + std::to_string(axis));
  }
}

}  // namespace

void rule_quantize(ShapeContext& c) {
  check_per_axis(c);
  ValueShape s = like_input(c, 0);
  s.dtype = c.has_input(2) ? c.input(2).dtype : DType::UInt8;
  if (c.node().has_attr("output_dtype") && c.node().attr_int("output_dtype", 0) != 0)
    s.dtype = DType(c.node().attr_int("output_dtype", 2));
  c.set_output(0, std::move(s));
}

void rule_dequantize(ShapeContext& c) {
  check_per_axis(c);
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
  const Graph& then_g = body(c, "then_branch");
  const Graph& else_g = body(c, "else_branch");
  // A condition computed from shapes (exported graphs test "numel == 0" and the like) picks its branch.
  // The other branch never runs with these shapes: it is inferred only to report its unknown ops (a
  // contradiction found in it is a warning, not an error), then dropped so that costs skip it.
  std::vector<std::int64_t> cond;
  if (c.input_ints(0, cond) && cond.size() == 1) {
    bool take_then = cond[0] != 0;
    auto taken = c.run_subgraph(take_then ? then_g : else_g, {});
    try {
      c.run_subgraph(take_then ? else_g : then_g, {});  // its unknown ops are still reported
    } catch (const Error& e) {
      c.warn(std::string("the ") + (take_then ? "else" : "then") + " branch, which these shapes never take, cannot be inferred: " +
             e.message());
    }
    c.discard_subgraph(take_then ? else_g : then_g);  // costs count the branch that runs
    for (std::size_t i = 0; i < taken.size(); ++i) c.set_output(i, taken[i]);
    return;
  }
  auto then_out = c.run_subgraph(then_g, {});
  auto else_out = c.run_subgraph(else_g, {});
  if (then_out.size() != else_out.size()) c.fail("If branches return different numbers of outputs");
  // Otherwise each dim the branches disagree on takes the larger size, marked as an estimate.
  bool estimated = false;
  for (std::size_t i = 0; i < then_out.size(); ++i) {
    const ValueShape &a = then_out[i], &b = else_out[i];
    ValueShape s = merge(a, b);
    if (a.rank >= 0 && a.rank == b.rank) {
      for (std::size_t k = 0; k < s.dims.size(); ++k) {
        if (a.dims[k] >= 0 && b.dims[k] >= 0 && a.dims[k] != b.dims[k]) {
          s.dims[k] = std::max(a.dims[k], b.dims[k]);
          s.estimated = estimated = true;
        }
      }
    }
    if (a.value && b.value && a.fully_known() && a.dims == b.dims && a.value->is_float == b.value->is_float &&
        a.value->ints == b.value->ints && a.value->floats == b.value->floats)
      s.value = a.value;
    c.set_output(i, std::move(s));
  }
  if (estimated)
    c.warn("If condition is not known before running and its branches produce different sizes; using the larger");
}

void rule_loop(ShapeContext& c) {
  const Graph& g = body(c, "body");
  std::vector<std::int64_t> m;
  std::int64_t trips = c.has_input(0) && c.input_ints(0, m) && m.size() == 1 ? m[0] : -1;
  if (trips > kMaxTrips) trips = -1;
  bool trips_estimated = trips >= 0 && c.input(0).estimated;
  std::vector<std::int64_t> cond0;
  bool cond_true = !c.has_input(1) || (c.input_ints(1, cond0) && cond0.size() == 1 && cond0[0] != 0);
  std::vector<ValueShape> ins = {ValueShape::of(DType::Int64, {}), ValueShape::of(DType::Bool, {})};
  std::size_t carried = c.num_inputs() >= 2 ? c.num_inputs() - 2 : 0;
  for (std::size_t i = 0; i < carried; ++i) {
    ValueShape s = c.input(2 + i);
    s.value.reset();
    ins.push_back(std::move(s));
  }
  auto outs = c.run_subgraph(g, ins);
  if (outs.size() < 1 + carried) c.fail("Loop body returns fewer outputs than loop-carried values");
  // The body may stop the loop early unless its condition output is a known true: then M is an upper bound.
  bool body_cond_true = outs[0].value && outs[0].value->size() == 1 &&
                        (outs[0].value->is_float ? outs[0].value->floats[0] != 0 : outs[0].value->ints[0] != 0);
  if (trips >= 0 && !(cond_true && body_cond_true)) trips_estimated = true;

  // Loop-carried values that grow every iteration (torch's list append becomes a Concat onto a carried
  // tensor): a second pass over the body with the grown types tells whether the growth is linear, and
  // the final size is then initial + trips * growth.
  bool changes = false;
  for (std::size_t i = 0; i < carried; ++i) {
    const ValueShape &a = ins[2 + i], &b = outs[1 + i];
    changes |= a.rank >= 0 && a.rank == b.rank && a.dims != b.dims;
  }
  std::vector<ValueShape> outs2;
  if (changes && !c.may_rerun(g)) {
    changes = false;
    c.warn("Loop-carried values change size every iteration, but a second pass over the body to tell how "
           "would exceed the inference budget (nested growing loops): their sizes stay unknown");
  }
  if (changes) {
    std::vector<ValueShape> ins2 = ins;
    for (std::size_t i = 0; i < carried; ++i) {
      ins2[2 + i] = outs[1 + i];
      ins2[2 + i].value.reset();
    }
    outs2 = c.run_subgraph(g, ins2);
    if (outs2.size() != outs.size()) c.fail("Loop body returns a varying number of outputs");
  }
  bool grown = false;
  for (std::size_t i = 0; i < carried; ++i) {
    const ValueShape &a = ins[2 + i], &b = outs[1 + i];
    ValueShape s = merge(b, a);
    s.estimated = a.estimated || b.estimated;
    if (changes && s.rank >= 0) {
      const ValueShape& b2 = outs2[1 + i];
      for (std::size_t k = 0; k < s.dims.size(); ++k) {
        if (a.dims[k] < 0 || b.dims[k] < 0 || a.dims[k] == b.dims[k]) continue;
        std::int64_t step = b.dims[k] - a.dims[k];
        bool linear = b2.rank == b.rank && b2.dims[k] >= 0 && b2.dims[k] - b.dims[k] == step;
        if (linear && trips >= 0 && step > 0) {
          s.dims[k] = sat_add(a.dims[k], sat_mul(trips, step));  // absurd sizes fail the output check
          s.estimated |= trips_estimated;
          grown = true;
        }
      }
    }
    c.set_output(i, std::move(s));
  }
  if (grown)
    c.warn("Loop-carried values grow every iteration; their final size is initial + trip count x growth" +
           std::string(trips_estimated ? " (an upper bound: the trip count depends on the data)" : ""));
  if (trips < 0)
    c.warn(std::string("Loop trip count is not known before running: its body is costed once, per iteration") +
           (outs.size() > 1 + carried ? "; scan outputs keep an unknown leading dim" : ""));
  else if (trips_estimated && trips > 0)
    c.warn("Loop trip count " + std::to_string(trips) +
           " is an upper bound (the loop may stop sooner on a condition that depends on the data): its cost counts every iteration");
  for (std::size_t k = 1 + carried; k < outs.size(); ++k) {
    ValueShape s = outs[k];
    s.value.reset();
    if (s.rank >= 0) {
      s.dims.insert(s.dims.begin(), trips);
      s.rank += 1;
      s.estimated |= trips_estimated;
    }
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
      const std::int64_t len = s.dims[std::size_t(ax)];
      if (len >= 0 && length >= 0 && len != length)
        c.fail("Scan inputs have different lengths along their scan axes: " + std::to_string(length) + " and " +
               std::to_string(len) + " (scan input " + std::to_string(k) + ")");
      if (len >= 0) length = len;
      s.dims.erase(s.dims.begin() + ax);
      s.rank -= 1;
    }
    ins.push_back(std::move(s));
  }
  auto outs = c.run_subgraph(g, ins);
  if (length < 0) c.warn("Scan length is not known before running: its body is costed once, per iteration");
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

// Loop: the body runs M times when M is known (a constant, or folded from shapes). A body condition that
// can stop it sooner makes M an upper bound, which rule_loop says. INT64_MAX or no M: a while loop, whose
// count is not known before running.
void cost_loop(const CostContext& c, double, NodeCost& out) {
  out.trips_known = false;
  const ValueShape& m = c.input(0);
  if (m.value && !m.value->is_float && m.value->ints.size() == 1 && m.value->ints[0] >= 0 &&
      m.value->ints[0] <= kMaxTrips) {
    out.trips = double(m.value->ints[0]);
    out.trips_known = true;
  }
}

// Scan: the body runs once per slice of the scan inputs along their scan axis.
void cost_scan(const CostContext& c, double, NodeCost& out) {
  out.trips_known = false;
  std::int64_t n_scan = c.node().attr_int("num_scan_inputs", 0);
  if (n_scan <= 0 || std::size_t(n_scan) > c.num_inputs()) return;
  const std::size_t first = c.num_inputs() - std::size_t(n_scan);
  const ValueShape& x = c.input(first);
  std::vector<std::int64_t> axes = c.node().attr_ints("scan_input_axes");
  std::int64_t ax = axes.empty() ? 0 : axes[0];
  if (x.rank <= 0 || ax < -x.rank || ax >= x.rank) return;
  std::int64_t len = x.dims[std::size_t(ax < 0 ? ax + x.rank : ax)];
  if (len < 0) return;
  out.trips = double(len);
  out.trips_known = true;
}

}  // namespace perfcard::ops
