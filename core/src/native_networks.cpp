#include "perfcard/native_networks.h"

#include "perfcard/gnn_network.h"
#include "perfcard/transformer_network.h"
#include "perfcard/trees.h"

namespace perfcard {

std::shared_ptr<const TreeNetwork> NativeNetworks::trees(const WeightsFile& file, std::size_t features) const {
  return std::make_shared<TreeEnsemble>(TreeEnsemble::load(file, features));
}

std::shared_ptr<const GraphNetwork> NativeNetworks::graph(const WeightsFile& file) const {
  return std::make_shared<GnnModel>(file);
}

std::shared_ptr<const SequenceNetwork> NativeNetworks::sequence(const WeightsFile& file) const {
  return std::make_shared<TransformerModel>(file);
}

}  // namespace perfcard
