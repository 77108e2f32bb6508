#include "perfcard/learned_gnn.h"

#include "perfcard/error.h"
#include "perfcard/features.h"

namespace perfcard {

inline constexpr std::int64_t kGnnVersion = 1;

LearnedGnn::LearnedGnn(const WeightsFile& f, const CoreSchemas& core, const NetworkBackend& networks)
    : network_([&] {
        f.require_predictor("gnn", kGnnVersion);
        f.require_schema_hash(core.features);
        f.require_schema_hash(core.graph, "graph_schema.hash");
        return networks.graph(f);
      }()),
      domain_(f, feature_schema().size()) {
  version_ = "gnn-" + std::to_string(kGnnVersion) + "." + std::string(f.get_string("training.date")) + "." +
             network_->storage();
}

std::shared_ptr<const LearnedState> LearnedGnn::prepare(const ModelInputs& in) const {
  auto s = std::make_shared<EmbeddedState>();
  s->unknown_ops = in.unknown_ops;
  if (in.graph) s->embedding = cache_.get(*in.graph, [&](const OperatorGraph& x) { return network_->embed(x); });
  return s;
}

double LearnedGnn::correction(const LearnedState& state, std::span<const float> row) const {
  return domain_.held(network_->head(embedded(state, "GNN"), row));
}

Verdict LearnedGnn::decide(const LearnedState& state, const RowQuery& q, std::span<const float> row) const {
  const auto* s = dynamic_cast<const EmbeddedState*>(&state);
  if (!s) throw internal_error("the GNN was asked to predict on a state another model prepared");
  // embedded() inside the margin: a row declined first (a training step, another runtime) needs no embedding
  return network_verdict(domain_, *s, q, row, [&] { return network_->head(embedded(state, "GNN"), row); },
                         "the GNN");
}

}  // namespace perfcard
