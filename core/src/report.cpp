#include "perfcard/report.h"

#include <algorithm>
#include <cmath>

#include "perfcard/op_registry.h"

namespace perfcard {
namespace {

Json shape_json(const ValueShape& s) {
  Json j;
  j["dtype"] = std::string(dtype_name(s.dtype));
  if (s.rank < 0) j["shape"] = nullptr;
  else {
    Json dims = Json::array();
    for (auto d : s.dims) dims.push_back(d < 0 ? Json() : Json(d));
    j["shape"] = dims;
  }
  if (s.estimated) j["estimated"] = true;
  return j;
}

Json declared_json(const Value& v) {
  Json j;
  j["name"] = v.name.view();
  const TypeInfo none;
  const TypeInfo& declared = v.declared ? *v.declared : none;
  j["dtype"] = std::string(dtype_name(declared.dtype));
  if (!declared.has_shape) { j["dims"] = nullptr; return j; }
  Json dims = Json::array();
  for (const auto& d : declared.dims) {
    if (d.known()) dims.push_back(d.value);
    else if (!d.symbol.empty()) dims.push_back(d.symbol);
    else dims.push_back(nullptr);
  }
  j["dims"] = dims;
  return j;
}

Json location_json(const Location& l) {
  Json j = Json::object();
  if (l.byte_offset) j["byte_offset"] = *l.byte_offset;
  if (!l.node.empty()) j["node"] = l.node;
  if (!l.op_type.empty()) j["op_type"] = l.op_type;
  if (!l.graph.empty()) j["graph"] = l.graph;
  return j;
}

Json nodes_json(const Graph& g, const GraphShapes& s, const GraphCosts& gc) {
  Json arr = Json::array();
  for (int ni : g.order) {
    const Node& n = g.nodes[std::size_t(ni)];
    const NodeCost& c = gc.nodes[std::size_t(ni)];
    Json j;
    j["name"] = n.name.view();
    j["op_type"] = n.op_type.view();
    if (!n.domain.empty()) j["domain"] = n.domain.view();
    j["class"] = std::string(op_class_name(c.cls));
    Json ins = Json::array(), outs = Json::array();
    for (int v : n.inputs()) {
      if (v < 0) { ins.push_back(nullptr); continue; }
      Json x = shape_json(s.values[std::size_t(v)]);
      x["name"] = g.values[std::size_t(v)].name.view();
      if (g.values[std::size_t(v)].kind == ValueKind::Initializer) x["initializer"] = true;
      ins.push_back(x);
    }
    for (int v : n.outputs()) {
      if (v < 0) { outs.push_back(nullptr); continue; }
      Json x = shape_json(s.values[std::size_t(v)]);
      x["name"] = g.values[std::size_t(v)].name.view();
      outs.push_back(x);
    }
    j["inputs"] = ins;
    j["outputs"] = outs;
    j["macs"] = c.macs;
    j["flops"] = c.flops;
    j["bytes_read"] = c.bytes_read;
    j["bytes_written"] = c.bytes_written;
    j["params"] = c.params;
    const char* status = s.status[std::size_t(ni)] == NodeStatus::Inferred ? "inferred"
                         : s.status[std::size_t(ni)] == NodeStatus::FromValueInfo ? "value_info" : "unknown";
    j["shape_status"] = status;
    j["cost_known"] = c.known;
    if (c.folded) j["folded"] = true;
    if (c.has_bodies) {
      Json subs = Json::array();
      std::size_t k = 0;
      for (const auto& a : n.attributes)
        for (const auto& body : a.graphs) {
          Json sj;
          sj["attribute"] = a.name.view();
          if (k < s.subgraphs[std::size_t(ni)].size() && !s.subgraphs[std::size_t(ni)][k].values.empty())
            sj["nodes"] = nodes_json(body, s.subgraphs[std::size_t(ni)][k], gc.subgraphs[std::size_t(ni)][k]);
          subs.push_back(sj);
          ++k;
        }
      j["subgraphs"] = subs;
      // How often the bodies run per inference; null (and counted once, per iteration) when unknown.
      j["trips"] = c.trips_known ? Json(c.trips) : Json();
      if (!c.trips_known) j["subgraphs_counted_once"] = true;
    }
    arr.push_back(std::move(j));
  }
  return arr;
}

}  // namespace

Json analysis_to_json(const Model& m, const Analysis& a, bool per_node) {
  if (per_node) require_node_costs(m, a);
  Json j;
  j["schema_version"] = kAnalyzeSchemaVersion;
  Json model;
  model["ir_version"] = m.ir_version;
  Json opsets = Json::object();
  for (const auto& o : m.opsets) opsets[o.domain.empty() ? "ai.onnx" : o.domain] = o.version;
  model["opsets"] = opsets;
  model["producer"] = m.producer_name + (m.producer_version.empty() ? "" : " " + m.producer_version);
  model["graph_name"] = m.graph.name;
  model["file_bytes"] = m.file_bytes;
  Json ins = Json::array(), outs = Json::array();
  for (int v : m.graph.inputs) {
    Json x = declared_json(m.graph.values[std::size_t(v)]);
    x["bound"] = shape_json(a.shapes.graph.values[std::size_t(v)]);
    ins.push_back(x);
  }
  for (int v : m.graph.outputs) {
    Json x = declared_json(m.graph.values[std::size_t(v)]);
    x["inferred"] = shape_json(a.shapes.graph.values[std::size_t(v)]);
    outs.push_back(x);
  }
  model["inputs"] = ins;
  model["outputs"] = outs;
  j["model"] = model;

  Json syms = Json::array();
  for (const auto& s : a.shapes.symbols) syms.push_back(Json::object({{"name", s.name}, {"value", s.value}, {"bound", s.bound}}));
  j["symbols"] = syms;

  const ModelTotals& t = a.totals;
  Json tot;
  tot["macs"] = t.macs;
  tot["flops"] = t.flops;
  tot["params"] = t.params;
  tot["weight_bytes"] = t.weight_bytes;
  tot["external_weight_bytes"] = t.external_weight_bytes;
  tot["activations"] = t.activations;
  tot["bytes_read"] = t.bytes_read;
  tot["bytes_written"] = t.bytes_written;
  tot["peak_activation_bytes"] = a.liveness.peak_bytes;
  tot["peak_activation_complete"] = a.liveness.complete;
  if (a.liveness.peak_step >= 0) {
    const Node& pn = m.graph.nodes[std::size_t(m.graph.order[std::size_t(a.liveness.peak_step)])];
    tot["peak_activation_at"] = pn.name.empty() ? pn.display_name() : std::string(pn.name);
  }
  tot["input_bytes"] = a.liveness.input_bytes;
  tot["output_bytes"] = a.liveness.output_bytes;
  tot["nodes"] = t.nodes;
  tot["subgraph_nodes"] = t.subgraph_nodes;
  tot["unknown_nodes"] = t.unknown_nodes;
  tot["uncosted_nodes"] = t.uncosted_nodes;
  tot["estimated_values"] = t.estimated_values;
  tot["per_iteration_loops"] = t.per_iteration_loops;
  tot["saturated"] = t.saturated || a.liveness.saturated;
  j["totals"] = tot;

  Json ops = Json::array();
  std::vector<std::pair<std::string, OpTypeStats>> sorted(a.by_op_type.begin(), a.by_op_type.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) {
    return x.second.flops != y.second.flops ? x.second.flops > y.second.flops : x.second.count > y.second.count;
  });
  for (const auto& [op, st] : sorted)
    ops.push_back(Json::object({{"op_type", op}, {"count", st.count}, {"macs", st.macs}, {"flops", st.flops}, {"bytes", st.bytes}}));
  j["op_types"] = ops;

