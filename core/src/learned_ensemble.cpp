#include "perfcard/learned_ensemble.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "perfcard/error.h"
#include "perfcard/features.h"
#include "perfcard/operator_graph.h"

namespace perfcard {

inline constexpr std::int64_t kEnsembleVersion = 1;

namespace {

// The learned members an ensemble file may name, in this order, after the roofline.
constexpr std::string_view kLearned[] = {"trees", "gnn", "transformer"};

// The loaded model called `name` whose version is `version`.
std::shared_ptr<const LearnedModel> member(std::span<const std::shared_ptr<const LearnedModel>> loaded,
                                           std::string_view name, std::string_view version) {
  for (const auto& p : loaded) {
    if (!p || p->name() != name) continue;
    if (p->version() != version)
      throw data_error("the ensemble was fitted with " + std::string(name) + " " + std::string(version) +
                       "; the loaded one is " + p->version() + " (refit it: scripts/training/ensemble.py)");
    return p;
  }
  throw data_error("the ensemble combines the roofline with " + std::string(name) + "; load " + std::string(name) +
                   ".pcwt before ensemble.pcwt");
}

}  // namespace

LearnedEnsemble::LearnedEnsemble(const WeightsFile& f, const CoreSchemas& core,
                             std::span<const std::shared_ptr<const LearnedModel>> loaded) {
  f.require_predictor("ensemble", kEnsembleVersion);
  f.require_schema_hash(core.features);
  f.require_schema_hash(core.graph, "graph_schema.hash");
  const auto& members = f.get_strings("ensemble.members");
  const auto& versions = f.get_strings("ensemble.member_versions");
  // The roofline, then learned members in kLearned's order (each at most once), the GNN among them.
  bool ordered = members.size() >= 2 && members[0] == "roofline" && versions.size() == members.size();
  for (std::size_t i = 1, at = 0; ordered && i < members.size(); ++i) {
    while (at < std::size(kLearned) && kLearned[at] != members[i]) ++at;
    ordered = at++ < std::size(kLearned);
  }
  // The embedding that places a model among the training models: the GNN's graph embedding (files before
  // "ood.embedding" existed) or the transformer's kernel-sequence embedding; its member must be there.
  const MetaValue* source = f.find("ood.embedding");
  const std::string embedding = source ? std::string(f.get_string("ood.embedding")) : "graph";
  if (embedding != "graph" && embedding != "sequence")
    throw data_error("ood.embedding is '" + embedding + "'; expected graph or sequence");
  const char* placer = embedding == "sequence" ? "transformer" : "gnn";
  if (!ordered || std::find(members.begin(), members.end(), placer) == members.end())
    throw data_error("ensemble.members must be the roofline, then some of trees, gnn, transformer in that order "
                     "(the " + std::string(placer) + " among them: its " + embedding +
                     " embedding places a model), each with its version in ensemble.member_versions");
  if (versions[0] != core.roofline)
    throw data_error("the ensemble was fitted with roofline " + versions[0] + "; this build's is " + core.roofline);
  for (std::size_t i = 1; i < members.size(); ++i) {
    auto p = member(loaded, members[i], versions[i]);
    const auto* c = dynamic_cast<const RooflineCorrection*>(p.get());
    if (!c) throw internal_error("the loaded '" + members[i] + "' predictor is not a correction of the roofline");
    if (members[i] == placer) placer_ = members_.size();
    reads_graph_ = reads_graph_ || p->reads_graph();
    reads_sequence_ = reads_sequence_ || p->reads_sequence();
    corrections_.push_back(c);
    members_.push_back(std::move(p));
  }

  const auto& groups = f.get_strings("ensemble.groups");
  const std::int64_t G = std::int64_t(groups.size()), M = std::int64_t(members.size());
  const auto w = f.tensor("group.weights", WDType::F32, {G, M}).f32();
  const auto base = f.tensor("group.band_base", WDType::F32, {G}).f32();
  const auto spread = f.tensor("group.band_spread", WDType::F32, {G}).f32();
  for (std::int64_t g = 0; g < G; ++g) {
    const std::string& gname = groups[std::size_t(g)];
    Group grp;
    double sum = 0;
    for (std::int64_t i = 0; i < M; ++i) {
      const double v = w[std::size_t(g * M + i)];
      if (!(v >= 0) || !std::isfinite(v)) throw data_error("group.weights of '" + gname + "' has a value that is not >= 0");
      grp.weights.push_back(v);
      sum += v;
    }
    if (std::abs(sum - 1) > 1e-3) throw data_error("group.weights of '" + gname + "' do not sum to 1");
    grp.band_base = base[std::size_t(g)];
    grp.band_spread = spread[std::size_t(g)];
    if (!(grp.band_base >= 0) || !(grp.band_spread >= 0) || !std::isfinite(grp.band_base + grp.band_spread))
      throw data_error("the band of '" + gname + "' is not made of finite numbers >= 0");
    groups_[gname] = std::move(grp);
  }
  if (!groups_.count("gpu") || !groups_.count("cpu")) throw data_error("ensemble.groups must name gpu and cpu");
  coverage_ = f.get_float("band.coverage");
  if (!(coverage_ > 0 && coverage_ < 1)) throw data_error("band.coverage must lie between 0 and 1");

  const TensorInfo& c = f.tensor("ood.centroids", WDType::F32, {-1, -1});
  dims_ = std::size_t(c.dims[1]);
  const auto cv = c.f32();
  centroids_.assign(cv.begin(), cv.end());
  const auto sv = f.tensor("ood.scale", WDType::F32, {std::int64_t(dims_)}).f32();
  scale_.assign(sv.begin(), sv.end());
  for (float s : scale_)
    if (!(s > 0)) throw data_error("ood.scale has a value that is not > 0");
  if (centroids_.empty()) throw data_error("ood.centroids is empty");
  threshold_ = f.get_float("ood.threshold");
  if (!(threshold_ > 0) || !std::isfinite(threshold_)) throw data_error("ood.threshold must be a finite number > 0");

  domain_ = TrainingDomain(f, feature_schema().size());
  version_ = "ensemble-" + std::to_string(kEnsembleVersion) + "." + std::string(f.get_string("training.date"));
}

double LearnedEnsemble::embedding_distance(std::span<const float> e) const {
  if (e.size() != dims_)
    throw data_error("a model embedding of " + std::to_string(e.size()) + " values; the ensemble's centroids have " +
                     std::to_string(dims_));
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < centroids_.size() / dims_; ++k) {
    double d = 0;
    for (std::size_t j = 0; j < dims_; ++j) {
      const double z = (double(e[j]) - centroids_[k * dims_ + j]) / scale_[j];
      d += z * z;
    }
    best = std::min(best, d);
  }
  return std::sqrt(best / double(dims_));
}

