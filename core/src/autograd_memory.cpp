#include "perfcard/autograd_memory.h"

#include <algorithm>
#include <unordered_set>

#include "perfcard/caching_allocator.h"
#include "perfcard/liveness.h"
#include "perfcard/op_registry.h"

namespace perfcard {
namespace {

// What each node keeps, before the exporter's decompositions are taken back: nodes that keep nothing,
// and nodes that keep one value only (the input of the eager op the decomposition stands for).
struct Overrides {
  std::vector<bool> skip;     // by node
  std::vector<int> only;      // by node: the one value kept, or -1 for the registry's rule
  std::vector<int> stats;     // by node: a value with one element per row of a LayerNorm taken back, or -1
  FusedOps fused;             // the eager ops taken back
  int taken_back = 0;
};

class Patterns {
 public:
  // `eager`: the runtime runs the model's Python (see below).
  Patterns(const Graph& g, const std::vector<bool>& constant, bool eager) : g_(g), constant_(constant) {
    o_.skip.assign(g.nodes.size(), false);
    o_.only.assign(g.nodes.size(), -1);
    o_.stats.assign(g.nodes.size(), -1);
    o_.fused.internal.assign(g.values.size(), false);
    o_.fused.last_member.assign(g.nodes.size(), -1);
    // What the exporter computed from weights alone (a tied head's transposed embedding, say) eager never
    // makes: its Python reads the weight as it is. (A runtime that folds it keeps a weight of its own.)
    if (eager)
      for (std::size_t v = 0; v < g.values.size(); ++v)
        if (constant[v] && g.values[v].kind == ValueKind::NodeOutput) o_.fused.internal[v] = true;
  }

  Overrides find() {
    for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      if (!n.domain.empty()) continue;
      if (n.op_type == "Sigmoid" || n.op_type == "HardSigmoid") gated(i);
      else if (n.op_type == "Erf") gelu(i);
      else if (n.op_type == "Sub") layer_norm(i);
    }
    return std::move(o_);
  }

 private:
  const Graph& g_;
  const std::vector<bool>& constant_;
  Overrides o_;

  int producer(int v) const { return v < 0 ? -1 : g_.values[std::size_t(v)].producer; }
  int in(std::size_t node, std::size_t i) const {
    const Node& n = g_.nodes[node];
    return i < n.inputs().size() ? n.inputs()[i] : -1;
  }
  int out(std::size_t node) const { return g_.nodes[node].outputs().empty() ? -1 : g_.nodes[node].outputs()[0]; }
  bool is(int node, std::string_view op) const {
    return node >= 0 && g_.nodes[std::size_t(node)].domain.empty() && g_.nodes[std::size_t(node)].op_type == op;
  }
  bool is_const(int v) const { return v >= 0 && constant_[std::size_t(v)]; }
  // The only consumer of v, or -1.
  int sole_consumer(int v) const {
    if (v < 0) return -1;
    const auto& c = g_.values[std::size_t(v)].consumers;
    return c.size() == 1 ? c[0] : -1;
  }
  // The input of a binary node that is not `v`, or -1.
  int other(int node, int v) const {
    if (node < 0 || g_.nodes[std::size_t(node)].inputs().size() != 2) return -1;
    const auto& ins = g_.nodes[std::size_t(node)].inputs();
    return ins[0] == v ? ins[1] : ins[1] == v ? ins[0] : -1;
  }
  bool free(int node) const { return node >= 0 && !o_.skip[std::size_t(node)] && o_.only[std::size_t(node)] < 0; }

  // The one eager op's members: every output but the last member's, read by members only, stays inside it.
  void group(std::vector<int> members) {
    const int v = sole_consumer(out(std::size_t(members.back())));  // a trailing scale by a constant joins
    if (is(v, "Mul") && is_const(other(v, out(std::size_t(members.back()))))) members.push_back(v);
    for (std::size_t k = 0; k + 1 < members.size(); ++k) {
      const int o = out(std::size_t(members[k]));
      bool inside = o >= 0;
      for (int u : o >= 0 ? g_.values[std::size_t(o)].consumers : std::span<const int>{})
        inside = inside && std::find(members.begin(), members.end(), u) != members.end();
      for (int gout : g_.outputs) inside = inside && gout != o;
      if (inside) o_.fused.internal[std::size_t(o)] = true;
    }
    for (int k : members) o_.fused.last_member[std::size_t(k)] = members.back();
    ++o_.taken_back;
  }

