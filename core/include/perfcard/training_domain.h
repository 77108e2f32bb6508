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
  // and accuracy.*; and where the file has them, training.devices and accuracy.unseen.* (a file without
  // training.devices never says a device was trained on).
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
  // Sets out.uncertainty (the measured error that fits the device: on a device trained on, the family's
  // held-out-family MAPE; on another, the family's leave-one-device-out MAPE where the file has it, else the
  // held-out-family one; `fallback` where neither) and out.out_of_distribution with its reasons: a family
  // never trained on, or a feature (among `used`; empty = all) outside the training rows' range by more than
  // a tenth of that range. Out of distribution doubles the uncertainty.
  void judge(const Device& device, const std::string& family, std::span<const float> row, const std::vector<bool>& used,
             double fallback, PredictorOutput& out) const;

  const std::map<std::string, FamilyAccuracy>& accuracy() const { return accuracy_; }
  // Whether accuracy_for() says it beats the roofline for any family and device.
  bool beats_roofline_somewhere() const {
    auto any = [](const std::map<std::string, FamilyAccuracy>& by) {
      return std::any_of(by.begin(), by.end(), [](const auto& f) { return f.second.beats_roofline; });
    };
    return (!devices_.empty() && any(accuracy_)) || any(unseen_);
  }
  bool trained_on(const std::string& device_id) const {
    return std::binary_search(devices_.begin(), devices_.end(), device_id);
  }
  // The figure that says how this predictor does on `device` of `family`: held-out families on a device it
  // trained on, leave one device out on another; nullptr where the file measured neither.
  const FamilyAccuracy* accuracy_for(const std::string& family, const std::string& device_id) const {
    const auto& by = trained_on(device_id) ? accuracy_ : unseen_;
    auto it = by.find(family);
    return it == by.end() ? nullptr : &it->second;
  }

 private:
  static std::map<std::string, FamilyAccuracy> read_accuracy(const WeightsFile& file, const std::string& prefix);

  double lo_ = -3, hi_ = 3;
  std::vector<float> train_min_, train_max_;
  std::vector<std::string> families_, runtimes_, devices_;  // devices_ sorted
  std::map<std::string, FamilyAccuracy> accuracy_, unseen_;
};

}  // namespace perfcard
