#include "perfcard/ensemble_predictor.h"

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

// The loaded predictor called `name` whose version is `version`.
std::shared_ptr<const Predictor> member(std::span<const std::shared_ptr<const Predictor>> loaded, std::string_view name,
                                        std::string_view version) {
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

EnsemblePredictor::EnsemblePredictor(const WeightsFile& f, std::shared_ptr<const RooflinePredictor> roofline,
                                     std::span<const std::shared_ptr<const Predictor>> loaded)
    : roofline_(std::move(roofline)) {
  if (!roofline_) throw internal_error("the ensemble needs the roofline it corrects");
  f.require_predictor("ensemble", kEnsembleVersion);
  f.require_schema_hash(feature_schema_hash());
  f.require_schema_hash(graph_schema_hash(), "graph_schema.hash");
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
  sequence_ood_ = embedding == "sequence";
  const char* placer = sequence_ood_ ? "transformer" : "gnn";
  if (!ordered || std::find(members.begin(), members.end(), placer) == members.end())
    throw data_error("ensemble.members must be the roofline, then some of trees, gnn, transformer in that order "
                     "(the " + std::string(placer) + " among them: its " + embedding +
                     " embedding places a model), each with its version in ensemble.member_versions");
  if (versions[0] != roofline_->version())
    throw data_error("the ensemble was fitted with roofline " + versions[0] + "; this build's is " + roofline_->version());
  for (std::size_t i = 1; i < members.size(); ++i) {
    auto p = member(loaded, members[i], versions[i]);
    const auto* c = dynamic_cast<const RooflineCorrection*>(p.get());
    if (!c) throw internal_error("the loaded '" + members[i] + "' predictor is not a correction of the roofline");
    if (const auto* e = dynamic_cast<const Embedder*>(p.get())) embedders_.push_back(e);
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

double EnsemblePredictor::embedding_distance(std::span<const float> e) const {
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

std::span<const float> EnsemblePredictor::ood_embedding(const LearnedPrepared& p) const {
  return (sequence_ood_ ? p.sequence_embedding : p.graph_embedding).values();
}

std::unique_ptr<Prepared> EnsemblePredictor::prepare(const PredictorSubject& s) const {
  const Embedder* self = this;
  return prepare_learned(s, *roofline_, std::span<const Embedder* const>(&self, 1));
}

void EnsemblePredictor::embed_into(LearnedPrepared& p) const {
  for (const Embedder* e : embedders_) e->embed_into(p);
  if (std::isnan(p.ensemble_distance)) p.ensemble_distance = embedding_distance(ood_embedding(p));
}

PredictorOutput EnsemblePredictor::predict(const Prepared& prepared, const DeviceQuery& q) const {
  const LearnedPrepared* p = &as_learned_prepared(prepared, "ensemble");
  std::string family;
  roofline_->constants().family_of(*q.device, &family);
  if (auto declined = domain_.untrained_runtime(*roofline_, *p, q, "the ensemble's")) return std::move(*declined);
  if (!domain_.accuracy().count(family)) {
    PredictorOutput out = roofline_->predict(*p, q);
    out.flag(OodReason::NoHeldOutRows, "no held-out rows of device family '" + family +
                                           "' measure the learned predictors' error, so the roofline predicts");
    return out;
  }
  // One roofline pass and one feature row serve every member (each member's own predict() would time
  // the roofline again); the members' corrections are what their predict() applies.
  RooflineResult r = roofline_->time(*p, q);
  const std::vector<float> row = p->features.row(*q.device, q, r);
  const double base = std::log(std::max(r.latency_ms, 1e-12));
  auto own = groups_.find(family);
  const Group& grp = own != groups_.end() ? own->second : groups_.at(q.device->is_gpu() ? "gpu" : "cpu");
  double mixed = grp.weights[0] * base, sum = 0, squares = 0;
  for (std::size_t i = 0; i < corrections_.size(); ++i) {
    const double c = corrections_[i]->correction(*p, row);
    mixed += grp.weights[i + 1] * (base + c);
    sum += c;
    squares += c * c;
  }
  const double n = double(corrections_.size());
  const double spread = std::sqrt(std::max(0.0, squares / n - (sum / n) * (sum / n)));  // population std

  PredictorOutput out = domain_.correct(std::move(r), mixed - base, "the ensemble's");
  out.predictor = name();
  out.version = version_;
  domain_.judge(*q.device, family, row, {}, roofline_->uncertainty(*q.device, p->subject.runtime, nullptr), out);
  if (p->unknown_ops > 0)
    out.flag(OodReason::UnknownOps, std::to_string(p->unknown_ops) + " nodes have op types the learned predictors never saw");
  if (std::isnan(p->ensemble_distance))
    throw internal_error("the ensemble was asked to predict on a state it did not embed");
  const double distance = p->ensemble_distance;
  if (distance > threshold_)
    out.flag(OodReason::EmbeddingDistance, "the graph is far from every graph trained on (distance " +
                                               three_digits(distance) + "; the training graphs lie within " +
                                               three_digits(threshold_) + ")");
  double half = grp.band_base + grp.band_spread * spread;
  if (out.out_of_distribution) half *= 2;  // as the uncertainty: nothing measured says how far it errs there
  out.band_low_ms = out.latency_ms * std::exp(-half);
  out.band_high_ms = out.latency_ms * std::exp(half);
  out.band_coverage = coverage_;
  return out;
}

}  // namespace perfcard