  Json unknown = Json::array();
  for (std::size_t i = 0; i < a.shapes.unknown_ops.size() && i < kMaxListed; ++i) unknown.push_back(a.shapes.unknown_ops[i]);
  j["unknown_ops"] = unknown;
  j["totals"]["unknown_op_types"] = a.shapes.unknown_ops.size();
  Json warns = Json::array();
  for (std::size_t i = 0; i < a.shapes.warnings.size() && i < kMaxListed; ++i) {
    const Diagnostic& w = a.shapes.warnings[i];
    Json x = Json::object({{"message", w.message}});
    Json l = location_json(w.where);
    if (!l.empty()) x["where"] = l;
    warns.push_back(x);
  }
  if (a.shapes.warnings.size() > kMaxListed)
    warns.push_back(Json::object({{"message", std::to_string(a.shapes.warnings.size() - kMaxListed) + " more warnings not listed"}}));
  if (a.shapes.unknown_ops.size() > kMaxListed)
    warns.push_back(Json::object({{"message", std::to_string(a.shapes.unknown_ops.size() - kMaxListed) +
                                                  " more unknown op types not listed (totals.unknown_op_types counts them all)"}}));
  j["warnings"] = warns;
  if (per_node) j["nodes"] = nodes_json(m.graph, a.shapes.graph, a.costs);
  return j;
}

DimBindings parse_dim_bindings(const std::vector<std::string>& specs) {
  DimBindings b;
  for (const auto& s : specs) {
    auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
      throw option_error("bad dim binding '" + s + "': expected NAME=VALUE, e.g. batch=8");
    std::string name = s.substr(0, eq), val = s.substr(eq + 1);
    std::int64_t v = 0;
    for (char ch : val) {
      if (ch < '0' || ch > '9' || v > (std::int64_t{1} << 40))
        throw option_error("bad dim binding '" + s + "': the value must be a whole number from 0 to 2^40");
      v = v * 10 + (ch - '0');
    }
    if (v > (std::int64_t{1} << 40)) throw option_error("bad dim binding '" + s + "': the value must be a whole number from 0 to 2^40");
    b.values[name] = v;
  }
  return b;
}

}  // namespace perfcard
