// The GNN's network: a GraphSAGE-style encoder over the operator graph (operator_graph.h) and the head that
// reads its embedding beside a device's feature row. The layers and the weights file's tensor names are
// described in scripts/training/gnn.py, which trains it; the arithmetic is the nn runtime's (nn.h). The
// model around it is learned_embedding.h.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "perfcard/networks.h"
#include "perfcard/nn.h"
#include "perfcard/operator_graph.h"
#include "perfcard/weights_file.h"

namespace perfcard {

// The network alone: weights copied out of the file (so the file's bytes need not outlive it), forward
// passes on an operator graph and a feature row.
class GnnModel final : public GraphNetwork {
 public:
  explicit GnnModel(const WeightsFile& file);
  ~GnnModel();
  GnnModel(GnnModel&&) noexcept;
  GnnModel& operator=(GnnModel&&) noexcept;

  // [1, 2 * hidden]: the mean and the max of the last layer's node states. Path::Fast computes each layer
  // once per class of nodes whose states are equal there (repeated blocks cost one block); Path::Reference
  // computes every node, with the reference arithmetic.
  nn::Tensor2 embed(const OperatorGraph& graph, nn::Path path) const;
  nn::Tensor2 embed(const OperatorGraph& graph) const override { return embed(graph, nn::Path::Fast); }
  // The predicted log ratio for one device's feature row (NaN entries read as the training mean).
  double head(const nn::Tensor2& embedding, std::span<const float> row, nn::Path path) const;
  double head(const nn::Tensor2& embedding, std::span<const float> row) const override {
    return head(embedding, row, nn::Path::Fast);
  }
  std::string storage() const override { return nn::storage_name(storage_type()); }
  std::size_t layers() const;
  nn::Storage storage_type() const;

 private:
  nn::Tensor2 embed_each_node(const OperatorGraph& graph, nn::Path path) const;
  struct Weights;
  std::unique_ptr<Weights> w_;
};

}  // namespace perfcard
