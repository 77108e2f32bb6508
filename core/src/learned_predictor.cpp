#include "perfcard/learned_predictor.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "perfcard/error.h"
#include "perfcard/kernel_sequence.h"
#include "perfcard/operator_graph.h"

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

std::pair<double, double> PredictorOutput::shown_band() const {
  if (band_coverage > 0) return {band_low_ms, band_high_ms};
  return {latency_ms / (1 + uncertainty), latency_ms * (1 + uncertainty)};
}

bool TrainingAccuracy::trained_on(const std::string& device_id) const {
  return std::binary_search(devices.begin(), devices.end(), device_id);
}

const FamilyAccuracy* TrainingAccuracy::accuracy_for(const std::string& family, const std::string& device_id) const {
  const auto& by = trained_on(device_id) ? families : unseen;
  auto it = by.find(family);
  return it == by.end() ? nullptr : &it->second;
}

bool TrainingAccuracy::beats_roofline_somewhere() const {
  auto any = [](const std::map<std::string, FamilyAccuracy>& by) {
    return std::any_of(by.begin(), by.end(), [](const auto& f) { return f.second.beats_roofline; });
  };
  // A file without training.devices never says a device was trained on: its held-out-family figures
  // never apply.
  return (!devices.empty() && any(families)) || any(unseen);
}

std::vector<PredictorOutput> Predictor::predict_many(const Prepared& prepared, std::span<const DeviceQuery> queries) const {
  std::vector<PredictorOutput> out;
  out.reserve(queries.size());
  for (const DeviceQuery& q : queries) out.push_back(predict(prepared, q));
  return out;
}

const std::map<std::string, FamilyAccuracy>& Predictor::accuracy() const {
  static const std::map<std::string, FamilyAccuracy> none;
  const TrainingAccuracy* a = training_accuracy();
  return a ? a->families : none;
}

const FamilyAccuracy* Predictor::accuracy_for(const std::string& family, const std::string& device_id) const {
  const TrainingAccuracy* a = training_accuracy();
  return a ? a->accuracy_for(family, device_id) : nullptr;
}

bool Predictor::beats_roofline_somewhere() const {
  const TrainingAccuracy* a = training_accuracy();
  return a && a->beats_roofline_somewhere();
}

const LearnedState& LearnedPrepared::state_of(const LearnedModel& model) const {
  for (const auto& [m, s] : states)
    if (m == &model) return *s;
  throw internal_error("the " + model.name() + " predictor was asked to predict on a state it did not prepare");
}

std::unique_ptr<LearnedPrepared> prepare_learned(const PredictorSubject& subject, const RooflinePredictor& roofline,
                                                 std::span<const LearnedModel* const> models) {
  auto base = roofline.prepare(subject);
  auto p = std::make_unique<LearnedPrepared>(subject, std::move(as_roofline_prepared(*base).plan));
  // The learned models trained on inference runs: a training step is the roofline's alone (every model
  // declines it), so nothing is built for them to read.
  const bool inference = subject.mode != Mode::Training;
  const bool graph = inference && std::any_of(models.begin(), models.end(), [](auto* m) { return m && m->reads_graph(); });
  const bool sequence =
      inference && std::any_of(models.begin(), models.end(), [](auto* m) { return m && m->reads_sequence(); });
  const std::int64_t samples = std::max<std::int64_t>(1, subject.samples);
  std::optional<OperatorGraph> g;
  std::optional<KernelSequence> seq;
  if (graph) g = operator_graph(*subject.model, *subject.analysis, samples);
  if (sequence) seq = kernel_sequence(*subject.model, p->plan, samples);
  ModelInputs in;
  if (inference) {
    in.graph = g ? &*g : nullptr;
    in.sequence = seq ? &*seq : nullptr;
    in.unknown_ops = unknown_op_count(*subject.model);
  }
  for (const LearnedModel* m : models)
    if (m) p->states.emplace_back(m, m->prepare(in));
  return p;
}

CoreSchemas core_schemas(const RooflinePredictor& roofline) {
  return {roofline.version(), feature_schema_hash(), graph_schema_hash(), sequence_schema_hash()};
}

const LearnedPrepared& as_learned_prepared(const Prepared& p, std::string_view who) {
  const auto* l = dynamic_cast<const LearnedPrepared*>(&p);
  if (!l) throw internal_error("a " + std::string(who) + " prediction was asked with state prepared by another predictor");
  return *l;
}

