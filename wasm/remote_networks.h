// The page's NetworkBackend: the learned predictors' networks live in the second wasm module
// (wasm/learned/), which wasm/perfcard.js instantiates on the first loadPredictor() and hands to this module
// as Module.perfcardLearned. Each network here is a handle into that module; every call copies its input
// across (a feature row, an operator graph, a kernel sequence) and its result back, synchronously. A failure
// over there comes back as the perfcard::Error it was, code and message.
#pragma once

#include "perfcard/networks.h"

namespace perfcard::wasm {

class RemoteNetworks final : public NetworkBackend {
 public:
  std::shared_ptr<const TreeNetwork> trees(const WeightsFile& file, std::size_t features) const override;
  std::shared_ptr<const GraphNetwork> graph(const WeightsFile& file) const override;
  std::shared_ptr<const SequenceNetwork> sequence(const WeightsFile& file) const override;
};

}  // namespace perfcard::wasm
