#include "perfcard/cost.h"

#include <set>

#include "perfcard/op_registry.h"

namespace perfcard {

bool counts_as_param(const Node& n, std::size_t input) {
  return !(n.op_type == "BatchNormalization" && input >= 3);
}

namespace {

bool is_param_dtype(DType t) {
  return dtype_is_float(t) || t == DType::Int8 || t == DType::UInt8 || t == DType::Int4 || t == DType::UInt4;
}

GraphCosts costs_of(const Graph& g, const GraphShapes& s) {
  GraphCosts gc;
  gc.nodes.resize(g.nodes.size());
  NodeCoster coster(g, s);
  std::vector<GraphCosts> bodies;
  for (int ni : g.order) {
    gc.nodes[std::size_t(ni)] = coster.next(ni, bodies);
    if (!bodies.empty()) gc.subgraphs.of(std::size_t(ni)) = std::move(bodies);
  }
  return gc;
}

double body_flops(const GraphCosts& x) {
  double f = 0;
  for (const auto& nc : x.nodes) f += nc.flops;
  return f;
}

}  // namespace

GraphCosts compute_costs(const Graph& graph, const GraphShapes& shapes) { return costs_of(graph, shapes); }

NodeCoster::NodeCoster(const Graph& graph, const GraphShapes& shapes)
    : g_(graph), s_(shapes), seen_weight_(graph.values.size(), false) {}

NodeCost NodeCoster::next(int ni, std::vector<GraphCosts>& bodies) {
  const Graph& g = g_;
  const GraphShapes& s = s_;
  bodies.clear();
  NodeCost c;
  {
    const Node& n = g.nodes[std::size_t(ni)];
    const OpSpec* spec = find_op(n.domain, n.op_type);
    c.cls = spec ? spec->cls : OpClass::Other;
    c.known = spec != nullptr && s.status[std::size_t(ni)] == NodeStatus::Inferred;
    // The rule first: it may say that an input is read only in part.
    if (spec) {
      CostContext ctx(n, s.values);
      spec->cost(ctx, spec->flops_per_element, c);
    }
    const bool moves_data = c.cls != OpClass::View && c.cls != OpClass::Metadata;
    bool all_const = true;
    for (std::size_t i = 0; i < n.inputs().size(); ++i) {
      int v = n.inputs()[i];
      if (v < 0) continue;
      const ValueShape& vs = s.values[std::size_t(v)];
      const Value& val = g.values[std::size_t(v)];
      if (!vs.fully_known()) c.known = false;
      if (!vs.value && val.kind != ValueKind::Initializer) all_const = false;
      if (moves_data)
        c.bytes_read += int(i) == c.partial_input ? read_elements(c, i, vs) * double(dtype_bits(vs.dtype)) / 8.0
                                                 : double(vs.bytes());
      if (val.kind == ValueKind::Initializer && counts_as_param(n, i) && is_param_dtype(vs.dtype) &&
          !seen_weight_[std::size_t(v)]) {
        seen_weight_[std::size_t(v)] = true;
        c.params += vs.elements();
      }
    }
    for (int v : n.outputs()) {
      if (v < 0) continue;
      const ValueShape& vs = s.values[std::size_t(v)];
      if (!vs.fully_known()) c.known = false;
      if (moves_data) c.bytes_written += double(vs.bytes());
    }
    c.folded = all_const && c.cls != OpClass::Control;
    const auto& subs = s.subgraphs[std::size_t(ni)];
    std::size_t k = 0;
    for (const auto& a : n.attributes) {
      for (const auto& body : a.graphs) {
        bodies.push_back(k < subs.size() && !subs[k].values.empty() ? costs_of(body, subs[k]) : GraphCosts{});
        ++k;
      }
    }
    c.has_bodies = k > 0;
  }
  return c;
}

std::vector<BodyThatRuns> bodies_that_run(const Node& n, const std::vector<GraphShapes>& shapes,
                                          const std::vector<GraphCosts>& costs) {
  std::vector<BodyThatRuns> run;
  const bool is_if = n.op_type == "If";
  std::size_t k = 0;
  for (const auto& a : n.attributes)
    for (const auto& body : a.graphs) {
      bool defined = is_if ? (a.name == "then_branch" || a.name == "else_branch") : a.name == "body";
      if (defined && k < shapes.size() && k < costs.size() && !shapes[k].values.empty()) run.push_back({&body, k});
      ++k;
    }
  // An If runs one branch: the costlier, when shape inference could not tell which.
  if (is_if && run.size() == 2) {
    const BodyThatRuns pick = body_flops(costs[run[1].index]) > body_flops(costs[run[0].index]) ? run[1] : run[0];
    run.assign(1, pick);
  }
  return run;
}

}  // namespace perfcard