std::span<const float> LearnedEnsemble::ood_embedding(const LearnedState& state) const {
  const auto* s = dynamic_cast<const EnsembleState*>(&state);
  if (!s || placer_ >= s->members.size())
    throw internal_error("the ensemble was asked to place a model with a state another model prepared");
  return embedded(*s->members[placer_], members_[placer_]->name() == "gnn" ? "GNN" : "transformer").values();
}

std::shared_ptr<const LearnedState> LearnedEnsemble::prepare(const ModelInputs& in) const {
  auto s = std::make_shared<EnsembleState>();
  for (const auto& m : members_) s->members.push_back(m->prepare(in));
  s->unknown_ops = in.unknown_ops;
  if (in.graph || in.sequence) s->distance = embedding_distance(ood_embedding(*s));
  return s;
}

std::vector<Verdict> LearnedEnsemble::decide(const LearnedState& state, std::span<const RowQuery> queries,
                                             FeatureRows rows) const {
  const auto* s = dynamic_cast<const EnsembleState*>(&state);
  if (!s) throw internal_error("the ensemble was asked to predict on a state another model prepared");
  std::vector<Verdict> out;
  const std::vector<std::size_t> take =
      domain_.undeclined(queries, rows, "the ensemble's", out, [&](const RowQuery& q) -> std::optional<Verdict> {
        if (domain_.accuracy().count(q.family)) return std::nullopt;
        Verdict v;
        v.roofline = true;
        v.uncertainty = 1;
        v.flag(OodReason::NoHeldOutRows, "no held-out rows of device family '" + q.family +
                                             "' measure the learned predictors' error, so the roofline predicts");
        return v;
      });
  if (take.empty()) return out;
  if (std::isnan(s->distance)) throw internal_error("the ensemble was asked to predict on a state it did not embed");
  // One feature row serves every member; the members' corrections are what their decide() applies.
  std::vector<float> keep;
  const FeatureRows taken = rows.only(take, keep);
  std::vector<std::vector<double>> member;
  for (std::size_t i = 0; i < corrections_.size(); ++i) {
    member.push_back(corrections_[i]->corrections(*s->members[i], taken));
    if (member.back().size() != take.size())
      throw internal_error("the ensemble's member " + members_[i]->name() + " gave a correction count that is not its row count");
  }
  for (std::size_t k = 0; k < take.size(); ++k) {
    const RowQuery& q = queries[take[k]];
    const double base = std::log(std::max(q.roofline_ms, 1e-12));
    auto own = groups_.find(q.family);
    const Group& grp = own != groups_.end() ? own->second : groups_.at(q.gpu ? "gpu" : "cpu");
    double mixed = grp.weights[0] * base, sum = 0, squares = 0;
    for (std::size_t i = 0; i < member.size(); ++i) {
      const double c = member[i][k];
      mixed += grp.weights[i + 1] * (base + c);
      sum += c;
      squares += c * c;
    }
    const double n = double(member.size());
    const double spread = std::sqrt(std::max(0.0, squares / n - (sum / n) * (sum / n)));  // population std

    Verdict v = domain_.correct(mixed - base, "the ensemble's");
    domain_.judge(q, taken[k], {}, v);
    if (s->unknown_ops > 0)
      v.flag(OodReason::UnknownOps, std::to_string(s->unknown_ops) + " nodes have op types the learned predictors never saw");
    if (s->distance > threshold_)
      v.flag(OodReason::EmbeddingDistance, "the graph is far from every graph trained on (distance " +
                                               three_digits(s->distance) + "; the training graphs lie within " +
                                               three_digits(threshold_) + ")");
    double half = grp.band_base + grp.band_spread * spread;
    if (v.flagged()) half *= 2;  // as the uncertainty: nothing measured says how far it errs there
    v.band_half = half;
    v.band_coverage = coverage_;
    out[take[k]] = std::move(v);
  }
  return out;
}

}  // namespace perfcard
