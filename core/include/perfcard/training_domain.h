// What a learned predictor's file says about the rows it was trained on, and the one rule every learned
// predictor applies with it: held-out accuracy per device family (the row's uncertainty, and where the
// predictor is the default), the families and runtimes it saw, the range of each feature in its training
// rows and of its target. A row outside them is out of distribution, and says why in words.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "perfcard/predictor.h"
#include "perfcard/roofline.h"
#include "perfcard/weights_file.h"

namespace perfcard {

class RooflinePredictor;

// A learned figure in a warning: three significant digits, what a reader needs, and the same text
// natively and in wasm, whose learned predictors agree to float rounding only.
std::string three_digits(double v);

class TrainingDomain {
 public:
  TrainingDomain() = default;
  // Reads target.min/max, train.min/max (`features` values each), training.families, training.runtimes
  // and accuracy.*.
  TrainingDomain(const WeightsFile& file, std::size_t features);

  // A correction learned on one runtime's residuals (eager PyTorch's per-op dispatch, say) says nothing of
  // another's, nor of a training step's backward: for a runtime no training row ran on, or a training
  // step, a learned predictor gives the roofline's row, flagged out of distribution with the reason and its
  // uncertainty doubled (`whose`: "the trees'"); nothing for an inference run on a runtime it trained on.
  // The one check every learned predictor makes first.
  std::optional<PredictorOutput> untrained_runtime(const RooflinePredictor& roofline, const Prepared& prepared,
                                                   const DeviceQuery& query, std::string_view whose) const;

  // The roofline's result corrected by exp(margin), the margin held to the training labels' range: the
  // device stays as busy as the roofline says, the wall time is what a learned predictor corrects.
  PredictorOutput correct(RooflineResult r, double margin, std::string_view whose) const;
  // The correction held to the training labels' range (a warning is added to `out` when it had to be;
  // `whose`: "trees'", "the GNN's").
  double clamp(double margin, PredictorOutput& out, std::string_view whose) const;
  // The same correction, held to the range without a word (for a predictor that combines others').
  double held(double margin) const { return std::clamp(margin, lo_, hi_); }
  // Sets out.uncertainty (the family's held-out MAPE, else `fallback`) and out.out_of_distribution with its
  // reasons: a family never trained on, or a feature (among `used`; empty = all) outside the training
  // rows' range by more than a tenth of that range. Out of distribution doubles the uncertainty.
  void judge(const std::string& family, std::span<const float> row, const std::vector<bool>& used, double fallback,
             PredictorOutput& out) const;

  const std::map<std::string, FamilyAccuracy>& accuracy() const { return accuracy_; }

 private:
  double lo_ = -3, hi_ = 3;
  std::vector<float> train_min_, train_max_;
  std::vector<std::string> families_, runtimes_;
  std::map<std::string, FamilyAccuracy> accuracy_;
};

}  // namespace perfcard
