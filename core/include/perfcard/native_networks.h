// The learned predictors' networks compiled into this program (the perfcard_networks library): what the
// CLI, the benchmarks and the tests run. The page's module runs them in a second wasm module instead
// (networks.h says why).
#pragma once

#include "perfcard/networks.h"

namespace perfcard {

class NativeNetworks final : public NetworkBackend {
 public:
  std::shared_ptr<const TreeNetwork> trees(const WeightsFile& file, std::size_t features) const override;
  std::shared_ptr<const GraphNetwork> graph(const WeightsFile& file) const override;
  std::shared_ptr<const SequenceNetwork> sequence(const WeightsFile& file) const override;
};

}  // namespace perfcard
