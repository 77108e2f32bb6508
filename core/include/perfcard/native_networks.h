// The learned models' networks compiled into this program (the perfcard_networks library): what the CLI,
// the benchmarks, the tests and the page's second wasm module run.
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
