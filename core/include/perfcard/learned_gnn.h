// The GNN: a learned correction of the roofline, like the trees, that also reads the operator graph
// (operator_graph.h). Its network (gnn_network.h, reached through networks.h) embeds the graph once per
// prepared subject; its head reads that embedding beside the whole-model feature row of each device and
// predicts log(measured / roofline latency).
#pragma once

#include <memory>
#include <span>
#include <string>

#include "perfcard/operator_graph.h"
#include "perfcard/learned_model.h"
#include "perfcard/network_model.h"
#include "perfcard/networks.h"
#include "perfcard/training_domain.h"
#include "perfcard/weights_file.h"

namespace perfcard {

class LearnedGnn final : public LearnedModel, public RooflineCorrection {
 public:
  // Checks the file's predictor name, version, feature and graph schema hashes (against the core's), then
  // has `networks` build the network.
  LearnedGnn(const WeightsFile& file, const CoreSchemas& core, const NetworkBackend& networks);
  std::string name() const override { return "gnn"; }
  std::string version() const override { return version_; }
  bool reads_graph() const override { return true; }
  bool reads_sequence() const override { return false; }
  const TrainingAccuracy& training_accuracy() const override { return domain_.training_accuracy(); }
  // An EmbeddedState: the embedding of inputs.graph (none without one).
  std::shared_ptr<const LearnedState> prepare(const ModelInputs& inputs) const override;
  Verdict decide(const LearnedState& state, const RowQuery& query, std::span<const float> row) const override;

  const GraphNetwork& network() const { return *network_; }
  double correction(const LearnedState& state, std::span<const float> row) const override;

 private:
  std::shared_ptr<const GraphNetwork> network_;
  EmbeddingCache<OperatorGraph> cache_;
  TrainingDomain domain_;
  std::string version_;
};

}  // namespace perfcard
