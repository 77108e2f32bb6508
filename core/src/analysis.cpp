#include "perfcard/analysis.h"

namespace perfcard {
namespace {

// a + b for totals that a hostile model can push past 2^64 (thousands of 2^50-element initializers).
std::uint64_t add_saturating(std::uint64_t a, std::uint64_t b, bool& saturated) {
  if (a > UINT64_MAX - b) { saturated = true; return UINT64_MAX; }
  return a + b;
}

// One node's figures into the totals. `runs`: how often its graph runs per inference (the product of the
// trip counts of the loops around it).
void add_node(const Node& n, const NodeCost& c, NodeStatus status, Analysis& a, bool main, double runs) {
  ModelTotals& t = a.totals;
  (main ? t.nodes : t.subgraph_nodes) += 1;
  if (status == NodeStatus::Unknown && !find_op(n.domain, n.op_type)) t.unknown_nodes += 1;
  else if (!c.known) t.uncosted_nodes += 1;
  t.macs += c.macs * runs;
  t.flops += c.flops * runs;
  t.bytes_read += c.bytes_read * runs;
  t.bytes_written += c.bytes_written * runs;
  t.params = add_saturating(t.params, c.params, t.saturated);  // weights are stored once, whatever runs them
  t.activations += c.activation_elems * runs;
  OpTypeStats& st = a.by_op_type[n.qualified_op()];
  st.count += 1;
  st.macs += c.macs * runs;
  st.flops += c.flops * runs;
  st.bytes += (c.bytes_read + c.bytes_written) * runs;
  if (c.has_bodies && !c.trips_known) t.per_iteration_loops += 1;
}

void add_values(const Graph& g, const GraphShapes& s, Analysis& a) {
  ModelTotals& t = a.totals;
  for (std::size_t v = 0; v < s.values.size(); ++v) {
    if (!s.values[v].estimated) continue;
    t.estimated_values += 1;
    const int p = v < g.values.size() ? g.values[v].producer : -1;
    if (t.first_estimate.empty() && p >= 0)
      ((((t.first_estimate += '\'') += g.nodes[std::size_t(p)].name) += "' (") += g.nodes[std::size_t(p)].op_type) += ')';
  }
  for (const auto& init : g.initializers) {
    std::uint64_t b = (init.num_elements() * std::uint64_t(dtype_bits(init.dtype)) + 7) / 8;
    t.weight_bytes = add_saturating(t.weight_bytes, b, t.saturated);
    if (init.external) t.external_weight_bytes = add_saturating(t.external_weight_bytes, b, t.saturated);
  }
}

void add_bodies(const Node& n, const NodeCost& c, const std::vector<GraphShapes>& shapes,
                const std::vector<GraphCosts>& costs, Analysis& a, double runs);

// A body, whose costs were computed with its node.
void add_graph(const Graph& g, const GraphShapes& s, const GraphCosts& gc, Analysis& a, double runs) {
  for (std::size_t ni = 0; ni < g.nodes.size(); ++ni) {
    add_node(g.nodes[ni], gc.nodes[ni], s.status[ni], a, false, runs);
    add_bodies(g.nodes[ni], gc.nodes[ni], s.subgraphs[ni], gc.subgraphs[ni], a, runs);
  }
  add_values(g, s, a);
}

void add_bodies(const Node& n, const NodeCost& c, const std::vector<GraphShapes>& shapes,
                const std::vector<GraphCosts>& costs, Analysis& a, double runs) {
  if (!c.has_bodies) return;
  for (const auto& [body, k] : bodies_that_run(n, shapes, costs)) add_graph(*body, shapes[k], costs[k], a, runs * c.trips);
}

// The main graph, costed node by node; the table of costs is kept only when asked for.
void add_main_graph(const Graph& g, const GraphShapes& s, Analysis& a, bool keep_costs) {
  if (keep_costs) a.costs.nodes.resize(g.nodes.size());
  NodeCoster coster(g, s);
  std::vector<GraphCosts> bodies;
  for (int ni : g.order) {
    const std::size_t i = std::size_t(ni);
    const NodeCost c = coster.next(ni, bodies);
    add_node(g.nodes[i], c, s.status[i], a, true, 1);
    add_bodies(g.nodes[i], c, s.subgraphs[i], bodies, a, 1);
    if (!keep_costs) continue;
    a.costs.nodes[i] = c;
    if (!bodies.empty()) a.costs.subgraphs.of(i) = std::move(bodies);
  }
  add_values(g, s, a);
}

}  // namespace

void require_node_costs(const Model& model, const Analysis& a) {
  if (a.costs.nodes.size() != model.graph.nodes.size())
    throw internal_error("this needs every node's costs: analyze() was called without AnalyzeOptions::node_costs");
}

Analysis analyze(const Model& model, const AnalyzeOptions& options) {
  Analysis a;
  a.shapes = infer_shapes(model, options.dims);
  a.liveness = peak_live_memory(model.graph, a.shapes.graph);
  add_main_graph(model.graph, a.shapes.graph, a, options.node_costs);
  if (a.totals.saturated || a.liveness.saturated)
    a.shapes.warnings.push_back({"some totals pass 2^64 (parameters, weight or activation bytes): they are shown saturated at 2^64 - 1", {}});
  return a;
}

}  // namespace perfcard
