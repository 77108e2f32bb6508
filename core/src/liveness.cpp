#include "perfcard/liveness.h"

#include <algorithm>
#include <numeric>
#include <string_view>
#include <unordered_map>

#include "perfcard/caching_allocator.h"
#include "perfcard/op_registry.h"

namespace perfcard {

namespace {


constexpr int kMaxScopeDepth = 64;  // deeper scopes are taken at this depth (a hostile name costs linear time)

// Every module scope the nodes' names mention, as a tree of ids (0: the graph itself), built in one pass
// over each name: a component is hashed once, with its parent's id.
class ScopeTree {
 public:
  explicit ScopeTree(const Graph& g) : of_node_(g.nodes.size(), 0) {
    parent_.push_back(0);
    depth_.push_back(0);
    for (std::size_t n = 0; n < g.nodes.size(); ++n) {
      const std::string_view scope = module_scope(g.nodes[n].name);
      int id = 0;
      std::size_t at = !scope.empty() && scope[0] == '/' ? 1 : 0;  // components between the slashes
      for (int d = 0; at < scope.size() && d < kMaxScopeDepth; ++d) {
        std::size_t next = scope.find('/', at);
        if (next == std::string_view::npos) next = scope.size();
        id = child(id, scope.substr(at, next - at));
        at = next + 1;
      }
      of_node_[n] = id;
    }
    end_.assign(parent_.size(), -1);
  }
  int of_node(std::size_t n) const { return of_node_[n]; }
  bool empty() const { return parent_.size() == 1; }
  // A node at `step` runs inside its scope and every scope around it.
  void ran(int scope, int step) {
    for (int id = scope; id != 0 && end_[std::size_t(id)] < step; id = parent_[std::size_t(id)]) end_[std::size_t(id)] = step;
  }
  int end(int scope) const { return end_[std::size_t(scope)]; }
  // The outermost module a consumer in `to` is inside of that does not hold the producer in `from` (the
  // child of their common ancestor on `to`'s side), or 0 when `to` lies within `from`.
  int entered(int from, int to) const {
    int a = from, b = to, below = 0;
    while (depth_[std::size_t(a)] > depth_[std::size_t(b)]) a = parent_[std::size_t(a)];
    while (depth_[std::size_t(b)] > depth_[std::size_t(a)]) below = b, b = parent_[std::size_t(b)];
    while (a != b) a = parent_[std::size_t(a)], below = b, b = parent_[std::size_t(b)];
    return below;
  }

 private:
  struct Key {
    int parent;
    std::string_view name;
    bool operator==(const Key& o) const { return parent == o.parent && name == o.name; }
  };
  struct Hash {
    std::size_t operator()(const Key& k) const { return std::hash<std::string_view>()(k.name) ^ (std::size_t(k.parent) * 0x9e3779b97f4a7c15ull); }
  };
  std::unordered_map<Key, int, Hash> ids_;
  std::vector<int> parent_, depth_, end_, of_node_;

  int child(int parent, std::string_view name) {
    auto [it, fresh] = ids_.emplace(Key{parent, name}, int(parent_.size()));
    if (fresh) {
      parent_.push_back(parent);
      depth_.push_back(depth_[std::size_t(parent)] + 1);
    }
    return it->second;
  }
};

// held(v) = max(last[v], the last step of each module v is passed into): see BufferIntervals.
void hold_module_arguments(const Graph& g, BufferIntervals& b) {
  ScopeTree scopes(g);
  if (scopes.empty()) return;
  b.held_later = b.last;
  for (std::size_t i = 0; i < g.order.size(); ++i) {
    const auto n = std::size_t(g.order[i]);
    scopes.ran(scopes.of_node(n), int(i));
  }
  for (std::size_t v = 0; v < g.values.size(); ++v) {
    const Value& val = g.values[v];
    if (val.kind != ValueKind::NodeOutput || val.producer < 0) continue;
    const auto o = std::size_t(b.owner[v]);
    if (!b.is_buffer(o)) continue;
    const int from = scopes.of_node(std::size_t(val.producer));
    for (int u : val.consumers) {
      const int module = scopes.entered(from, scopes.of_node(std::size_t(u)));
      if (module != 0) b.held_later[o] = std::max(b.held_later[o], scopes.end(module));
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
    if (!spec || spec->cls != OpClass::View || n.inputs().empty() || n.inputs()[0] < 0) continue;
    for (int o : n.outputs())
      if (o >= 0) b.owner[std::size_t(o)] = b.owner[std::size_t(n.inputs()[0])];
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
    for (int v : g.nodes[ni].inputs())
      if (v >= 0) touch(v, std::max(end, int(i)));
  }
  for (int v : g.outputs) touch(v, int(steps) - 1);
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
  BufferIntervals buffers = buffer_intervals(g, fused, module_frames);
  // Only where buffers start and how long they are held is read past here, and a million-node graph's peak
  // falls here: the rest goes.
  if (!buffers.held_later.empty()) buffers.last = std::move(buffers.held_later);
  std::vector<int>().swap(buffers.owner);
  std::vector<int>().swap(buffers.step_of);
  const std::vector<int>& first = buffers.first;
  const std::vector<int>& last = buffers.last;

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
  std::vector<double> inside;  // by step, made at the first node with a body
  for (std::size_t i = 0; i < steps; ++i) {
    const std::size_t ni = std::size_t(g.order[i]);
    const Node& n = g.nodes[ni];
    std::size_t k = 0;
    for (const auto& a : n.attributes)
      for (const auto& body : a.graphs) {
        if (k < s.subgraphs[ni].size() && !s.subgraphs[ni][k].values.empty()) {
          LivenessResult b = peak_live_memory(body, s.subgraphs[ni][k], float_bits);  // a body's inputs are the loop's
          if (inside.empty()) inside.assign(steps, 0.0);
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
    const double at = live + (inside.empty() ? 0.0 : inside[i]);
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
    if (!inside.empty()) packing.add(inside[std::size_t(at)]);
    r.peak_reserved = packing.reserved();
  }
  return r;
}

}  // namespace perfcard
