#include "perfcard/roofline_predictor.h"

#include <algorithm>

#include "perfcard/error.h"
#include "perfcard/training_step.h"

namespace perfcard {

const RooflinePrepared& as_roofline_prepared(const Prepared& p) {
  const auto* r = dynamic_cast<const RooflinePrepared*>(&p);
  if (!r) throw internal_error("a prediction was asked with state prepared by another predictor");
  return *r;
}

std::unique_ptr<Prepared> RooflinePredictor::prepare(const PredictorSubject& s) const {
  if (!s.model || !s.analysis) throw internal_error("prepare() needs a model and its analysis");
  if (s.mode == Mode::Training)
    return std::make_unique<RooflinePrepared>(
        s, plan_training_step(*s.model, *s.analysis, c_, s.runtime, s.precision, s.optimizer));
  return std::make_unique<RooflinePrepared>(s, plan_kernels(*s.model, *s.analysis, c_, s.runtime, s.precision));
}

RooflineResult RooflinePredictor::time(const RooflinePrepared& p, const DeviceQuery& q) const {
  if (!q.device) throw internal_error("a prediction was asked without a device");
  RooflineOptions o;
  o.precision = p.subject.precision;
  o.runtime = p.subject.runtime;
  o.compute_scale = q.compute_scale;
  o.bandwidth_scale = q.bandwidth_scale;
  o.keep_kernels = q.keep_kernels;
  o.threads = q.threads;
  o.dispatch_us = q.host_us;
  return roofline_latency(p.plan, *q.device, c_, o);
}

double RooflinePredictor::uncertainty(const Device& device, std::string_view runtime,
                                      std::vector<std::string>* warnings) const {
  std::string family;
  c_.family_of(device, &family);
  auto it = c_.accuracy.find(family);
  const bool known = it != c_.accuracy.end() && it->second.rows > 0;
  auto rt = c_.runtime_accuracy.find(std::string(runtime));
  if (rt != c_.runtime_accuracy.end() && rt->second.note.rows > 0) {
    const auto& fams = rt->second.families;
    if (std::find(fams.begin(), fams.end(), family) != fams.end() || !known) return rt->second.note.mape;
    return std::max(rt->second.note.mape, it->second.mape);
  }
  if (known) return it->second.mape;
  if (warnings) warnings->push_back("no held-out accuracy is recorded for device family '" + family + "'");
  return 0;
}

PredictorOutput RooflinePredictor::predict(const Prepared& prepared, const DeviceQuery& q) const {
  RooflineResult r = time(as_roofline_prepared(prepared), q);  // throws without a device
  return output(std::move(r), prepared.subject, *q.device);
}

PredictorOutput RooflinePredictor::output(RooflineResult r, const PredictorSubject& subject, const Device& device) const {
  PredictorOutput out;
  out.latency_ms = r.latency_ms;
  out.busy_ms = r.gpu_busy_ms;
  out.busy_ms_by_phase = r.busy_ms_by_phase;
  out.busy_fraction = r.latency_ms > 0 ? r.gpu_busy_ms / r.latency_ms : 0;
  out.intensity = r.intensity;
  out.baseline_ms = r.latency_ms;
  out.predictor = name();
  out.version = version();
  out.kernels = std::move(r.kernels);
  out.warnings = std::move(r.warnings);
  out.uncertainty = subject.mode == Mode::Training ? training_uncertainty(device, out.warnings)
                                                   : uncertainty(device, subject.runtime, &out.warnings);
  return out;
}

void widen_for_host(PredictorOutput& out, const RooflineConstants& constants, std::string_view runtime, Mode mode) {
  if (mode == Mode::Training || !host_bound(out.busy_ms, out.latency_ms)) return;
  auto hb = constants.host_bound_accuracy.find(std::string(runtime));
  if (hb == constants.host_bound_accuracy.end() || hb->second.rows == 0) return;
  const double u = hb->second.mape;
  out.uncertainty = std::max(out.uncertainty, u);
  // A calibrated band is its own width, not the uncertainty's: it covers at least what it did, and the
  // host's spread, whatever the family's figure.
  if (out.band_coverage > 0) {
    out.band_low_ms = std::min(out.band_low_ms, out.latency_ms / (1 + u));
    out.band_high_ms = std::max(out.band_high_ms, out.latency_ms * (1 + u));
  }
}

double RooflinePredictor::training_uncertainty(const Device& device, std::vector<std::string>& warnings) const {
  std::string family;
  c_.family_of(device, &family);
  auto it = c_.training_accuracy.find(family);
  if (it != c_.training_accuracy.end() && it->second.rows > 0) return it->second.mape;
  it = c_.training_accuracy.find("all");
  if (it != c_.training_accuracy.end() && it->second.rows > 0) {
    warnings.push_back("no training step measured on device family '" + family + "': the error shown is the one over " +
                       std::to_string(it->second.rows) + " training rows of other families");
    return it->second.mape;
  }
  warnings.push_back("no held-out accuracy is recorded for training steps");
  return 0;
}

}  // namespace perfcard