  // x * Sigmoid(x) is F.silu, x * HardSigmoid(x) F.hardswish (below opset 14): each keeps x alone (the
  // pair would keep x and the gate).
  void gated(std::size_t s) {
    const int x = in(s, 0), m = sole_consumer(out(s));
    if (x < 0 || !is(m, "Mul") || other(m, out(s)) != x || !free(int(s)) || !free(m)) return;
    o_.skip[s] = true;
    o_.only[std::size_t(m)] = x;
    group({int(s), m});
  }

  // x * 0.5 * (1 + Erf(x / sqrt 2)): F.gelu, which keeps x alone.
  void gelu(std::size_t e) {
    const int d = producer(in(e, 0));
    if (!(is(d, "Div") || is(d, "Mul")) || !free(d)) return;
    const int x = in(std::size_t(d), 0);
    if (x < 0 || !is_const(in(std::size_t(d), 1))) return;
    const int a = sole_consumer(out(e));
    if (!is(a, "Add") || !is_const(other(a, out(e)))) return;
    const int m = sole_consumer(out(std::size_t(a)));
    if (!is(m, "Mul")) return;
    const int y = other(m, out(std::size_t(a)));
    const int h = producer(y);  // x * 0.5 formed first
    const bool half_first = is(h, "Mul") && other(h, x) >= 0 && is_const(other(h, x));
    if (y != x && !half_first) return;
    for (int k : {d, int(e), a}) o_.skip[std::size_t(k)] = true;
    if (half_first) o_.skip[std::size_t(h)] = true;
    o_.only[std::size_t(m)] = x;
    if (half_first) group({d, int(e), a, h, m});
    else group({d, int(e), a, m});
  }

  // (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) [* w + b]: F.layer_norm, which keeps x (and per-row
  // statistics) whatever its affine part.
  void layer_norm(std::size_t u) {
    const int x = in(u, 0), r1 = producer(in(u, 1));
    if (!is(r1, "ReduceMean") || in(std::size_t(r1), 0) != x || !free(r1)) return;
    int p = -1, v = -1;
    for (int c : g_.values[std::size_t(out(u))].consumers) {
      if (is(c, "Pow")) p = c;
      else if (is(c, "Div")) v = c;
    }
    if (p < 0 || v < 0 || g_.values[std::size_t(out(u))].consumers.size() != 2) return;
    const int r2 = sole_consumer(out(std::size_t(p)));
    const int a = r2 >= 0 && is(r2, "ReduceMean") ? sole_consumer(out(std::size_t(r2))) : -1;
    const int q = is(a, "Add") ? sole_consumer(out(std::size_t(a))) : -1;
    if (!is(q, "Sqrt") || sole_consumer(out(std::size_t(q))) != v || in(std::size_t(v), 1) != out(std::size_t(q))) return;
    std::vector<int> members{int(u), p, r2, a, q, v};
    const int w = sole_consumer(out(std::size_t(v)));  // the affine scale (its bias Add keeps nothing)
    if (is(w, "Mul") && is_const(other(w, out(std::size_t(v))))) {
      members.push_back(w);
      const int bias = sole_consumer(out(std::size_t(w)));
      if (is(bias, "Add") && is_const(other(bias, out(std::size_t(w))))) members.push_back(bias);
    }
    for (int k : members) o_.skip[std::size_t(k)] = true;
    o_.stats[std::size_t(r1)] = out(std::size_t(r1));  // the mean and 1/std per row
    members.insert(members.begin(), r1);  // r1 keeps x by its own rule (ReduceMean keeps its input)
    group(members);
  }
};

// Weights and what the runtime folds from them.
std::vector<bool> constants_of(const Graph& g, const GraphCosts& c) {
  std::vector<bool> constant(g.values.size(), false);
  for (std::size_t v = 0; v < g.values.size(); ++v) constant[v] = g.values[v].kind == ValueKind::Initializer;
  for (int ni : g.order)
    for (int v : g.nodes[std::size_t(ni)].outputs())
      if (v >= 0) constant[std::size_t(v)] = c.nodes[std::size_t(ni)].folded;
  return constant;
}

}  // namespace

