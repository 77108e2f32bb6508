#include "perfcard/training_domain.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "perfcard/error.h"
#include "perfcard/features.h"

namespace perfcard {

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
  accuracy_.families = read_accuracy(w, "accuracy");
  if (w.find("training.devices")) {
    accuracy_.devices = w.get_strings("training.devices");
    std::sort(accuracy_.devices.begin(), accuracy_.devices.end());
  }
  if (w.find("accuracy.unseen.families")) accuracy_.unseen = read_accuracy(w, "accuracy.unseen");
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

std::optional<Verdict> TrainingDomain::untrained_runtime(const RowQuery& q, std::string_view whose) const {
  Verdict v;
  v.roofline = true;
  v.uncertainty = 2;
  if (q.training_step) {
    v.flag(OodReason::TrainingStep,
           std::string(whose) + " training rows are inference runs, not training steps, so the roofline predicts");
    return v;
  }
  if (q.host_given) {
    v.uncertainty = 1;
    v.warn(std::string(whose) + " rows ran on their own hosts; with the host's time per kernel given (host_us), the "
           "roofline predicts");
    return v;
  }
  if (std::find(runtimes_.begin(), runtimes_.end(), q.runtime) != runtimes_.end()) return std::nullopt;
  std::string trained;
  for (const auto& r : runtimes_) trained += (trained.empty() ? "" : ", ") + r;
  v.flag(OodReason::UntrainedRuntime, std::string(whose) + " training rows ran on " + trained + ", not on runtime '" +
                                          q.runtime + "', so the roofline predicts");
  return v;
}

Verdict TrainingDomain::correct(double margin, std::string_view whose) const {
  Verdict v;
  v.correction = held(margin);
  if (v.correction != margin)
    v.warn(std::string(whose) + " correction was held to the range seen in training (x" +
           std::to_string(std::exp(v.correction)).substr(0, 5) + ")");
  return v;
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

void TrainingDomain::judge(const RowQuery& q, std::span<const float> row, const std::vector<bool>& used,
                           Verdict& v) const {
  const std::string& family = q.family;
  const FamilyAccuracy* acc = accuracy_for(family, q.device_id);
  if (!acc || acc->rows <= 0) {
    auto held = accuracy_.families.find(family);
    acc = held != accuracy_.families.end() ? &held->second : nullptr;
  }
  v.uncertainty = acc && acc->rows > 0 ? acc->mape : q.fallback;
  if (std::find(families_.begin(), families_.end(), family) == families_.end())
    v.flag(OodReason::UntrainedFamily, "no measured rows of device family '" + family + "' were trained on");
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
  if (!outside.empty()) v.flag(OodReason::FeatureRange, "outside the training rows' range: " + outside);
  if (v.flagged()) v.uncertainty *= 2;
}

std::vector<std::size_t> TrainingDomain::undeclined(
    std::span<const RowQuery> queries, FeatureRows rows, std::string_view whose, std::vector<Verdict>& out,
    const std::function<std::optional<Verdict>(const RowQuery&)>& decline) const {
  out.assign(queries.size(), Verdict{});
  std::vector<std::size_t> take;
  for (std::size_t i = 0; i < queries.size(); ++i) {
    std::optional<Verdict> declined = untrained_runtime(queries[i], whose);
    if (!declined && decline) declined = decline(queries[i]);
    if (declined) out[i] = std::move(*declined);
    else take.push_back(i);
  }
  if (!take.empty() && rows.size() != queries.size())
    throw internal_error(std::string(whose) + " model was given " + std::to_string(rows.size()) + " feature rows for " +
                         std::to_string(queries.size()) + " device rows");
  return take;
}

std::vector<Verdict> TrainingDomain::verdicts(std::span<const RowQuery> queries, FeatureRows rows, std::string_view whose,
                                              const std::vector<bool>& used,
                                              const std::function<std::vector<double>(FeatureRows)>& margins,
                                              const std::function<void(Verdict&)>& note) const {
  std::vector<Verdict> out;
  const std::vector<std::size_t> take = undeclined(queries, rows, whose, out);
  if (take.empty()) return out;
  std::vector<float> keep;
  const std::vector<double> m = margins(rows.only(take, keep));
  if (m.size() != take.size()) throw internal_error(std::string(whose) + " model gave a margin count that is not its row count");
  for (std::size_t k = 0; k < take.size(); ++k) {
    Verdict v = correct(m[k], whose);
    if (note) note(v);
    judge(queries[take[k]], rows[take[k]], used, v);
    out[take[k]] = std::move(v);
  }
  return out;
}

}  // namespace perfcard
