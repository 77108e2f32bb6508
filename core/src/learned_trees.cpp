#include "perfcard/learned_trees.h"

#include "perfcard/features.h"

namespace perfcard {

inline constexpr std::int64_t kTreesVersion = 1;

LearnedTrees::LearnedTrees(const WeightsFile& w, const CoreSchemas& core, const NetworkBackend& networks) {
  w.require_predictor("trees", kTreesVersion);
  w.require_schema_hash(core.features);
  const std::size_t n = feature_schema().size();
  trees_ = networks.trees(w, n);
  version_ = "trees-" + std::to_string(kTreesVersion) + "." + std::string(w.get_string("training.date"));
  domain_ = TrainingDomain(w, n);
  used_ = trees_->used_features();
}

std::shared_ptr<const LearnedState> LearnedTrees::prepare(const ModelInputs&) const {
  // The trees read the feature row alone: nothing to keep per subject.
  return std::make_shared<LearnedState>();
}

Verdict LearnedTrees::decide(const LearnedState&, const RowQuery& q, std::span<const float> row) const {
  if (auto declined = domain_.untrained_runtime(q, "the trees'")) return std::move(*declined);
  Verdict v = domain_.correct(trees_->margin(row), "the trees'");
  domain_.judge(q, row, used_, v);
  return v;
}

}  // namespace perfcard
