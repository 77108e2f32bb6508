// analyze(): the whole static picture of a model for one binding of its symbolic dims.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "perfcard/cost.h"
#include "perfcard/graph.h"
#include "perfcard/liveness.h"
#include "perfcard/shape_inference.h"

namespace perfcard {

struct AnalyzeOptions {
  DimBindings dims;
  // Keep every node's costs in Analysis::costs (the predictors and a per-node report read them). Without
  // them the totals are the same; a summary of a huge graph then does not hold 100 bytes a node.
  bool node_costs = true;
};

struct ModelTotals {
  double macs = 0;
  double flops = 0;
  double bytes_read = 0;
  double bytes_written = 0;
  std::uint64_t params = 0;
  std::uint64_t weight_bytes = 0;       // all initializers at their stored dtype
  std::uint64_t external_weight_bytes = 0;
  double activations = 0;               // output elements of conv/linear-like nodes (timm "macts")
  std::uint64_t nodes = 0;              // main graph
  std::uint64_t subgraph_nodes = 0;
  std::uint64_t unknown_nodes = 0;      // no rule and no value_info: cost not counted
  std::uint64_t uncosted_nodes = 0;     // rule present but some shape unknown: cost is a lower bound
  std::uint64_t estimated_values = 0;   // values with data-dependent, upper-bound dims
  std::string first_estimate;            // the node that makes the first of them: "'name' (OpType)"
  std::uint64_t per_iteration_loops = 0;  // Loop/Scan whose trip count is unknown: bodies counted once
  bool saturated = false;               // params or weight bytes passed 2^64 and stopped there
};

struct OpTypeStats {
  std::uint64_t count = 0;
  double macs = 0, flops = 0, bytes = 0;
};

struct Analysis {
  ShapeResult shapes;
  GraphCosts costs;  // empty unless AnalyzeOptions::node_costs
  LivenessResult liveness;
  ModelTotals totals;
  std::map<std::string, OpTypeStats> by_op_type;
};

Analysis analyze(const Model& model, const AnalyzeOptions& options);

// For what reads Analysis::costs (kernel plans, memory, training steps, the per-node report): an analysis
// made without AnalyzeOptions::node_costs is refused with an internal error instead of read past its end.
void require_node_costs(const Model& model, const Analysis& analysis);

}  // namespace perfcard
