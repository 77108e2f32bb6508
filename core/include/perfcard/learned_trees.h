// The gradient-boosted trees: a learned correction of the roofline. The trees read the whole-model feature
// row (features.h) and predict log(measured / roofline latency); the prediction is the roofline's time
// times exp(that), so the roofline carries devices and sizes nobody trained on and the trees carry what
// physics misses (per-op dispatch, library kernel choice, kernels eager runs that the export folded away).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "perfcard/learned_model.h"
#include "perfcard/network_model.h"
#include "perfcard/networks.h"
#include "perfcard/training_domain.h"
#include "perfcard/weights_file.h"

namespace perfcard {

class LearnedTrees final : public LearnedModel, public RooflineCorrection {
 public:
  // Checks the file's predictor name, version and feature schema hash (against the core's), then has
  // `networks` build the trees.
  LearnedTrees(const WeightsFile& file, const CoreSchemas& core, const NetworkBackend& networks);
  std::string name() const override { return "trees"; }
  std::string version() const override { return version_; }
  bool reads_graph() const override { return false; }
  bool reads_sequence() const override { return false; }
  const TrainingAccuracy& training_accuracy() const override { return domain_.training_accuracy(); }
  std::shared_ptr<const LearnedState> prepare(const ModelInputs& inputs) const override;
  std::vector<Verdict> decide(const LearnedState& state, std::span<const RowQuery> queries,
                              FeatureRows rows) const override;

  const TrainingDomain& domain() const { return domain_; }
  std::vector<double> corrections(const LearnedState& state, FeatureRows rows) const override;

 private:
  std::shared_ptr<const TreeNetwork> trees_;
  std::string version_;
  TrainingDomain domain_;
  std::vector<bool> used_;
  std::vector<double> margins(FeatureRows rows) const;
};

}  // namespace perfcard
