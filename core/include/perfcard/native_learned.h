// The learned models compiled into this program (the perfcard_networks library): what the CLI, the
// benchmarks and the tests run. The page's module runs them in a second wasm module instead
// (learned_model.h says why), built by the same make_learned_model().
#pragma once

#include <memory>
#include <span>
#include <string>

#include "perfcard/learned_model.h"
#include "perfcard/learned_predictor.h"
#include "perfcard/nn.h"
#include "perfcard/networks.h"
#include "perfcard/weights_file.h"

namespace perfcard {

// The model a file holds, by its `predictor` key; Error(bad_data) for a name this build cannot run.
// `networks` builds its network (trees, GNN, transformer); `loaded`: where an ensemble finds its members.
std::shared_ptr<const LearnedModel> make_learned_model(const WeightsFile& file, const CoreSchemas& core,
                                                       const NetworkBackend& networks,
                                                       std::span<const std::shared_ptr<const LearnedModel>> loaded = {});

class NativeLearned final : public LearnedBackend {
 public:
  std::shared_ptr<const LearnedModel> load(std::span<const std::uint8_t> bytes, const CoreSchemas& core,
                                           std::span<const std::shared_ptr<const LearnedModel>> loaded) const override;
};

// The embedding a prepared state holds from the GNN (`sequence` false) or the transformer (true), made for
// the GNN or transformer itself or as an ensemble's member; nullptr where none was made (`perfcard eval`'s
// "embedding" and "sequence_embedding", which the training scripts read).
const nn::Tensor2* prepared_embedding(const LearnedPrepared& prepared, bool sequence);

}  // namespace perfcard
