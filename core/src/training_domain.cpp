#include "perfcard/training_domain.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "perfcard/error.h"
#include "perfcard/features.h"
#include "perfcard/roofline_predictor.h"

namespace perfcard {

std::string_view ood_reason_name(OodReason r) {
  switch (r) {
    case OodReason::TrainingStep: return "training-step";
    case OodReason::UntrainedRuntime: return "untrained-runtime";
    case OodReason::UntrainedFamily: return "untrained-device-family";
    case OodReason::NoHeldOutRows: return "no-held-out-rows";
    case OodReason::FeatureRange: return "feature-range";
    case OodReason::UnknownOps: return "unknown-ops";
    case OodReason::EmbeddingDistance: return "embedding-distance";
  }
  return "unknown";
}

void PredictorOutput::flag(OodReason why, const std::string& words) {
  out_of_distribution = true;
  if (std::find(ood_reasons.begin(), ood_reasons.end(), why) == ood_reasons.end()) ood_reasons.push_back(why);
  warnings.push_back("out of distribution: " + words);
}

bool PredictorOutput::declined() const {
  return std::any_of(ood_reasons.begin(), ood_reasons.end(), [](OodReason r) {
    return r == OodReason::TrainingStep || r == OodReason::UntrainedRuntime || r == OodReason::NoHeldOutRows;
  });
}

std::string three_digits(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

TrainingDomain::TrainingDomain(const WeightsFile& w, std::size_t n) {
  lo_ = w.get_float("target.min");
  hi_ = w.get_float("target.max");
  if (!(lo_ <= hi_) || !std::isfinite(lo_) || !std::isfinite(hi_))
    throw data_error("target.min / target.max are not a finite range");
  const auto lo = w.tensor("train.min", WDType::F32, {std::int64_t(n)}).f32();
  const auto hi = w.tensor("train.max", WDType::F32, {std::int64_t(n)}).f32();
  train_min_.assign(lo.begin(), lo.end());
  train_max_.assign(hi.begin(), hi.end());
  families_ = w.get_strings("training.families");
  runtimes_ = w.get_strings("training.runtimes");
  if (runtimes_.empty()) throw data_error("training.runtimes names no runtime");
  accuracy_ = read_accuracy(w, "accuracy");
  if (w.find("training.devices")) {
    devices_ = w.get_strings("training.devices");
    std::sort(devices_.begin(), devices_.end());
  }
  if (w.find("accuracy.unseen.families")) unseen_ = read_accuracy(w, "accuracy.unseen");
}

std::map<std::string, FamilyAccuracy> TrainingDomain::read_accuracy(const WeightsFile& w, const std::string& prefix) {
  const auto& fam = w.get_strings(prefix + ".families");
  const auto& mape = w.get_floats(prefix + ".mape");
  const auto& rows = w.get_ints(prefix + ".rows");
  const auto& beats = w.get_ints(prefix + ".beats_roofline");
  if (mape.size() != fam.size() || rows.size() != fam.size() || beats.size() != fam.size())
    throw data_error("the " + prefix + ".* arrays differ in length");
  std::map<std::string, FamilyAccuracy> out;
  for (std::size_t i = 0; i < fam.size(); ++i) {
    if (!(mape[i] >= 0) || !std::isfinite(mape[i]))
      throw data_error(prefix + ".mape of '" + fam[i] + "' is not a finite number >= 0");
    out[fam[i]] = {mape[i], rows[i], beats[i] != 0};
  }
  return out;
}

std::optional<PredictorOutput> TrainingDomain::untrained_runtime(const RooflinePredictor& roofline,
                                                                 const Prepared& prepared, const DeviceQuery& query,
                                                                 std::string_view whose) const {
  const std::string& runtime = prepared.subject.runtime;
  if (prepared.subject.mode == Mode::Training) {
    PredictorOutput out = roofline.predict(prepared, query);
    out.flag(OodReason::TrainingStep, std::string(whose) +
                                          " training rows are inference runs, not training steps, so the roofline predicts");
    out.uncertainty *= 2;
    return out;
  }
  if (query.host_us >= 0) {
    PredictorOutput out = roofline.predict(prepared, query);
    out.warnings.push_back(std::string(whose) + " rows ran on their own hosts; with the host's time per kernel given "
                           "(host_us), the roofline predicts");
    return out;
  }
  if (std::find(runtimes_.begin(), runtimes_.end(), runtime) != runtimes_.end()) return std::nullopt;
  PredictorOutput out = roofline.predict(prepared, query);
  std::string trained;
  for (const auto& r : runtimes_) trained += (trained.empty() ? "" : ", ") + r;
  out.flag(OodReason::UntrainedRuntime, std::string(whose) + " training rows ran on " + trained + ", not on runtime '" +
                                            runtime + "', so the roofline predicts");
  out.uncertainty *= 2;
  return out;
}

double TrainingDomain::clamp(double margin, PredictorOutput& out, std::string_view whose) const {
  const double c = held(margin);
  if (c != margin)
    out.warnings.push_back(std::string(whose) + " correction was held to the range seen in training (x" +
                           std::to_string(std::exp(c)).substr(0, 5) + ")");
  return c;
}

PredictorOutput TrainingDomain::correct(RooflineResult r, double margin, std::string_view whose) const {
  PredictorOutput out;
  out.warnings = std::move(r.warnings);
  const double correction = clamp(margin, out, whose);
  out.baseline_ms = r.latency_ms;
  out.latency_ms = r.latency_ms * std::exp(correction);
  out.busy_ms = std::min(r.gpu_busy_ms, out.latency_ms);
  out.busy_fraction = out.latency_ms > 0 ? out.busy_ms / out.latency_ms : 0;
  out.intensity = r.intensity;
  out.kernels = std::move(r.kernels);
  return out;
}

namespace {
// A feature as a reader of the warning knows it: its meaning without the transform the network reads it
// through (the order is the same), its schema name beside it for those who look it up.
std::string in_words(const FeatureDef* c) {
  if (!c) return "a feature past the schema";
  std::string_view m = c->meaning;
  for (std::string_view t : {"log1p ", "log "})
    if (m.substr(0, t.size()) == t) m.remove_prefix(t.size());
  return std::string(m) + " (" + std::string(c->name) + ")";
}
}  // namespace

void TrainingDomain::judge(const Device& device, const std::string& family, std::span<const float> row,
                           const std::vector<bool>& used, double fallback, PredictorOutput& out) const {
  const FamilyAccuracy* acc = accuracy_for(family, device.id);
  if (!acc || acc->rows <= 0) {
    auto held = accuracy_.find(family);
    acc = held != accuracy_.end() ? &held->second : nullptr;
  }
  out.uncertainty = acc && acc->rows > 0 ? acc->mape : fallback;
  if (std::find(families_.begin(), families_.end(), family) == families_.end())
    out.flag(OodReason::UntrainedFamily, "no measured rows of device family '" + family + "' were trained on");
  const auto schema = feature_schema();
  std::string outside;
  for (std::size_t i = 0; i < row.size() && i < train_min_.size(); ++i) {
    if ((!used.empty() && !used[i]) || std::isnan(row[i]) || std::isnan(train_min_[i])) continue;
    const double margin = 0.1 * std::max(1e-3, double(train_max_[i]) - double(train_min_[i]));
    const bool low = row[i] < train_min_[i] - margin, high = row[i] > train_max_[i] + margin;
    if (low || high)
      outside += (outside.empty() ? "" : "; ") + in_words(i < schema.size() ? &schema[i] : nullptr) +
                 (high ? " higher than in every training row" : " lower than in every training row");
  }
  if (!outside.empty()) out.flag(OodReason::FeatureRange, "outside the training rows' range: " + outside);
  if (out.out_of_distribution) out.uncertainty *= 2;
}

const std::map<std::string, FamilyAccuracy>& Predictor::accuracy() const {
  static const std::map<std::string, FamilyAccuracy> none;
  const TrainingDomain* d = training_domain();
  return d ? d->accuracy() : none;
}

const FamilyAccuracy* Predictor::accuracy_for(const std::string& family, const std::string& device_id) const {
  const TrainingDomain* d = training_domain();
  return d ? d->accuracy_for(family, device_id) : nullptr;
}

bool Predictor::beats_roofline_somewhere() const {
  const TrainingDomain* d = training_domain();
  return d && d->beats_roofline_somewhere();
}

}  // namespace perfcard
