// The gradient-boosted trees predictor: a learned correction of the roofline. The trees read the whole-
// model feature row (features.h) and predict log(measured / roofline latency); the prediction is the
// roofline's time times exp(that), so the roofline carries devices and sizes nobody trained on and the
// trees carry what physics misses (per-op dispatch, library kernel choice, kernels eager runs that the
// export folded away).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "perfcard/features.h"
#include "perfcard/learned_prepared.h"
#include "perfcard/roofline_predictor.h"
#include "perfcard/training_domain.h"
#include "perfcard/networks.h"
#include "perfcard/weights_file.h"

namespace perfcard {

class TreesPredictor final : public Predictor, public RooflineCorrection {
 public:
  // Checks the file's predictor name, version and feature schema hash against this build, then has
  // `networks` build the trees.
  TreesPredictor(const WeightsFile& file, std::shared_ptr<const RooflinePredictor> roofline, const NetworkBackend& networks);
  std::string name() const override { return "trees"; }
  std::string version() const override { return version_; }
  std::unique_ptr<Prepared> prepare(const PredictorSubject& subject) const override;
  PredictorOutput predict(const Prepared& prepared, const DeviceQuery& query) const override;

  const TrainingDomain* training_domain() const override { return &domain_; }
  // The log correction of the roofline predict() applies for this feature row, held to the training range.
  double correction(std::span<const float> row) const { return domain_.held(trees_->margin(row)); }
  double correction(const LearnedPrepared&, std::span<const float> row) const override { return correction(row); }
  const std::string& provenance() const { return provenance_; }

 private:
  std::shared_ptr<const RooflinePredictor> roofline_;
  std::shared_ptr<const TreeNetwork> trees_;
  std::string version_, provenance_;
  TrainingDomain domain_;
  std::vector<bool> used_;
};

}  // namespace perfcard
