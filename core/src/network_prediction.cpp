#include "perfcard/network_prediction.h"

#include "perfcard/error.h"

namespace perfcard {

const nn::Tensor2& embedded(const nn::Tensor2& e, std::string_view network) {
  if (e.size() == 0)
    throw internal_error("the " + std::string(network) + " was asked to predict on a state it did not embed");
  return e;
}

PredictorOutput network_prediction(const RooflinePredictor& roofline, const TrainingDomain& domain,
                                   const LearnedPrepared& p, const DeviceQuery& q,
                                   const std::function<double(std::span<const float>)>& margin,
                                   const std::string& name, const std::string& version, std::string_view network) {
  if (auto declined = domain.untrained_runtime(roofline, p, q, std::string(network) + "'s")) return std::move(*declined);
  RooflineResult r = roofline.time(p, q);
  const std::vector<float> row = p.features.row(*q.device, q, r);
  PredictorOutput out = domain.correct(std::move(r), margin(row), std::string(network) + "'s");
  out.predictor = name;
  out.version = version;
  if (p.unknown_ops > 0)
    out.flag(OodReason::UnknownOps, std::to_string(p.unknown_ops) + " nodes have op types " + std::string(network) +
                                        " has no embedding for");
  std::string family;
  roofline.constants().family_of(*q.device, &family);
  domain.judge(*q.device, family, row, {}, roofline.uncertainty(*q.device, p.subject.runtime, nullptr), out);
  return out;
}

}  // namespace perfcard
