// The layers the GNN's and the transformer's networks share (their tensors are named alike in both files):
// the input layer that opens each node's or kernel's state (op and class embeddings, normalized features, a
// projection) and the head that reads a model's embedding beside the whole-model feature row.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "perfcard/nn.h"
#include "perfcard/weights_file.h"

namespace perfcard {

// emb.op [op vocabulary, d_op] and emb.class [classes, d_class], checked against this build's registry.
class OpEmbeddings {
 public:
  explicit OpEmbeddings(const WeightsFile& file);
  std::size_t width() const { return op_dim_ + class_dim_; }
  // Writes the two embeddings into out[0, width()). An id outside them throws, naming the item (`what` and
  // `index`, e.g. "kernel" 12) and the ids.
  void write(std::int32_t op, std::int32_t cls, std::span<float> out, std::string_view what, std::size_t index) const;

 private:
  std::size_t vocab_ = 0, op_dim_ = 0, classes_ = 0, class_dim_ = 0;
  std::vector<float> op_, class_;
};

// h = in.w [emb.op[op] | emb.class[cls] | (x - <stats>.mean) / <stats>.std] + in.b, the input padded with
// zeros to in.w's columns: the first layer of both networks, over the items (nodes, kernels) of a model.
class InputLayer {
 public:
  // `stats`: the prefix of the normalizers ("node", "kernel"); `features`: numeric features per item.
  InputLayer(const WeightsFile& file, std::string_view stats, std::size_t features);
  std::size_t width() const { return in_b_.size(); }
  nn::Storage storage() const { return in_w_->m.storage(); }
  // Items [lo, hi) of parallel arrays (op and class ids, x with `features` values per item) projected:
  // [rows, width()], rows >= hi - lo; rows past the items project an all-zero input (the bias alone).
  // `what` names an item in the error an id outside the embeddings gets ("kernel" 12).
  nn::Tensor2 project(std::span<const std::int32_t> op, std::span<const std::int32_t> cls, std::span<const float> x,
                      std::size_t lo, std::size_t hi, std::size_t rows, std::string_view what, nn::Path path) const;
  // The items `items` of those arrays, in that order: [rows, width()], rows >= items.size().
  nn::Tensor2 project(std::span<const std::int32_t> op, std::span<const std::int32_t> cls, std::span<const float> x,
                      std::span<const std::int32_t> items, std::size_t rows, std::string_view what,
                      nn::Path path) const;

 private:
  OpEmbeddings emb_;
  std::size_t features_ = 0;
  std::vector<float> mean_, std_, in_b_;
  std::unique_ptr<nn::OwnedMatrix> in_w_;
};

// margin = head.w2 relu(head.w1 [embedding | (row - row.mean) / row.std] + head.b1) + head.b2, a NaN feature
// reading as the training mean.
class CorrectionHead {
 public:
  // `embedding`: the width of the embedding the network gives the head.
  CorrectionHead(const WeightsFile& file, std::size_t embedding);
  // `who` names the network in the error a wrong-sized input gets.
  double operator()(const nn::Tensor2& embedding, std::span<const float> row, nn::Path path, std::string_view who) const;

 private:
  std::size_t embedding_ = 0, features_ = 0;
  std::vector<float> row_mean_, row_std_, b1_, b2_;
  std::unique_ptr<nn::OwnedMatrix> w1_, w2_;
};

std::vector<float> weight_values(const WeightsFile& f, std::string_view name, std::int64_t n = -1);
// Throws unless every value is > 0 (a standard deviation divides).
void require_positive(const std::vector<float>& v, std::string_view name);
// Throws unless the matrix's (padded) input columns hold the `used` values its input has.
void require_columns(const nn::Matrix& m, std::size_t used);

}  // namespace perfcard
