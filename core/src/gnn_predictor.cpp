#include "perfcard/gnn_predictor.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "perfcard/error.h"
#include "perfcard/features.h"
#include "perfcard/network_prediction.h"

namespace perfcard {

inline constexpr std::int64_t kGnnVersion = 1;

GnnPredictor::GnnPredictor(const WeightsFile& f, std::shared_ptr<const RooflinePredictor> roofline,
                           const NetworkBackend& networks)
    : roofline_(std::move(roofline)), network_([&] {
        f.require_predictor("gnn", kGnnVersion);
        f.require_schema_hash(feature_schema_hash());
        f.require_schema_hash(graph_schema_hash(), "graph_schema.hash");
        return networks.graph(f);
      }()),
      domain_(f, feature_schema().size()) {
  if (!roofline_) throw internal_error("the gnn predictor needs the roofline it corrects");
  version_ = "gnn-" + std::to_string(kGnnVersion) + "." + std::string(f.get_string("training.date")) + "." +
             network_->storage();
}

std::unique_ptr<Prepared> GnnPredictor::prepare(const PredictorSubject& s) const {
  const Embedder* self[] = {this};
  return prepare_learned(s, *roofline_, self);
}

void GnnPredictor::embed_into(LearnedPrepared& p) const {
  if (p.graph_embedding.size() > 0) return;
  const PredictorSubject& s = p.subject;
  const OperatorGraph g = operator_graph(*s.model, *s.analysis, std::max<std::int64_t>(1, s.samples));
  p.graph_embedding = cache_.get(g, [&](const OperatorGraph& graph) { return network_->embed(graph); });
}

double GnnPredictor::correction(const LearnedPrepared& p, std::span<const float> row) const {
  return domain_.held(network_->head(embedded(p.graph_embedding, "GNN"), row));
}

PredictorOutput GnnPredictor::predict(const Prepared& prepared, const DeviceQuery& q) const {
  const LearnedPrepared& p = as_learned_prepared(prepared, "gnn");
  // embedded() inside: a state declined first (a training step, another runtime) was never embedded
  return network_prediction(*roofline_, domain_, p, q,
                            [&](std::span<const float> row) { return network_->head(embedded(p.graph_embedding, "GNN"), row); },
                            name(), version_, "the GNN");
}

}  // namespace perfcard
