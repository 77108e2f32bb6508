#include "perfcard/transformer_predictor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "perfcard/error.h"
#include "perfcard/network_prediction.h"
#include "perfcard/operator_graph.h"

namespace perfcard {

inline constexpr std::int64_t kTransformerVersion = 1;

TransformerPredictor::TransformerPredictor(const WeightsFile& f, std::shared_ptr<const RooflinePredictor> roofline,
                                           const NetworkBackend& networks)
    : roofline_(std::move(roofline)), network_([&] {
        f.require_predictor("transformer", kTransformerVersion);
        f.require_schema_hash(feature_schema_hash());
        f.require_schema_hash(sequence_schema_hash(), "sequence_schema.hash");
        return networks.sequence(f);
      }()),
      domain_(f, feature_schema().size()) {
  if (!roofline_) throw internal_error("the transformer predictor needs the roofline it corrects");
  version_ = "transformer-" + std::to_string(kTransformerVersion) + "." + std::string(f.get_string("training.date")) +
             "." + network_->storage();
}

std::unique_ptr<Prepared> TransformerPredictor::prepare(const PredictorSubject& s) const {
  const Embedder* self[] = {this};
  return prepare_learned(s, *roofline_, self);
}

void TransformerPredictor::embed_into(LearnedPrepared& p) const {
  if (p.sequence_embedding.size() > 0) return;
  const KernelSequence seq = kernel_sequence(*p.subject.model, p.plan, std::max<std::int64_t>(1, p.subject.samples));
  p.sequence_embedding = cache_.get(seq, [&](const KernelSequence& s) { return network_->embed(s); });
}

double TransformerPredictor::correction(const LearnedPrepared& p, std::span<const float> row) const {
  return domain_.held(network_->head(embedded(p.sequence_embedding, "transformer"), row));
}

PredictorOutput TransformerPredictor::predict(const Prepared& prepared, const DeviceQuery& q) const {
  const LearnedPrepared& p = as_learned_prepared(prepared, "transformer");
  // embedded() inside: a state declined first (a training step, another runtime) was never embedded
  return network_prediction(*roofline_, domain_, p, q,
                            [&](std::span<const float> row) { return network_->head(embedded(p.sequence_embedding, "transformer"), row); },
                            name(), version_, "the transformer");
}

}  // namespace perfcard
