#include "perfcard/liveness.h"

#include <algorithm>
#include <numeric>
#include <string_view>
#include <unordered_map>

#include "perfcard/caching_allocator.h"
#include "perfcard/op_registry.h"

namespace perfcard {

namespace {

// The module scope of an exporter's node name: "/layer1/layer1.0/conv1/Conv" -> "/layer1/layer1.0/conv1";
// "" for names without one.
std::string_view module_scope(std::string_view name) {
  if (name.size() < 2 || name[0] != '/') return {};
  const auto p = name.rfind('/');
  return p == 0 ? std::string_view() : name.substr(0, p);
}

constexpr int kMaxScopeDepth = 64;  // deeper scopes are taken at this depth (a hostile name costs linear time)

// The outermost module a consumer at scope `to` is inside of that does not hold the producer at scope
// `from`: `to` cut after the first component where the two paths part; "" when `to` lies within `from`.
std::string_view entered_module(std::string_view from, std::string_view to) {
  std::size_t i = 0;
  for (int depth = 0; i < to.size() && depth < kMaxScopeDepth; ++depth) {
    std::size_t next = to.find('/', i + 1);
    if (next == std::string_view::npos) next = to.size();
    const std::string_view prefix = to.substr(0, next);
    const bool inside = from.size() >= prefix.size() && from.substr(0, prefix.size()) == prefix &&
                        (from.size() == prefix.size() || from[prefix.size()] == '/');
    if (!inside) return prefix;
    i = next;
  }
  return {};
}

// held[v] = max(last[v], the last step of each module v is passed into): see BufferIntervals.
void hold_module_arguments(const Graph& g, BufferIntervals& b) {
  std::unordered_map<std::string_view, int> end;  // module scope -> its last step
  for (std::size_t i = 0; i < g.order.size(); ++i) {
    const std::string_view scope = module_scope(g.nodes[std::size_t(g.order[i])].name);
    std::size_t at = 0;
    for (int depth = 0; at < scope.size() && depth < kMaxScopeDepth; ++depth) {
      std::size_t next = scope.find('/', at + 1);
      if (next == std::string_view::npos) next = scope.size();
      end[scope.substr(0, next)] = int(i);
      at = next;
    }
  }
  if (end.empty()) return;
  for (std::size_t v = 0; v < g.values.size(); ++v) {
    const Value& val = g.values[v];
    if (val.kind != ValueKind::NodeOutput || val.producer < 0) continue;
    const auto o = std::size_t(b.owner[v]);
    if (!b.is_buffer(o)) continue;
    const std::string_view from = module_scope(g.nodes[std::size_t(val.producer)].name);
    for (int u : val.consumers) {
      const std::string_view module = entered_module(from, module_scope(g.nodes[std::size_t(u)].name));
      if (module.empty()) continue;
      const auto it = end.find(module);
      if (it != end.end()) b.held[o] = std::max(b.held[o], it->second);
    }
  }
}

}  // namespace

BufferIntervals buffer_intervals(const Graph& g, const FusedOps* fused, bool module_frames) {
  BufferIntervals b;
  const std::size_t nv = g.values.size(), steps = g.order.size();
  b.step_of.assign(g.nodes.size(), 0);
  for (std::size_t i = 0; i < steps; ++i) b.step_of[std::size_t(g.order[i])] = int(i);
  b.owner.resize(nv);
  std::iota(b.owner.begin(), b.owner.end(), 0);
  for (int ni : g.order) {
    const Node& n = g.nodes[std::size_t(ni)];
    const OpSpec* spec = find_op(n.domain, n.op_type);
    if (!spec || spec->cls != OpClass::View || n.inputs.empty() || n.inputs[0] < 0) continue;
    for (int o : n.outputs)
      if (o >= 0) b.owner[std::size_t(o)] = b.owner[std::size_t(n.inputs[0])];
  }
  b.first.assign(nv, -1);
  b.last.assign(nv, -1);
  for (std::size_t v = 0; v < nv; ++v) {
    const Value& val = g.values[v];
    if (val.kind == ValueKind::GraphInput) b.first[v] = b.last[v] = 0;
    if (val.kind == ValueKind::NodeOutput && val.producer >= 0 && b.owner[v] == int(v))
      b.first[v] = b.last[v] = b.step_of[std::size_t(val.producer)];
  }
  auto touch = [&b](int v, int step) {
    const auto o = std::size_t(b.owner[std::size_t(v)]);
    if (b.first[o] >= 0 && step > b.last[o]) b.last[o] = step;
  };
  for (std::size_t i = 0; i < steps; ++i) {
    const auto ni = std::size_t(g.order[i]);
    const int end = fused && fused->last_member[ni] >= 0 ? b.step_of[std::size_t(fused->last_member[ni])] : int(i);
    for (int v : g.nodes[ni].inputs)
      if (v >= 0) touch(v, std::max(end, int(i)));
  }
  for (int v : g.outputs) touch(v, int(steps) - 1);
  b.held = b.last;
  if (module_frames) hold_module_arguments(g, b);
  return b;
}

LivenessResult peak_live_memory(const Graph& g, const GraphShapes& s, int float_bits, bool inputs_held,
                                const FusedOps* fused, bool module_frames) {
  auto size_of = [float_bits](const ValueShape& v) {
    if (float_bits > 0 && dtype_is_float(v.dtype)) return (v.elements() * std::uint64_t(float_bits) + 7) / 8;
    return v.bytes();
  };
  LivenessResult r;
  const std::size_t nv = g.values.size(), steps = g.order.size();
  const BufferIntervals buffers = buffer_intervals(g, fused, module_frames);
  const std::vector<int>& first = buffers.first;
  const std::vector<int>& last = buffers.held;

  std::vector<double> delta(steps + 2, 0.0);  // +2: a graph without nodes still has step 0 for its inputs
  auto add = [&r](std::uint64_t& total, std::uint64_t b) {
    if (total > UINT64_MAX - b) { total = UINT64_MAX; r.saturated = true; }
    else total += b;
  };
  for (std::size_t v = 0; v < nv; ++v) {
    if (!buffers.is_buffer(v) || (fused && fused->internal[v])) continue;
    const ValueShape& vs = s.values[v];
    if (!vs.fully_known()) { r.complete = false; continue; }
    double b = double(size_of(vs));
    const bool held = inputs_held && g.values[v].kind == ValueKind::GraphInput;
    delta[std::size_t(first[v])] += b;
    delta[std::size_t(held ? std::max<std::ptrdiff_t>(std::ptrdiff_t(steps) - 1, 0) : last[v]) + 1] -= b;
    if (g.values[v].kind == ValueKind::GraphInput) add(r.input_bytes, size_of(vs));
  }
  for (int v : g.outputs)
    if (s.values[std::size_t(v)].fully_known()) add(r.output_bytes, size_of(s.values[std::size_t(v)]));
  // While a control-flow node runs, its bodies' buffers are alive on top of everything live around it:
  // the largest body peak (a Loop reuses one iteration's buffers for the next; what it accumulates is in
  // its outputs, counted already). Branches are taken at their larger peak: an upper bound.
  std::vector<double> inside(steps, 0.0);
  for (std::size_t i = 0; i < steps; ++i) {
    const std::size_t ni = std::size_t(g.order[i]);
    const Node& n = g.nodes[ni];
    std::size_t k = 0;
    for (const auto& a : n.attributes)
      for (const auto& body : a.graphs) {
        if (k < s.subgraphs[ni].size() && !s.subgraphs[ni][k].values.empty()) {
          LivenessResult b = peak_live_memory(body, s.subgraphs[ni][k], float_bits);  // a body's inputs are the loop's
          inside[i] = std::max(inside[i], double(b.peak_bytes));
          r.complete = r.complete && b.complete;
          r.saturated = r.saturated || b.saturated;
        }
        ++k;
      }
  }
  double live = 0;
  for (std::size_t i = 0; i < steps; ++i) {
    live += delta[i];
    const double at = live + inside[i];
    if (at > double(r.peak_bytes)) {  // saturates: a sum of huge buffers can pass 2^64 bytes
      r.peak_bytes = at >= 18446744073709551615.0 ? UINT64_MAX : std::uint64_t(at);
      if (at >= 18446744073709551615.0) r.saturated = true;
      r.peak_step = int(i);
    }
  }
  if (r.peak_step >= 0) {
    SegmentPacking packing;
    const int at = r.peak_step;
    for (std::size_t v = 0; v < nv; ++v) {
      if (!buffers.is_buffer(v) || (fused && fused->internal[v]) || !s.values[v].fully_known()) continue;
      const bool held = inputs_held && g.values[v].kind == ValueKind::GraphInput;
      if (first[v] <= at && (held || last[v] >= at)) packing.add(double(size_of(s.values[v])));
    }
    packing.add(inside[std::size_t(at)]);
    r.peak_reserved = packing.reserved();
  }
  return r;
}

}  // namespace perfcard
