#include "perfcard/network_parts.h"

#include <cmath>
#include <numeric>

#include "perfcard/error.h"
#include "perfcard/features.h"
#include "perfcard/operator_graph.h"

namespace perfcard {

std::vector<float> weight_values(const WeightsFile& f, std::string_view name, std::int64_t n) {
  auto v = nn::weight_vector(f, name, n);
  return {v.begin(), v.end()};
}

void require_positive(const std::vector<float>& v, std::string_view name) {
  for (float s : v)
    if (!(s > 0)) throw data_error(std::string(name) + " has a value that is not > 0");
}

void require_columns(const nn::Matrix& m, std::size_t used) {
  if (m.cols() < used)
    throw data_error(m.describe() + " has " + std::to_string(m.cols()) + " input columns; its input has " +
                     std::to_string(used) + " values");
}

OpEmbeddings::OpEmbeddings(const WeightsFile& f) {
  const TensorInfo& op = f.tensor("emb.op");
  const TensorInfo& cls = f.tensor("emb.class");
  if (op.dims.size() != 2 || cls.dims.size() != 2) throw data_error("emb.op and emb.class must be matrices");
  vocab_ = std::size_t(op.dims[0]);
  op_dim_ = std::size_t(op.dims[1]);
  classes_ = std::size_t(cls.dims[0]);
  class_dim_ = std::size_t(cls.dims[1]);
  if (vocab_ != op_vocabulary_size() || classes_ != op_class_count())
    throw data_error("emb.op / emb.class have " + std::to_string(vocab_) + " / " + std::to_string(classes_) +
                     " rows; this build has " + std::to_string(op_vocabulary_size()) + " op ids and " +
                     std::to_string(op_class_count()) + " classes");
  op_ = op.to_f32();
  class_ = cls.to_f32();
}

void OpEmbeddings::write(std::int32_t op, std::int32_t cls, std::span<float> out, std::string_view what,
                         std::size_t index) const {
  if (op < 0 || std::size_t(op) >= vocab_ || cls < 0 || std::size_t(cls) >= classes_)
    throw data_error(std::string(what) + " " + std::to_string(index) + " has op id " + std::to_string(op) + " / class id " + std::to_string(cls) +
                     " outside the embeddings");
  if (out.size() < width()) throw internal_error("OpEmbeddings::write: the output is narrower than the embeddings");
  std::copy_n(op_.begin() + std::ptrdiff_t(std::size_t(op) * op_dim_), op_dim_, out.begin());
  std::copy_n(class_.begin() + std::ptrdiff_t(std::size_t(cls) * class_dim_), class_dim_,
              out.begin() + std::ptrdiff_t(op_dim_));
}

InputLayer::InputLayer(const WeightsFile& f, std::string_view stats, std::size_t features)
    : emb_(f), features_(features) {
  const std::string p(stats);
  mean_ = weight_values(f, p + ".mean", std::int64_t(features_));
  std_ = weight_values(f, p + ".std", std::int64_t(features_));
  require_positive(std_, p + ".std");
  in_b_ = weight_values(f, "in.b");
  in_w_ = std::make_unique<nn::OwnedMatrix>(f, "in.w", std::int64_t(in_b_.size()), -1);
  require_columns(in_w_->m, emb_.width() + features_);
}

nn::Tensor2 InputLayer::project(std::span<const std::int32_t> op, std::span<const std::int32_t> cls,
                                std::span<const float> x, std::size_t lo, std::size_t hi, std::size_t rows,
                                std::string_view what, nn::Path path) const {
  if (hi < lo) throw internal_error("InputLayer::project: items [" + std::to_string(lo) + ", " + std::to_string(hi) + ")");
  std::vector<std::int32_t> items(hi - lo);
  std::iota(items.begin(), items.end(), std::int32_t(lo));
  return project(op, cls, x, items, rows, what, path);
}

nn::Tensor2 InputLayer::project(std::span<const std::int32_t> op, std::span<const std::int32_t> cls,
                                std::span<const float> x, std::span<const std::int32_t> items, std::size_t rows,
                                std::string_view what, nn::Path path) const {
  if (rows < items.size())
    throw internal_error("InputLayer::project: " + std::to_string(items.size()) + " items, " + std::to_string(rows) + " rows");
  nn::Tensor2 x0(rows, in_w_->m.cols());
  const std::size_t at = emb_.width();
  for (std::size_t k = 0; k < items.size(); ++k) {
    const auto i = std::size_t(items[k]);
    if (items[k] < 0 || i >= op.size() || i >= cls.size() || (i + 1) * features_ > x.size())
      throw internal_error("InputLayer::project: item " + std::to_string(items[k]) + " is outside the arrays");
    auto r = x0.row(k);
    emb_.write(op[i], cls[i], r, what, i);
    for (std::size_t f = 0; f < features_; ++f) r[at + f] = (x[i * features_ + f] - mean_[f]) / std_[f];
  }
  return nn::linear(x0, in_w_->m, in_b_, path);
}

CorrectionHead::CorrectionHead(const WeightsFile& f, std::size_t embedding)
    : embedding_(embedding), features_(feature_schema().size()) {
  row_mean_ = weight_values(f, "row.mean", std::int64_t(features_));
  row_std_ = weight_values(f, "row.std", std::int64_t(features_));
  require_positive(row_std_, "row.std");
  b1_ = weight_values(f, "head.b1");
  w1_ = std::make_unique<nn::OwnedMatrix>(f, "head.w1", std::int64_t(b1_.size()), -1);
  require_columns(w1_->m, embedding_ + features_);
  b2_ = weight_values(f, "head.b2", 1);
  w2_ = std::make_unique<nn::OwnedMatrix>(f, "head.w2", 1, std::int64_t(b1_.size()));
  // The head runs once per device row: widening its quantized rows on every call was a twentieth of an
  // ensemble's sweep. Its matrices are small (hidden x (embedding + features)), so fp32 copies they become.
  w1_->widen_to_f32();
  w2_->widen_to_f32();
}

double CorrectionHead::operator()(const nn::Tensor2& e, std::span<const float> row, nn::Path path,
                                  std::string_view who) const {
  if (e.rows() != 1 || e.cols() != embedding_ || row.size() != features_)
    throw data_error("the " + std::string(who) + " head takes a [1, " + std::to_string(embedding_) + "] embedding and " +
                     std::to_string(features_) + " features; got " + e.shape_string() + " and " +
                     std::to_string(row.size()));
  nn::Tensor2 z(1, w1_->m.cols());
  std::copy(e.values().begin(), e.values().end(), z.row(0).begin());
  for (std::size_t k = 0; k < features_; ++k)
    z(0, embedding_ + k) = std::isnan(row[k]) ? 0.0f : (row[k] - row_mean_[k]) / row_std_[k];
  nn::Tensor2 hid = nn::linear(z, w1_->m, b1_, path);
  nn::relu(hid.values());
  return double(nn::linear(hid, w2_->m, b2_, path)(0, 0));
}

}  // namespace perfcard
