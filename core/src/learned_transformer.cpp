#include "perfcard/learned_transformer.h"

#include "perfcard/error.h"
#include "perfcard/features.h"

namespace perfcard {

inline constexpr std::int64_t kTransformerVersion = 1;

LearnedTransformer::LearnedTransformer(const WeightsFile& f, const CoreSchemas& core, const NetworkBackend& networks)
    : network_([&] {
        f.require_predictor("transformer", kTransformerVersion);
        f.require_schema_hash(core.features);
        f.require_schema_hash(core.sequence, "sequence_schema.hash");
        return networks.sequence(f);
      }()),
      domain_(f, feature_schema().size()) {
  version_ = "transformer-" + std::to_string(kTransformerVersion) + "." + std::string(f.get_string("training.date")) + "." +
             network_->storage();
}

std::shared_ptr<const LearnedState> LearnedTransformer::prepare(const ModelInputs& in) const {
  auto s = std::make_shared<EmbeddedState>();
  s->unknown_ops = in.unknown_ops;
  if (in.sequence) s->embedding = cache_.get(*in.sequence, [&](const KernelSequence& x) { return network_->embed(x); });
  return s;
}

double LearnedTransformer::correction(const LearnedState& state, std::span<const float> row) const {
  return domain_.held(network_->head(embedded(state, "transformer"), row));
}

Verdict LearnedTransformer::decide(const LearnedState& state, const RowQuery& q, std::span<const float> row) const {
  const auto* s = dynamic_cast<const EmbeddedState*>(&state);
  if (!s) throw internal_error("the transformer was asked to predict on a state another model prepared");
  // embedded() inside the margin: a row declined first (a training step, another runtime) needs no embedding
  return network_verdict(domain_, *s, q, row, [&] { return network_->head(embedded(state, "transformer"), row); },
                         "the transformer");
}

}  // namespace perfcard
