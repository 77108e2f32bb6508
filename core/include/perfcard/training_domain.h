// What a learned predictor's file says about the rows it was trained on, and the one rule every learned
// predictor applies with it: held-out accuracy per device family (the row's uncertainty, and where the
// predictor is the default), the families and runtimes it saw, the range of each feature in its training
// rows and of its target. A row outside them is out of distribution, and says why in words.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "perfcard/learned_model.h"
#include "perfcard/weights_file.h"

namespace perfcard {

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
  // step, a learned model gives the roofline's row, flagged out of distribution with the reason and its
  // uncertainty doubled (`whose`: "the trees'"); nothing for an inference run on a runtime it trained on.
  // The one check every learned model makes first.
  std::optional<Verdict> untrained_runtime(const RowQuery& query, std::string_view whose) const;

  // The verdict that corrects the roofline by exp(margin), the margin held to the training labels' range
  // (a note says when it had to be; `whose`: "the trees'", "the GNN's").
  Verdict correct(double margin, std::string_view whose) const;
  // The same correction, held to the range without a word (for a model that combines others').
  double held(double margin) const { return std::clamp(margin, lo_, hi_); }
  // Sets v.uncertainty (the measured error that fits the device: on a device trained on, the family's
  // held-out-family MAPE; on another, the family's leave-one-device-out MAPE where the file has it, else the
  // held-out-family one; the query's fallback where neither) and flags the row out of distribution for a
  // family never trained on, or a feature (among `used`; empty = all) outside the training rows' range by
  // more than a tenth of that range. A row flagged by then has its uncertainty doubled.
  void judge(const RowQuery& query, std::span<const float> row, const std::vector<bool>& used, Verdict& v) const;

  // The first step of a model's decide() on a batch: `out` gets, for each row untrained_runtime() declines,
  // that verdict, else the one `decline` gives (where it is given and gives one: the ensemble declines a
  // family without held-out rows); the other rows' indices come back in order, once the batch is checked
  // to have a feature row per query where any row is left.
  std::vector<std::size_t> undeclined(std::span<const RowQuery> queries, FeatureRows rows, std::string_view whose,
                                      std::vector<Verdict>& out,
                                      const std::function<std::optional<Verdict>(const RowQuery&)>& decline = {}) const;

  // A model's verdicts on a batch of rows (LearnedModel::decide), the rule above in order: a row
  // untrained_runtime() declines is declined; the others are corrected by their margins (`margins`, called
  // once, on those rows alone), given the model's own notes (`note`, where it has some) and judged.
  std::vector<Verdict> verdicts(std::span<const RowQuery> queries, FeatureRows rows, std::string_view whose,
                                const std::vector<bool>& used,
                                const std::function<std::vector<double>(FeatureRows)>& margins,
                                const std::function<void(Verdict&)>& note = {}) const;

  const TrainingAccuracy& training_accuracy() const { return accuracy_; }
  const std::map<std::string, FamilyAccuracy>& accuracy() const { return accuracy_.families; }
  bool trained_on(const std::string& device_id) const { return accuracy_.trained_on(device_id); }
  const FamilyAccuracy* accuracy_for(const std::string& family, const std::string& device_id) const {
    return accuracy_.accuracy_for(family, device_id);
  }

 private:
  static std::map<std::string, FamilyAccuracy> read_accuracy(const WeightsFile& file, const std::string& prefix);

  double lo_ = -3, hi_ = 3;
  std::vector<float> train_min_, train_max_;
  std::vector<std::string> families_, runtimes_;
  TrainingAccuracy accuracy_;
};

}  // namespace perfcard
