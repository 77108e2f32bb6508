#include "perfcard/trees_predictor.h"

#include <algorithm>
#include <cmath>

#include "perfcard/error.h"

namespace perfcard {

inline constexpr std::int64_t kTreesVersion = 1;

TreesPredictor::TreesPredictor(const WeightsFile& w, std::shared_ptr<const RooflinePredictor> roofline,
                               const NetworkBackend& networks)
    : roofline_(std::move(roofline)) {
  if (!roofline_) throw internal_error("the trees predictor needs the roofline it corrects");
  w.require_predictor("trees", kTreesVersion);
  w.require_schema_hash(feature_schema_hash());
  const std::size_t n = feature_schema().size();
  trees_ = networks.trees(w, n);
  version_ = "trees-" + std::to_string(kTreesVersion) + "." + std::string(w.get_string("training.date"));
  provenance_ = std::string(w.get_string("training.provenance"));
  domain_ = TrainingDomain(w, n);
  used_ = trees_->used_features();
}

std::unique_ptr<Prepared> TreesPredictor::prepare(const PredictorSubject& s) const {
  auto base = roofline_->prepare(s);
  auto& plan = as_roofline_prepared(*base).plan;
  return std::make_unique<FeaturePrepared>(s, std::move(plan));
}

PredictorOutput TreesPredictor::predict(const Prepared& prepared, const DeviceQuery& q) const {
  const auto* p = dynamic_cast<const FeaturePrepared*>(&prepared);
  if (!p) throw internal_error("a trees prediction was asked with state prepared by another predictor");
  if (auto declined = domain_.untrained_runtime(*roofline_, *p, q, "the trees'")) return std::move(*declined);
  RooflineResult r = roofline_->time(*p, q);
  const std::vector<float> row = p->features.row(*q.device, q, r);
  const double margin = trees_->margin(row);
  PredictorOutput out = domain_.correct(std::move(r), margin, "the trees'");
  out.predictor = name();
  out.version = version_;
  std::string family;
  roofline_->constants().family_of(*q.device, &family);
  domain_.judge(*q.device, family, row, used_, roofline_->uncertainty(*q.device, p->subject.runtime, nullptr), out);
  return out;
}

}  // namespace perfcard
