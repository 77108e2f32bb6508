// The operator graph as graph predictors read it (a GNN over the nodes, a sequence model over them in
// execution order): per node an op id, a class id and device-independent numeric features; edges from a
// value's producer to each consumer. Computed here and nowhere else: the training tables get it from
// `perfcard eval` (queries with "graph": true), the predictors from this module.
//
// Costs are per sample (the analysis's figures divided by the batch it is bound to) and weight bytes are
// kept apart, so a node's features hardly change with the batch: the batch reaches a predictor through
// the whole-model feature row (features.h). Magnitudes are log1p.
//
// Versioned like the feature row: graph_schema_hash() covers the node features' names, the op vocabulary
// (the registry in order; id = place + 1, 0 for op types it does not know) and the class names, and a
// predictor file trained on another schema is refused.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "perfcard/analysis.h"
#include "perfcard/features.h"
#include "perfcard/graph.h"

namespace perfcard {

inline constexpr int kGraphSchemaVersion = 1;

std::span<const FeatureDef> node_feature_schema();
const std::string& graph_schema_hash();
// Op ids run 0 (unknown) .. op_vocabulary_size() - 1; class ids 0 .. op_class_count() - 1.
std::size_t op_vocabulary_size();
std::size_t op_class_count();
// The id of an op type: its registry row's place + 1, 0 when the registry does not know it.
std::int32_t op_id(std::string_view domain, std::string_view op_type);
// The op vocabulary and the class names, one per line, as the schema hashes of graph and sequence
// predictors cover them.
std::string op_vocabulary_text();

struct OperatorGraph {
  std::size_t nodes = 0;
  std::size_t features = 0;              // node_feature_schema().size()
  std::vector<std::int32_t> op;          // [nodes]
  std::vector<std::int32_t> op_class;    // [nodes]
  std::vector<float> x;                  // [nodes * features], row-major
  std::vector<std::int32_t> edge_src;    // producer node of each edge
  std::vector<std::int32_t> edge_dst;    // consumer node
  std::size_t unknown_ops = 0;           // nodes whose op type the registry does not know

  // Equal arrays: an embedding computed for one serves the other.
  bool operator==(const OperatorGraph&) const = default;
};

// The main graph's nodes in file order (control-flow bodies are inside their node's costs). `samples` is
// the batch the analysis is bound to (>= 1).
OperatorGraph operator_graph(const Model& model, const Analysis& analysis, std::int64_t samples);

}  // namespace perfcard
