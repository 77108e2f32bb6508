#include "perfcard/operator_graph.h"

#include <algorithm>
#include <cmath>

#include "perfcard/dtype.h"
#include "perfcard/error.h"
#include "perfcard/op_registry.h"
#include "perfcard/sha256.h"

namespace perfcard {
namespace {

// Column order is the schema: append, never reorder (and bump kGraphSchemaVersion on any change).
enum N : std::size_t {
  kLogFlops, kLogMacs, kLogActBytesRead, kLogBytesWritten, kLogWeightBytes, kLogOutElements, kOutRank, kCostKnown,
  kFolded, kLogConsumers, kCount
};

constexpr FeatureDef kNodeSchema[] = {
    {"log_flops", "log1p FLOPs per sample"},
    {"log_macs", "log1p multiply-accumulates per sample"},
    {"log_act_bytes_read", "log1p bytes read per sample, initializers excluded"},
    {"log_bytes_written", "log1p bytes written per sample"},
    {"log_weight_bytes", "log1p bytes of initializer inputs (not per sample: weights do not grow with the batch)"},
    {"log_out_elements", "log1p elements of the first output per sample"},
    {"out_rank", "rank of the first output (0 when unknown)"},
    {"cost_known", "1 when the node's shapes and cost rule are known, else 0 (its costs are a lower bound)"},
    {"folded", "1 when every input is constant (a runtime folds it at load time)"},
    {"log_consumers", "log1p nodes that read the first output"},
};
static_assert(std::size(kNodeSchema) == kCount, "one definition per node feature");

float lg(double x) { return float(std::log1p(std::max(0.0, x))); }

}  // namespace

std::span<const FeatureDef> node_feature_schema() { return kNodeSchema; }

std::size_t op_vocabulary_size() { return op_count() + 1; }
std::size_t op_class_count() { return std::size_t(OpClass::Other) + 1; }

std::int32_t op_id(std::string_view domain, std::string_view op_type) {
  const OpSpec* spec = find_op(domain, op_type);
  if (!spec) return 0;
  return std::int32_t(spec - all_ops().data()) + 1;
}

std::string op_vocabulary_text() {
  std::string s = "ops\n";
  for (const auto& op : all_ops()) ((s += op.domain) += "::") += std::string(op.op_type) + "\n";
  s += "classes\n";
  for (std::size_t c = 0; c < op_class_count(); ++c) (s += op_class_name(OpClass(c))) += "\n";
  return s;
}

const std::string& graph_schema_hash() {
  static const std::string hash = [] {
    std::string s = "perfcard-graph/" + std::to_string(kGraphSchemaVersion) + "\n";
    for (const auto& f : kNodeSchema) (s += f.name) += "\n";
    return sha256_hex(std::string_view(s + op_vocabulary_text()));
  }();
  return hash;
}

OperatorGraph operator_graph(const Model& model, const Analysis& analysis, std::int64_t samples) {
  const Graph& g = model.graph;
  if (samples < 1) throw option_error("operator_graph: samples must be >= 1, got " + std::to_string(samples));
  if (analysis.costs.nodes.size() != g.nodes.size() || analysis.shapes.graph.values.size() != g.values.size())
    throw internal_error("operator_graph: the analysis is not of this model");
  const double per = 1.0 / double(samples);
  OperatorGraph og;
  og.nodes = g.nodes.size();
  og.features = kCount;
  og.op.resize(og.nodes);
  og.op_class.resize(og.nodes);
  og.x.assign(og.nodes * kCount, 0.0f);
  std::vector<std::int32_t> seen;  // producers already linked to the current node
  for (std::size_t i = 0; i < og.nodes; ++i) {
    const Node& n = g.nodes[i];
    const NodeCost& c = analysis.costs.nodes[i];
    og.op[i] = op_id(n.domain, n.op_type);
    if (og.op[i] == 0) ++og.unknown_ops;
    og.op_class[i] = std::int32_t(c.cls);
    double weight_bytes = 0;
    seen.clear();
    for (int v : n.inputs()) {
      if (v < 0) continue;
      const Value& val = g.values[std::size_t(v)];
      if (val.kind == ValueKind::Initializer) {
        weight_bytes += double(analysis.shapes.graph.values[std::size_t(v)].bytes());
      } else if (val.kind == ValueKind::NodeOutput && val.producer >= 0 && std::size_t(val.producer) != i &&
                 std::find(seen.begin(), seen.end(), val.producer) == seen.end()) {
        seen.push_back(val.producer);
        og.edge_src.push_back(val.producer);
        og.edge_dst.push_back(std::int32_t(i));
      }
    }
    float* x = og.x.data() + i * kCount;
    x[kLogFlops] = lg(c.flops * per);
    x[kLogMacs] = lg(c.macs * per);
    x[kLogActBytesRead] = lg((c.bytes_read - std::min(c.bytes_read, weight_bytes)) * per);
    x[kLogBytesWritten] = lg(c.bytes_written * per);
    x[kLogWeightBytes] = lg(weight_bytes);
    const int out = n.outputs().empty() ? -1 : n.outputs()[0];
    if (out >= 0) {
      const ValueShape& s = analysis.shapes.graph.values[std::size_t(out)];
      x[kLogOutElements] = lg(double(s.elements()) * per);
      x[kOutRank] = float(std::max(0, s.rank));
      x[kLogConsumers] = lg(double(g.values[std::size_t(out)].consumers.size()));
    }
    x[kCostKnown] = c.known ? 1.0f : 0.0f;
    x[kFolded] = c.folded ? 1.0f : 0.0f;
  }
  return og;
}

}  // namespace perfcard
