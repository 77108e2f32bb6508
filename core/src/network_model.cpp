#include "perfcard/network_model.h"

#include <string>

#include "perfcard/error.h"

namespace perfcard {

const nn::Tensor2& embedded(const LearnedState& state, std::string_view network) {
  const auto* s = dynamic_cast<const EmbeddedState*>(&state);
  if (!s || s->embedding.size() == 0)
    throw internal_error("the " + std::string(network) + " was asked to predict on a state it did not embed");
  return s->embedding;
}

Verdict network_verdict(const TrainingDomain& domain, const EmbeddedState& state, const RowQuery& q,
                        std::span<const float> row, const std::function<double()>& margin, std::string_view network) {
  if (auto declined = domain.untrained_runtime(q, std::string(network) + "'s")) return std::move(*declined);
  Verdict v = domain.correct(margin(), std::string(network) + "'s");
  if (state.unknown_ops > 0)
    v.flag(OodReason::UnknownOps, std::to_string(state.unknown_ops) + " nodes have op types " + std::string(network) +
                                      " has no embedding for");
  domain.judge(q, row, {}, v);
  return v;
}

}  // namespace perfcard