LearnedPredictor::LearnedPredictor(std::shared_ptr<const LearnedModel> model, std::shared_ptr<const RooflinePredictor> roofline)
    : model_(std::move(model)), roofline_(std::move(roofline)) {
  if (!model_ || !roofline_) throw internal_error("a learned predictor needs its model and the roofline it corrects");
}

std::unique_ptr<Prepared> LearnedPredictor::prepare(const PredictorSubject& s) const {
  const LearnedModel* self = model_.get();
  return prepare_learned(s, *roofline_, std::span<const LearnedModel* const>(&self, 1));
}

PredictorOutput LearnedPredictor::predict(const Prepared& prepared, const DeviceQuery& q) const {
  return std::move(predict_many(prepared, std::span<const DeviceQuery>(&q, 1)).front());
}

std::vector<PredictorOutput> LearnedPredictor::predict_many(const Prepared& prepared,
                                                            std::span<const DeviceQuery> queries) const {
  const LearnedPrepared& p = as_learned_prepared(prepared, name());
  std::vector<RowQuery> rq(queries.size());
  // One roofline pass per device serves the row the model corrects and the row it declines to.
  std::vector<std::optional<RooflineResult>> r(queries.size());
  std::vector<float> rows;
  std::size_t width = 0;
  for (std::size_t i = 0; i < queries.size(); ++i) {
    const DeviceQuery& q = queries[i];
    if (!q.device) throw internal_error("a prediction was asked without a device");
    const Device& device = *q.device;
    rq[i].training_step = p.subject.mode == Mode::Training;
    rq[i].host_given = q.host_us >= 0;
    rq[i].runtime = p.subject.runtime;
    roofline_->constants().family_of(device, &rq[i].family);
    rq[i].device_id = device.id;
    rq[i].gpu = device.is_gpu();
    rq[i].fallback = roofline_->uncertainty(device, p.subject.runtime, nullptr);
    if (rq[i].training_step) continue;
    r[i] = roofline_->time(p, q);
    rq[i].roofline_ms = r[i]->latency_ms;
    const std::vector<float> row = p.features.row(device, q, *r[i]);
    width = row.size();
    rows.insert(rows.end(), row.begin(), row.end());
  }
  const std::vector<Verdict> v = model_->decide(p.state_of(*model_), rq, FeatureRows{rows, width});
  if (v.size() != queries.size())
    throw internal_error("the " + name() + " predictor gave " + std::to_string(v.size()) + " verdicts for " +
                         std::to_string(queries.size()) + " device rows");
  std::vector<PredictorOutput> out;
  out.reserve(queries.size());
  for (std::size_t i = 0; i < queries.size(); ++i) out.push_back(applied(v[i], r[i], p, queries[i]));
  return out;
}

PredictorOutput LearnedPredictor::applied(const Verdict& v, std::optional<RooflineResult>& r, const LearnedPrepared& p,
                                          const DeviceQuery& q) const {
  PredictorOutput out;
  if (v.roofline) {
    out = r ? roofline_->output(std::move(*r), p.subject, *q.device) : roofline_->predict(p, q);
  } else {
    if (!r) throw internal_error("the " + name() + " predictor corrected a training step, which it never trained on");
    // The device stays as busy as the roofline says; the wall time is what a learned model corrects.
    out.warnings = std::move(r->warnings);
    out.baseline_ms = r->latency_ms;
    out.latency_ms = r->latency_ms * std::exp(v.correction);
    out.busy_ms = std::min(r->gpu_busy_ms, out.latency_ms);
    out.busy_fraction = out.latency_ms > 0 ? out.busy_ms / out.latency_ms : 0;
    out.intensity = r->intensity;
    out.kernels = std::move(r->kernels);
    out.predictor = name();
    out.version = version();
  }
  for (const VerdictNote& n : v.notes) {
    if (n.reason) out.flag(*n.reason, n.words);
    else out.warnings.push_back(n.words);
  }
  if (v.roofline) {
    out.uncertainty *= v.uncertainty;
    return out;
  }
  out.uncertainty = v.uncertainty;
  if (v.band_coverage > 0) {
    out.band_low_ms = out.latency_ms * std::exp(-v.band_half);
    out.band_high_ms = out.latency_ms * std::exp(v.band_half);
    out.band_coverage = v.band_coverage;
  }
  return out;
}

}  // namespace perfcard
