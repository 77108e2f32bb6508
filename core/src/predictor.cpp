#include "perfcard/predictor.h"

namespace perfcard {

PredictorOutput RooflinePredictor::predict(const PredictorInput& in) const {
  RooflineOptions o;
  o.precision = in.precision;
  o.runtime = in.runtime;
  o.compute_scale = in.compute_scale;
  o.bandwidth_scale = in.bandwidth_scale;
  o.keep_kernels = in.keep_kernels;
  o.threads = in.threads;
  RooflineResult r = in.plan && in.plan->runtime == o.runtime && in.plan->precision == o.precision
                        ? roofline_latency(*in.plan, in.device, c_, o)
                        : roofline_latency(in.model, in.analysis, in.device, c_, o);
  PredictorOutput out;
  out.latency_ms = r.latency_ms;
  out.busy_fraction = r.latency_ms > 0 ? r.gpu_busy_ms / r.latency_ms : 0;
  out.intensity = r.intensity;
  out.kernels = std::move(r.kernels);
  out.warnings = std::move(r.warnings);
  std::string family;
  c_.family_of(in.device, &family);
  auto it = c_.accuracy.find(family);
  if (it != c_.accuracy.end() && it->second.rows > 0) out.uncertainty = it->second.mape;
  else out.warnings.push_back("no held-out accuracy is recorded for device family '" + family + "'");
  return out;
}

}  // namespace perfcard