GradientFlags gradient_flags(const Graph& g, const GraphShapes& s, const GraphCosts& c) {
  const std::size_t nv = g.values.size();
  GradientFlags f;
  f.grad.assign(nv, false);
  f.trainable.assign(nv, false);
  // Each edge once: a node reading one weight through many inputs costs its inputs, not their square.
  for (const Node& n : g.nodes)
    for (std::size_t i = 0; i < n.inputs().size(); ++i) {
      const int v = n.inputs()[i];
      if (v < 0 || f.trainable[std::size_t(v)] || g.values[std::size_t(v)].kind != ValueKind::Initializer) continue;
      // A one-element float constant is an exported Python scalar (the 0.5 of a GELU, an epsilon), not a weight.
      const ValueShape& vs = s.values[std::size_t(v)];
      if (!dtype_is_float(vs.dtype) || !vs.fully_known() || vs.elements() <= 1) continue;
      if (counts_as_param(n, i)) f.trainable[std::size_t(v)] = f.grad[std::size_t(v)] = true;
    }
  for (int ni : g.order) {
    const Node& n = g.nodes[std::size_t(ni)];
    const NodeCost& nc = c.nodes[std::size_t(ni)];
    bool any = false;
    for (int v : n.inputs()) any = any || (v >= 0 && f.grad[std::size_t(v)]);
    for (int v : n.outputs()) {
      if (v < 0) continue;
      f.grad[std::size_t(v)] = any && nc.cls != OpClass::Metadata && dtype_is_float(s.values[std::size_t(v)].dtype);
    }
  }
  return f;
}

FusedOps eager_ops(const Graph& g, const GraphCosts& c, bool eager) {
  return Patterns(g, constants_of(g, c), eager).find().fused;
}

WeightReaders ReadersThroughFolds::of(int v) const {
  WeightReaders r;
  std::unordered_set<int> seen;  // a node reading the weight twice (W * W) is one reader
  for (int u : g_.values[std::size_t(v)].consumers)
    if (seen.insert(u).second) read(u, 0, r);
  return r;
}

// A reader `u` of the weight (or of a fold of it) joins `r`: an op by its step, a fold by its own readers.
void ReadersThroughFolds::read(int u, int depth, WeightReaders& r) const {
  if (!c_.nodes[std::size_t(u)].folded) {
    const int step = step_of_[std::size_t(u)];
    r.last = std::max(r.last, step);
    r.first = r.first < 0 ? step : std::min(r.first, step);
    ++r.ops;
    return;
  }
  const WeightReaders f = folded(u, depth);
  if (f.ops == 0) return;
  r.last = std::max(r.last, f.last);
  r.first = r.first < 0 ? f.first : std::min(r.first, f.first);
  r.ops += f.ops;
}

// The readers of a folded node's outputs, walked once per node however many weights share it; chains of
// folds deeper than any exporter makes (a hostile file's) are followed no further.
const WeightReaders& ReadersThroughFolds::folded(int node, int depth) const {
  auto it = memo_.find(node);
  if (it != memo_.end()) return it->second;
  if (depth > kMaxFoldDepth) return memo_[node] = WeightReaders{};
  memo_[node] = WeightReaders{};  // a placeholder: folded values form no cycle, but a hostile file might
  WeightReaders r;
  std::unordered_set<int> seen;
  for (int out : g_.nodes[std::size_t(node)].outputs())
    if (out >= 0)
      for (int u : g_.values[std::size_t(out)].consumers)
        if (seen.insert(u).second) read(u, depth + 1, r);
  return memo_[node] = r;
}

