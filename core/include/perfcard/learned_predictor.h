// The one Predictor every learned model runs behind (learned_model.h): per row it times the roofline once,
// builds the device's feature row, asks the model for its verdict and applies it, so that the roofline,
// the features and the kernels stay the core's and a model's rules stay the model's.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "perfcard/features.h"
#include "perfcard/learned_model.h"
#include "perfcard/roofline_predictor.h"

namespace perfcard {

// The prepared state of learned predictors: the roofline's kernels, the subject's feature builder, and the
// state of each model that prepared it (auto prepares one state for every model it may choose).
class LearnedPrepared : public FeaturePrepared {
 public:
  LearnedPrepared(PredictorSubject s, KernelPlan p) : FeaturePrepared(std::move(s), std::move(p)) {}
  std::vector<std::pair<const LearnedModel*, std::shared_ptr<const LearnedState>>> states;
  // Error(internal) when `model` did not prepare this state.
  const LearnedState& state_of(const LearnedModel& model) const;
};

// A fresh state for the subject on the roofline's plan, with each model's state: the operator graph and
// the kernel sequence are built once, for the models that read them (none for a training step).
std::unique_ptr<LearnedPrepared> prepare_learned(const PredictorSubject& subject, const RooflinePredictor& roofline,
                                                 std::span<const LearnedModel* const> models);

// This build's roofline version and input schema hashes.
CoreSchemas core_schemas(const RooflinePredictor& roofline);

// The prepared state as a LearnedPrepared, or Error(internal) naming `who` when another predictor made it.
const LearnedPrepared& as_learned_prepared(const Prepared& p, std::string_view who);

class LearnedPredictor final : public Predictor {
 public:
  LearnedPredictor(std::shared_ptr<const LearnedModel> model, std::shared_ptr<const RooflinePredictor> roofline);
  std::string name() const override { return model_->name(); }
  std::string version() const override { return model_->version(); }
  std::unique_ptr<Prepared> prepare(const PredictorSubject& subject) const override;
  // `prepared` from this predictor's prepare(), or from auto's, which prepares this model too.
  PredictorOutput predict(const Prepared& prepared, const DeviceQuery& query) const override;
  // The model decides every query's row at once.
  std::vector<PredictorOutput> predict_many(const Prepared& prepared,
                                            std::span<const DeviceQuery> queries) const override;
  const TrainingAccuracy* training_accuracy() const override { return &model_->training_accuracy(); }
  const std::shared_ptr<const LearnedModel>& model() const { return model_; }

 private:
  std::shared_ptr<const LearnedModel> model_;
  std::shared_ptr<const RooflinePredictor> roofline_;
  // The row `v` makes of the roofline's (`r`: its timing of the row, none for a training step).
  PredictorOutput applied(const Verdict& v, std::optional<RooflineResult>& r, const LearnedPrepared& p,
                          const DeviceQuery& q) const;
};

}  // namespace perfcard
