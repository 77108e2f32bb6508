// The learned predictors' arithmetic behind one interface: the gradient-boosted trees, the network over the
// operator graph (the GNN) and the network over the kernel sequence (the transformer). Everything else a
// learned predictor does (the roofline it corrects, the feature rows, the training domain, the ensemble's
// combination, auto's choice) is the predictors' own (trees_predictor.h, gnn_predictor.h, ...) and reaches
// the arithmetic only through these calls, so the arithmetic can ship on its own:
//   - the CLI, the benchmarks and the tests compile it in (NativeNetworks, native_networks.h);
//   - the page's wasm module leaves it out and fetches it as a second module with the first weights file a
//     prediction needs (wasm/learned/), which keeps the first download small; the glue is in wasm/.
// A backend builds each network from the weights file the predictor was built from; the predictor checks
// the file's name, version and schema hashes first.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "perfcard/kernel_sequence.h"
#include "perfcard/nn.h"
#include "perfcard/operator_graph.h"
#include "perfcard/weights_file.h"

namespace perfcard {

class TreeNetwork {
 public:
  virtual ~TreeNetwork() = default;
  // base_score + the leaf each tree routes the feature row to (trees.h says how a split routes a NaN).
  virtual double margin(std::span<const float> row) const = 0;
  // Features some split reads (the others cannot change a prediction).
  virtual std::vector<bool> used_features() const = 0;
};

// The GNN and the transformer: an embedding of the model, computed once per prepared subject, and a head
// that reads it beside one device's feature row.
template <class Input>
class EmbeddingNetwork {
 public:
  virtual ~EmbeddingNetwork() = default;
  virtual nn::Tensor2 embed(const Input& input) const = 0;
  // The predicted log ratio of measured to roofline latency (NaN entries of the row read as the training mean).
  virtual double head(const nn::Tensor2& embedding, std::span<const float> row) const = 0;
  // How its weight matrices are stored ("f32", "f16", "q8_0"): part of the predictor's version.
  virtual std::string storage() const = 0;
};
using GraphNetwork = EmbeddingNetwork<OperatorGraph>;
using SequenceNetwork = EmbeddingNetwork<KernelSequence>;

class NetworkBackend {
 public:
  virtual ~NetworkBackend() = default;
  // `features`: the feature row's width, which the splits may index.
  virtual std::shared_ptr<const TreeNetwork> trees(const WeightsFile& file, std::size_t features) const = 0;
  virtual std::shared_ptr<const GraphNetwork> graph(const WeightsFile& file) const = 0;
  virtual std::shared_ptr<const SequenceNetwork> sequence(const WeightsFile& file) const = 0;
};

}  // namespace perfcard