AutogradMemory autograd_memory(const Graph& g, const GraphShapes& s, const GraphCosts& c, int float_bits,
                               double weight_grad_bytes, bool module_frames) {
  AutogradMemory r;
  const std::size_t nv = g.values.size(), steps = g.order.size();
  if (steps == 0) return r;
  auto bytes_of = [&](int v) -> double {
    const ValueShape& vs = s.values[std::size_t(v)];
    if (!vs.fully_known()) { r.complete = false; return 0; }
    return dtype_is_float(vs.dtype) ? double(vs.elements()) * float_bits / 8.0 : double(vs.bytes());
  };

  const std::vector<bool> constant = constants_of(g, c);
  const GradientFlags flags = gradient_flags(g, s, c);
  const std::vector<bool>& grad = flags.grad;
  const std::vector<bool>& trainable = flags.trainable;
  for (int ni : g.order)
    if (c.nodes[std::size_t(ni)].has_bodies) r.complete = false;  // bodies' saved tensors are not counted

  const Overrides o = Patterns(g, constant, module_frames).find();
  const BufferIntervals b = buffer_intervals(g, &o.fused, module_frames);
  r.eager_ops_taken_back = o.taken_back;

  // Saved buffers, by the earliest step that saves them (the backward releases them after that step's).
  std::vector<int> saver(nv, -1);
  std::vector<double> extra_from(steps + 1, 0.0);  // indices made at a step, kept to its backward
  auto keep = [&](int v, int step) {
    if (v < 0 || constant[std::size_t(v)]) return;
    const auto own = std::size_t(b.owner[std::size_t(v)]);
    if (!b.is_buffer(own)) return;
    if (saver[own] < 0 || step < saver[own]) saver[own] = step;
  };
  auto needs = [&](const Node& n, std::size_t i) { return i < n.inputs().size() && n.inputs()[i] >= 0 && grad[std::size_t(n.inputs()[i])]; };
  for (std::size_t step = 0; step < steps; ++step) {
    const auto ni = std::size_t(g.order[step]);
    const Node& n = g.nodes[ni];
    if (o.skip[ni]) continue;
    const int at = int(step);
    if (o.only[ni] >= 0) { keep(o.only[ni], at); continue; }
    if (o.stats[ni] >= 0 && s.values[std::size_t(o.stats[ni])].fully_known())
      extra_from[step] += 2.0 * double(s.values[std::size_t(o.stats[ni])].elements()) * 4;
    const OpSpec* spec = find_op(n.domain, n.op_type);
    if (!spec || spec->saved == Saved::Nothing) continue;
    auto input = [&](std::size_t i) { return i < n.inputs().size() ? n.inputs()[i] : -1; };
    bool any = false;
    for (std::size_t i = 0; i < n.inputs().size(); ++i) any = any || needs(n, i);
    if (!any) continue;
    const int out0 = n.outputs().empty() ? -1 : n.outputs()[0];
    switch (spec->saved) {
      case Saved::Nothing: break;
      case Saved::Input: keep(input(0), at); break;
      case Saved::Output: keep(out0, at); break;
      case Saved::InputAndOutput: keep(input(0), at); keep(out0, at); break;
      case Saved::Operands:
        if (n.op_type == "Einsum" || n.inputs().size() < 2) {
          for (int v : n.inputs()) keep(v, at);
        } else {
          if (needs(n, 1)) keep(input(0), at);
          if (needs(n, 0)) keep(input(1), at);
        }
        break;
      case Saved::Divisor:
        keep(input(1), at);
        if (needs(n, 1)) keep(input(0), at);
        break;
      case Saved::Normalized:
        keep(input(0), at);
        if (n.op_type == "LayerNormalization" && input(0) >= 0 && s.values[std::size_t(input(0))].fully_known()) {
          // fp32 mean and 1/std per row: the dims before `axis`
          const auto& dims = s.values[std::size_t(input(0))].dims;
          std::int64_t axis = n.attr_int("axis", -1);
          if (axis < 0) axis += std::int64_t(dims.size());
          double rows = 1;
          for (std::int64_t k = 0; k < axis && k < std::int64_t(dims.size()); ++k) rows *= double(dims[std::size_t(k)]);
          extra_from[step] += 2 * rows * 4;
        }
        break;
      case Saved::WithIndices:
        keep(input(0), at);
        if (out0 >= 0 && s.values[std::size_t(out0)].fully_known())
          extra_from[step] += double(s.values[std::size_t(out0)].elements()) * 8;  // int64 argmax
        break;
      case Saved::Indices: if (needs(n, 0)) keep(input(1), at); break;
      case Saved::DataAndIndices: if (needs(n, 0)) { keep(input(0), at); keep(input(1), at); } break;
      case Saved::Condition: keep(input(0), at); break;
    }
  }

  // Forward with autograd on: saved buffers live to the end (and the inputs, which the caller holds), the
  // rest as in a no-grad run.
  // Backward (step i taken in reverse): a saved buffer lives while i >= its earliest saver; an
  // activation's gradient from its last reader's backward to its producer's, i.e. over [first, last];
  // a weight's gradient from its last reader's backward on. Inputs and outputs live throughout.
  std::vector<double> fwd(steps + 1, 0.0), bwd(steps + 1, 0.0), wgrad(steps + 1, 0.0);
  struct Span {
    const std::vector<double>* timeline;
    int from, to;
    double bytes;
  };
  std::vector<Span> spans;  // each tensor's, to pack the ones alive at a peak into the allocator's segments
  auto span = [&spans](std::vector<double>& d, int from, int to, double x) {
    d[std::size_t(from)] += x;
    d[std::size_t(to) + 1] -= x;
    spans.push_back({&d, from, to, x});
  };
  const int end = int(steps) - 1;
  std::vector<bool> returned(nv, false);
  for (int v : g.outputs)
    if (v >= 0) returned[std::size_t(v)] = true;
  for (std::size_t v = 0; v < nv; ++v) {
    if (!b.is_buffer(v) || o.fused.internal[v]) continue;
    const double x = bytes_of(int(v));
    const bool io = g.values[v].kind == ValueKind::GraphInput || returned[v];
    if (saver[v] >= 0) r.saved_bytes += x;
    span(fwd, b.first[v], saver[v] >= 0 || g.values[v].kind == ValueKind::GraphInput ? end : b.held(v), x);
    if (io) span(bwd, 0, end, x);
    else if (saver[v] >= 0) span(bwd, saver[v], end, x);
    if (grad[v]) span(bwd, b.first[v], b.last[v], x);
  }
  for (std::size_t step = 0; step < steps; ++step) {
    r.saved_bytes += extra_from[step];
    span(fwd, int(step), end, extra_from[step]);
    span(bwd, int(step), end, extra_from[step]);
  }
  const ReadersThroughFolds readers(g, c, b.step_of);
  for (std::size_t v = 0; v < nv; ++v) {
    if (!trainable[v]) continue;
    const double n = double(s.values[v].elements());
    // The weight's readers, through what the exporter computed from it alone (a tied head reads the
    // embedding's transpose): eager reads the weight itself there, and its gradient starts at that op.
    r.weight_elements.push_back(n);
    const WeightReaders rd = readers.of(int(v));
    const int last = rd.last, first = rd.first, ops = rd.ops;
    if (last < 0) continue;
    r.weight_grad_elements += n;
    span(wgrad, 0, last, n * weight_grad_bytes);
    // A weight read by several ops (a tied embedding and head) gets a gradient from each: the last one to
    // arrive (its earliest reader's backward) exists beside the sum it is added to.
    if (ops > 1) span(wgrad, first, first, n * weight_grad_bytes);
  }
  double f = 0, a = 0, w = 0;
  int fwd_at = 0, bwd_at = 0;
  for (std::size_t i = 0; i < steps; ++i) {
    f += fwd[i];
    a += bwd[i];
    w += wgrad[i];
    if (f > r.inference_grad_peak) {
      r.inference_grad_peak = f;
      fwd_at = int(i);
    }
    if (a + w > r.backward_peak) {
      r.backward_peak = a + w;
      r.backward_peak_weight_grads = w;
      bwd_at = int(i);
    }
  }
  SegmentPacking forward, backward;
  for (const Span& sp : spans) {
    if (sp.timeline == &fwd && sp.from <= fwd_at && fwd_at <= sp.to) forward.add(sp.bytes);
    if (sp.timeline != &fwd && sp.from <= bwd_at && bwd_at <= sp.to) backward.add(sp.bytes);
  }
  r.inference_grad_reserved = forward.reserved();
  r.backward_reserved = backward.reserved();
  return r;
}

}  // namespace perfcard
