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

std::vector<double> LearnedTrees::margins(FeatureRows rows) const {
  std::vector<double> m(rows.size());
  trees_->margins(rows.values, m);
  return m;
}

std::vector<Verdict> LearnedTrees::decide(const LearnedState&, std::span<const RowQuery> queries, FeatureRows rows) const {
  return domain_.verdicts(queries, rows, "the trees'", used_, [&](FeatureRows r) { return margins(r); });
}

std::vector<double> LearnedTrees::corrections(const LearnedState&, FeatureRows rows) const {
  std::vector<double> c = margins(rows);
  for (double& v : c) v = domain_.held(v);
  return c;
}

}  // namespace perfcard
