#include "perfcard/analysis.h"

namespace perfcard {
namespace {

void add_graph(const Graph& g, const GraphShapes& s, const GraphCosts& gc, Analysis& a, bool main) {
  ModelTotals& t = a.totals;
  for (std::size_t ni = 0; ni < g.nodes.size(); ++ni) {
    const Node& n = g.nodes[ni];
    const NodeCost& c = gc.nodes[ni];
    (main ? t.nodes : t.subgraph_nodes) += 1;
    if (s.status[ni] == NodeStatus::Unknown && !find_op(n.domain, n.op_type)) t.unknown_nodes += 1;
    else if (!c.known) t.uncosted_nodes += 1;
    t.macs += c.macs;
    t.flops += c.flops;
    t.bytes_read += c.bytes_read;
    t.bytes_written += c.bytes_written;
    t.params += c.params;
    t.activations += c.activation_elems;
    std::string key = n.domain.empty() ? n.op_type : n.domain + "::" + n.op_type;
    OpTypeStats& st = a.by_op_type[key];
    st.count += 1;
    st.macs += c.macs;
    st.flops += c.flops;
    st.bytes += c.bytes_read + c.bytes_written;
    // Control flow: each body once. For If only the costlier branch runs.
    const auto& subs = gc.subgraphs[ni];
    std::size_t k = 0, pick = 0;
    if (n.op_type == "If" && subs.size() == 2) {
      auto flops_of = [](const GraphCosts& x) { double f = 0; for (const auto& nc : x.nodes) f += nc.flops; return f; };
      pick = flops_of(subs[1]) > flops_of(subs[0]) ? 1 : 0;
    }
    for (const auto& attr : n.attributes) {
      for (const auto& body : attr.graphs) {
        bool counted = n.op_type != "If" || k == pick;
        if (counted && k < subs.size() && k < s.subgraphs[ni].size() && !s.subgraphs[ni][k].values.empty())
          add_graph(body, s.subgraphs[ni][k], subs[k], a, false);
        ++k;
      }
    }
  }
  for (const auto& v : s.values)
    if (v.estimated) t.estimated_values += 1;
  for (const auto& init : g.initializers) {
    std::uint64_t b = (init.num_elements() * std::uint64_t(dtype_bits(init.dtype)) + 7) / 8;
    t.weight_bytes += b;
    if (init.external) t.external_weight_bytes += b;
  }
}

}  // namespace

Analysis analyze(const Model& model, const AnalyzeOptions& options) {
  Analysis a;
  a.shapes = infer_shapes(model, options.dims);
  a.costs = compute_costs(model.graph, a.shapes.graph);
  a.liveness = peak_live_memory(model.graph, a.shapes.graph);
  add_graph(model.graph, a.shapes.graph, a.costs, a, true);
  return a;
}

}  // namespace perfcard
