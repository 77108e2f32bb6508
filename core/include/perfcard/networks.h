// The learned models' arithmetic behind one interface: the gradient-boosted trees, the network over the
// operator graph (the GNN) and the network over the kernel sequence (the transformer). The models around
// them (learned_trees.h, learned_embedding.h, ...: the training domain, the verdicts, the ensemble's combination)
// reach the arithmetic only through these calls. The CLI, the benchmarks and the tests build it natively
// (NativeNetworks, native_networks.h); the page's second wasm module (wasm/learned/) builds the same, with the
// models, and its tests and benchmarks reach the networks directly. A backend builds each network from the
// weights file its model was built from; the model checks the file's name, version and schema hashes first.
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
  // margin() of each of out.size() rows laid back to back in `rows`.
  virtual void margins(std::span<const float> rows, std::span<double> out) const = 0;
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
