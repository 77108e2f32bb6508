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

std::vector<Verdict> network_verdicts(const TrainingDomain& domain, const EmbeddedState& state,
                                      std::span<const RowQuery> queries, FeatureRows rows,
                                      const std::function<std::vector<double>(FeatureRows)>& margins,
                                      std::string_view network) {
  std::function<void(Verdict&)> note;
  if (state.unknown_ops > 0)
    note = [&](Verdict& v) {
      v.flag(OodReason::UnknownOps, std::to_string(state.unknown_ops) + " nodes have op types " + std::string(network) +
                                        " has no embedding for");
    };
  return domain.verdicts(queries, rows, std::string(network) + "'s", {}, margins, note);
}

}  // namespace perfcard
