#include "perfcard/learned_embedding.h"

#include <type_traits>

#include "perfcard/error.h"
#include "perfcard/features.h"

namespace perfcard {
namespace {

inline constexpr std::int64_t kEmbeddingVersion = 1;  // of the GNN's and the transformer's files alike

// What tells the two apart: the predictor's name, its name in words, its input's schema, where its input
// comes from.
template <class Input>
struct EmbeddingInput;

template <>
struct EmbeddingInput<OperatorGraph> {
  static constexpr const char* name = "gnn";
  static constexpr const char* words = "GNN";
  static constexpr const char* schema_key = "graph_schema.hash";
  static const std::string& schema(const CoreSchemas& c) { return c.graph; }
  static const OperatorGraph* input(const ModelInputs& in) { return in.graph; }
  static auto network(const NetworkBackend& b, const WeightsFile& f) { return b.graph(f); }
};

template <>
struct EmbeddingInput<KernelSequence> {
  static constexpr const char* name = "transformer";
  static constexpr const char* words = "transformer";
  static constexpr const char* schema_key = "sequence_schema.hash";
  static const std::string& schema(const CoreSchemas& c) { return c.sequence; }
  static const KernelSequence* input(const ModelInputs& in) { return in.sequence; }
  static auto network(const NetworkBackend& b, const WeightsFile& f) { return b.sequence(f); }
};

}  // namespace

template <class Input>
LearnedEmbedding<Input>::LearnedEmbedding(const WeightsFile& f, const CoreSchemas& core, const NetworkBackend& networks)
    : network_([&] {
        using In = EmbeddingInput<Input>;
        f.require_predictor(In::name, kEmbeddingVersion);
        f.require_schema_hash(core.features);
        f.require_schema_hash(In::schema(core), In::schema_key);
        return In::network(networks, f);
      }()),
      domain_(f, feature_schema().size()) {
  version_ = std::string(EmbeddingInput<Input>::name) + "-" + std::to_string(kEmbeddingVersion) + "." +
             std::string(f.get_string("training.date")) + "." + network_->storage();
}

template <class Input>
std::string LearnedEmbedding<Input>::name() const {
  return EmbeddingInput<Input>::name;
}

template <class Input>
bool LearnedEmbedding<Input>::reads_graph() const {
  return std::is_same_v<Input, OperatorGraph>;
}

template <class Input>
std::shared_ptr<const LearnedState> LearnedEmbedding<Input>::prepare(const ModelInputs& in) const {
  auto s = std::make_shared<EmbeddedState>();
  s->unknown_ops = in.unknown_ops;
  if (const Input* x = EmbeddingInput<Input>::input(in))
    s->embedding = cache_.get(*x, [&](const Input& i) { return network_->embed(i); });
  return s;
}

template <class Input>
std::vector<double> LearnedEmbedding<Input>::margins(const LearnedState& state, FeatureRows rows) const {
  std::vector<double> m(rows.size());
  if (m.empty()) return m;
  const nn::Tensor2& e = embedded(state, EmbeddingInput<Input>::words);
  for (std::size_t i = 0; i < m.size(); ++i) m[i] = network_->head(e, rows[i]);
  return m;
}

template <class Input>
std::vector<double> LearnedEmbedding<Input>::corrections(const LearnedState& state, FeatureRows rows) const {
  std::vector<double> c = margins(state, rows);
  for (double& v : c) v = domain_.held(v);
  return c;
}

template <class Input>
std::vector<Verdict> LearnedEmbedding<Input>::decide(const LearnedState& state, std::span<const RowQuery> queries,
                                                     FeatureRows rows) const {
  const std::string words = EmbeddingInput<Input>::words;
  const auto* s = dynamic_cast<const EmbeddedState*>(&state);
  if (!s) throw internal_error("the " + words + " was asked to predict on a state another model prepared");
  // Margins only for the rows not declined: a training step, which every model declines, has no embedding.
  return network_verdicts(domain_, *s, queries, rows, [&](FeatureRows r) { return margins(state, r); }, "the " + words);
}

template class LearnedEmbedding<OperatorGraph>;
template class LearnedEmbedding<KernelSequence>;

}  // namespace perfcard
