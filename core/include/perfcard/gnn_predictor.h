// The GNN predictor: a learned correction of the roofline, like the trees, that also reads the operator
// graph (operator_graph.h). A GraphSAGE-style encoder embeds the graph once per prepared subject; a small
// head reads that embedding beside the whole-model feature row of each device and predicts
// log(measured / roofline latency). The layers and the weights file's tensor names are described in
// scripts/training/gnn.py, which trains it; the arithmetic is the nn runtime's (nn.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "perfcard/features.h"
#include "perfcard/learned_prepared.h"
#include "perfcard/nn.h"
#include "perfcard/operator_graph.h"
#include "perfcard/roofline_predictor.h"
#include "perfcard/training_domain.h"
#include "perfcard/weights_file.h"

namespace perfcard {

// The network alone: weights copied out of the file (so the file's bytes need not outlive it), forward
// passes on an operator graph and a feature row.
class GnnModel {
 public:
  explicit GnnModel(const WeightsFile& file);
  ~GnnModel();
  GnnModel(GnnModel&&) noexcept;
  GnnModel& operator=(GnnModel&&) noexcept;

  // [1, 2 * hidden]: the mean and the max of the last layer's node states.
  nn::Tensor2 embed(const OperatorGraph& graph, nn::Path path = nn::Path::Fast) const;
  // The predicted log ratio for one device's feature row (NaN entries read as the training mean).
  double head(const nn::Tensor2& embedding, std::span<const float> row, nn::Path path = nn::Path::Fast) const;
  std::size_t layers() const;
  nn::Storage storage() const;

 private:
  struct Weights;
  std::unique_ptr<Weights> w_;
};

class GnnPredictor final : public Predictor, public Embedder, public RooflineCorrection {
 public:
  // Checks the file's predictor name, version, feature and graph schema hashes against this build.
  GnnPredictor(const WeightsFile& file, std::shared_ptr<const RooflinePredictor> roofline);
  std::string name() const override { return "gnn"; }
  std::string version() const override { return version_; }
  std::unique_ptr<Prepared> prepare(const PredictorSubject& subject) const override;
  void embed_into(LearnedPrepared& p) const override;
  PredictorOutput predict(const Prepared& prepared, const DeviceQuery& query) const override;

  const std::map<std::string, FamilyAccuracy>& accuracy() const override { return domain_.accuracy(); }
  const GnnModel& model() const { return model_; }
  // The log correction of the roofline predict() applies for this state and feature row, held to the
  // training range.
  double correction(const LearnedPrepared& p, std::span<const float> row) const override;

 private:
  std::shared_ptr<const RooflinePredictor> roofline_;
  GnnModel model_;
  EmbeddingCache<OperatorGraph> cache_;
  TrainingDomain domain_;
  std::string version_;
};

}  // namespace perfcard
