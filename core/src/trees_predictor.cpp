#include "perfcard/trees_predictor.h"

#include <algorithm>
#include <cmath>

#include "perfcard/error.h"

namespace perfcard {

inline constexpr std::int64_t kTreesVersion = 1;

TreesPredictor::TreesPredictor(const WeightsFile& w, std::shared_ptr<const RooflinePredictor> roofline)
    : roofline_(std::move(roofline)) {
  if (!roofline_) throw internal_error("the trees predictor needs the roofline it corrects");
  if (w.predictor() != "trees") throw data_error("the file is a '" + std::string(w.predictor()) + "' predictor, not 'trees'");
  if (w.predictor_version() != kTreesVersion)
    throw data_error("trees predictor version " + std::to_string(w.predictor_version()) + " is not the version this build runs (" +
                     std::to_string(kTreesVersion) + ")");
  w.require_schema_hash(feature_schema_hash());
  const std::size_t n = feature_schema().size();
  trees_ = TreeEnsemble::load(w, n);
  version_ = "trees-" + std::to_string(kTreesVersion) + "." + std::string(w.get_string("training.date"));
  provenance_ = std::string(w.get_string("training.provenance"));
  clamp_lo_ = w.get_float("target.min");
  clamp_hi_ = w.get_float("target.max");
  if (!(clamp_lo_ <= clamp_hi_) || !std::isfinite(clamp_lo_) || !std::isfinite(clamp_hi_))
    throw data_error("target.min / target.max are not a finite range");
  const auto lo = w.tensor("train.min", WDType::F32, {std::int64_t(n)}).f32();
  const auto hi = w.tensor("train.max", WDType::F32, {std::int64_t(n)}).f32();
  train_min_.assign(lo.begin(), lo.end());
  train_max_.assign(hi.begin(), hi.end());
  used_ = trees_.used_features();
  trained_families_ = w.get_strings("training.families");
  const auto& fam = w.get_strings("accuracy.families");
  const auto& mape = w.get_floats("accuracy.mape");
  const auto& rows = w.get_ints("accuracy.rows");
  const auto& beats = w.get_ints("accuracy.beats_roofline");
  if (mape.size() != fam.size() || rows.size() != fam.size() || beats.size() != fam.size())
    throw data_error("the accuracy.* arrays differ in length");
  for (std::size_t i = 0; i < fam.size(); ++i) {
    if (!(mape[i] >= 0) || !std::isfinite(mape[i])) throw data_error("accuracy.mape of '" + fam[i] + "' is not a finite number >= 0");
    accuracy_[fam[i]] = {mape[i], rows[i], beats[i] != 0};
  }
}

std::unique_ptr<Prepared> TreesPredictor::prepare(const PredictorSubject& s) const {
  auto base = roofline_->prepare(s);
  auto& plan = as_roofline_prepared(*base).plan;
  return std::make_unique<TreesPrepared>(s, std::move(plan));
}

PredictorOutput TreesPredictor::predict(const Prepared& prepared, const DeviceQuery& q) const {
  const auto* p = dynamic_cast<const TreesPrepared*>(&prepared);
  if (!p) throw internal_error("a trees prediction was asked with state prepared by another predictor");
  RooflineResult r = roofline_->time(*p, q);
  const std::vector<float> row = p->features.row(*q.device, q, r);
  const double margin = trees_.margin(row);
  const double correction = std::clamp(margin, clamp_lo_, clamp_hi_);

  PredictorOutput out;
  out.predictor = name();
  out.version = version_;
  out.baseline_ms = r.latency_ms;
  out.latency_ms = r.latency_ms * std::exp(correction);
  // The device stays as busy as the roofline says; the wall time is what the trees correct.
  out.busy_ms = std::min(r.gpu_busy_ms, out.latency_ms);
  out.busy_fraction = out.latency_ms > 0 ? out.busy_ms / out.latency_ms : 0;
  out.intensity = r.intensity;
  out.kernels = std::move(r.kernels);
  out.warnings = std::move(r.warnings);
  if (margin != correction)
    out.warnings.push_back("the trees' correction was held to the range seen in training (x" +
                           std::to_string(std::exp(correction)).substr(0, 5) + ")");

  std::string family;
  roofline_->constants().family_of(*q.device, &family);
  auto acc = accuracy_.find(family);
  out.uncertainty = acc != accuracy_.end() && acc->second.rows > 0 ? acc->second.mape : roofline_->uncertainty(*q.device, nullptr);
  if (std::find(trained_families_.begin(), trained_families_.end(), family) == trained_families_.end()) {
    out.out_of_distribution = true;
    out.warnings.push_back("out of distribution: no measured rows of device family '" + family + "' were trained on");
  }
  // A feature outside the training rows' range by more than a tenth of that range is an extrapolation.
  const auto schema = feature_schema();
  std::string outside;
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (!used_[i] || std::isnan(row[i]) || std::isnan(train_min_[i])) continue;
    const double margin_i = 0.1 * std::max(1e-3, double(train_max_[i]) - double(train_min_[i]));
    if (row[i] < train_min_[i] - margin_i || row[i] > train_max_[i] + margin_i)
      outside += (outside.empty() ? "" : ", ") + std::string(schema[i].name);
  }
  if (!outside.empty()) {
    out.out_of_distribution = true;
    out.warnings.push_back("out of distribution: outside the training rows' range: " + outside);
  }
  if (out.out_of_distribution) out.uncertainty *= 2;
  return out;
}

}  // namespace perfcard
