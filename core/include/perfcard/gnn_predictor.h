// The GNN predictor: a learned correction of the roofline, like the trees, that also reads the operator
// graph (operator_graph.h). Its network (gnn_network.h, reached through networks.h) embeds the graph once
// per prepared subject; its head reads that embedding beside the whole-model feature row of each device and
// predicts log(measured / roofline latency).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "perfcard/features.h"
#include "perfcard/learned_prepared.h"
#include "perfcard/networks.h"
#include "perfcard/operator_graph.h"
#include "perfcard/roofline_predictor.h"
#include "perfcard/training_domain.h"
#include "perfcard/weights_file.h"

namespace perfcard {

class GnnPredictor final : public Predictor, public Embedder, public RooflineCorrection {
 public:
  // Checks the file's predictor name, version, feature and graph schema hashes against this build, then
  // has `networks` build the network.
  GnnPredictor(const WeightsFile& file, std::shared_ptr<const RooflinePredictor> roofline, const NetworkBackend& networks);
  std::string name() const override { return "gnn"; }
  std::string version() const override { return version_; }
  std::unique_ptr<Prepared> prepare(const PredictorSubject& subject) const override;
  void embed_into(LearnedPrepared& p) const override;
  PredictorOutput predict(const Prepared& prepared, const DeviceQuery& query) const override;

  const TrainingDomain* training_domain() const override { return &domain_; }
  const GraphNetwork& network() const { return *network_; }
  // The log correction of the roofline predict() applies for this state and feature row, held to the
  // training range.
  double correction(const LearnedPrepared& p, std::span<const float> row) const override;

 private:
  std::shared_ptr<const RooflinePredictor> roofline_;
  std::shared_ptr<const GraphNetwork> network_;
  EmbeddingCache<OperatorGraph> cache_;
  TrainingDomain domain_;
  std::string version_;
};

}  // namespace perfcard
