#include "perfcard/native_learned.h"

#include "perfcard/learned_ensemble.h"
#include "perfcard/error.h"
#include "perfcard/learned_embedding.h"
#include "perfcard/native_networks.h"
#include "perfcard/predictor_registry.h"
#include "perfcard/learned_trees.h"

namespace perfcard {

std::shared_ptr<const LearnedModel> make_learned_model(const WeightsFile& file, const CoreSchemas& core,
                                                       const NetworkBackend& networks,
                                                       std::span<const std::shared_ptr<const LearnedModel>> loaded) {
  const std::string_view kind = file.predictor();
  if (kind == "trees") return std::make_shared<LearnedTrees>(file, core, networks);
  if (kind == "gnn") return std::make_shared<LearnedGnn>(file, core, networks);
  if (kind == "transformer") return std::make_shared<LearnedTransformer>(file, core, networks);
  if (kind == "ensemble") return std::make_shared<LearnedEnsemble>(file, core, loaded);
  std::string runnable;
  for (auto n : learned_predictor_names()) (runnable += runnable.empty() ? "" : ", ") += n;
  throw data_error("the weights file holds a '" + std::string(kind) + "' predictor, which this build cannot run (it runs: " +
                   runnable + ")");
}

std::shared_ptr<const LearnedModel> NativeLearned::load(std::span<const std::uint8_t> bytes,
                                                        const CoreSchemas& core,
                                                        std::span<const std::shared_ptr<const LearnedModel>> loaded) const {
  return make_learned_model(read_weights(bytes), core, NativeNetworks{}, loaded);
}

const nn::Tensor2* prepared_embedding(const LearnedPrepared& p, bool sequence) {
  auto of = [&](const LearnedModel& m, const LearnedState& s) -> const nn::Tensor2* {
    const bool reads = sequence ? dynamic_cast<const LearnedTransformer*>(&m) != nullptr
                                : dynamic_cast<const LearnedGnn*>(&m) != nullptr;
    const auto* e = dynamic_cast<const EmbeddedState*>(&s);
    return reads && e && e->embedding.size() > 0 ? &e->embedding : nullptr;
  };
  for (const auto& [model, state] : p.states) {
    if (const nn::Tensor2* e = of(*model, *state)) return e;
    const auto* ensemble = dynamic_cast<const LearnedEnsemble*>(model);
    const auto* members = dynamic_cast<const EnsembleState*>(state.get());
    if (!ensemble || !members) continue;
    for (std::size_t i = 0; i < ensemble->members().size() && i < members->members.size(); ++i)
      if (const nn::Tensor2* e = of(*ensemble->members()[i], *members->members[i])) return e;
  }
  return nullptr;
}

}  // namespace perfcard
