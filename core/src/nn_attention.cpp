// Multi-head self-attention (core/include/perfcard/nn.h). Both paths share the projections (linear) and
// the softmax (softmax_rows) of their own path; they differ in the per-head products: fp64 loops for the
// reference, Eigen GEMMs on strided head blocks for the fast path.
#include <Eigen/Core>
#include <cmath>
#include <string>
#include <utility>

#include "perfcard/error.h"
#include "perfcard/nn.h"

namespace perfcard::nn {

namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMajor>;
using MutMap = Eigen::Map<RowMajor>;

void check(const Tensor2& x, const AttentionWeights& w) {
  const std::size_t d = x.cols();
  const std::string input = "self_attention: input " + x.shape_string();
  if (w.heads == 0 || d % w.heads != 0) {
    throw data_error(input + ": its " + std::to_string(d) + " columns do not split into " +
                     std::to_string(w.heads) + " heads");
  }
  const std::pair<const Matrix*, const char*> mats[] = {{&w.wq, "Wq"}, {&w.wk, "Wk"}, {&w.wv, "Wv"}, {&w.wo, "Wo"}};
  for (const auto& [m, label] : mats) {
    if (m->rows() != d || m->cols() != d) {
      throw data_error(input + " needs " + label + " of shape [" + std::to_string(d) + ", " + std::to_string(d) +
                       "], got " + m->describe());
    }
  }
  const std::pair<std::span<const float>, const char*> biases[] = {{w.bq, "bq"}, {w.bk, "bk"}, {w.bv, "bv"}, {w.bo, "bo"}};
  for (const auto& [b, label] : biases) {
    if (!b.empty() && b.size() != d) {
      throw data_error(input + " needs " + label + " of " + std::to_string(d) + " values (or none), got " +
                       std::to_string(b.size()));
    }
  }
}

}  // namespace

Tensor2 self_attention(const Tensor2& x, const AttentionWeights& w, bool causal, Path path) {
  check(x, w);
  const std::size_t t = x.rows(), d = x.cols(), dh = d / w.heads;
  const Tensor2 q = linear(x, w.wq, w.bq, path);
  const Tensor2 k = linear(x, w.wk, w.bk, path);
  const Tensor2 v = linear(x, w.wv, w.bv, path);
  Tensor2 o(t, d);
  Tensor2 s(t, t);  // one head's scores, then its attention weights
  for (std::size_t h = 0; h < w.heads; ++h) {
    const std::size_t c0 = h * dh;
    if (path == Path::Reference) {
      const double scale = 1.0 / std::sqrt(double(dh));
      for (std::size_t i = 0; i < t; ++i) {
        for (std::size_t j = 0; j < t; ++j) {
          double acc = 0.0;
          for (std::size_t c = c0; c < c0 + dh; ++c) acc += double(q(i, c)) * double(k(j, c));
          s(i, j) = float(acc * scale);
        }
      }
      softmax_rows(s, causal, path);
      for (std::size_t i = 0; i < t; ++i) {
        for (std::size_t c = c0; c < c0 + dh; ++c) {
          double acc = 0.0;
          for (std::size_t j = 0; j < t; ++j) acc += double(s(i, j)) * double(v(j, c));
          o(i, c) = float(acc);
        }
      }
      continue;
    }
    const auto T = Eigen::Index(t), D = Eigen::Index(d), C0 = Eigen::Index(c0), DH = Eigen::Index(dh);
    const ConstMap Q(q.data(), T, D), K(k.data(), T, D), V(v.data(), T, D);
    MutMap S(s.data(), T, T), O(o.data(), T, D);
    S.noalias() = (1.0f / std::sqrt(float(dh))) * (Q.middleCols(C0, DH) * K.middleCols(C0, DH).transpose());
    softmax_rows(s, causal, path);
    O.middleCols(C0, DH).noalias() = S * V.middleCols(C0, DH);
  }
  return linear(o, w.wo, w.bo, path);
}

}  // namespace perfcard::nn
