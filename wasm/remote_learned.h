// The page's LearnedBackend: the learned models live in the second wasm module (wasm/learned/), which
// wasm/perfcard.js instantiates on the first loadPredictor() and hands to this module as
// Module.perfcardLearned. Each model and each prepared state here is a handle into that module; every call
// copies its input across (a weights file, an operator graph and kernel sequence, a row's query and feature
// row) and its answer back (learned_wire.h), synchronously. A failure over there comes back as the
// perfcard::Error it was, code and message.
#pragma once

#include "perfcard/learned_model.h"

namespace perfcard::wasm {

class RemoteLearned final : public LearnedBackend {
 public:
  std::shared_ptr<const LearnedModel> load(std::span<const std::uint8_t> bytes, const CoreSchemas& core,
                                           std::span<const std::shared_ptr<const LearnedModel>> loaded) const override;
};

}  // namespace perfcard::wasm
