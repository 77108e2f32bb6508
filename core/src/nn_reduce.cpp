// Row reductions of the nn runtime (core/include/perfcard/nn.h): segment sum / mean / max, LayerNorm and
// softmax, each as a reference in fp64 loops and a fast path on Eigen's vectorized fp32 reductions.
#include <Eigen/Core>
#include <cmath>
#include <limits>

#include "perfcard/error.h"
#include "perfcard/nn.h"

namespace perfcard::nn {

namespace {

using RowVec = Eigen::Map<Eigen::Array<float, 1, Eigen::Dynamic>>;
using ConstRowVec = Eigen::Map<const Eigen::Array<float, 1, Eigen::Dynamic>>;

RowVec row_of(Tensor2& t, std::size_t r) { return {t.row(r).data(), Eigen::Index(t.cols())}; }
ConstRowVec row_of(const Tensor2& t, std::size_t r) { return {t.row(r).data(), Eigen::Index(t.cols())}; }

// The larger of a and b, NaN if either is: the same rule on both paths (Eigen 3.3's max has no NaN policy).
struct NanMax {
  float operator()(float a, float b) const { return (a > b || std::isnan(a)) ? a : b; }
};

}  // namespace

// --------------------------------------------------------------------------------------------- segments

Tensor2 segment_reduce(const Tensor2& values, std::span<const std::int32_t> segment_ids, std::size_t segments,
                       Reduce op, Path path) {
  const std::size_t n = values.rows(), d = values.cols();
  if (segment_ids.size() != n) {
    throw data_error("segment_reduce: " + std::to_string(segment_ids.size()) + " segment ids for values " +
                     values.shape_string() + " (one per row)");
  }
  for (std::size_t i = 0; i < n; ++i) {
    const std::int32_t s = segment_ids[i];
    if (s < 0 || std::size_t(s) >= segments) {
      throw data_error("segment_reduce: segment id " + std::to_string(s) + " at row " + std::to_string(i) +
                       " is outside [0, " + std::to_string(segments) + ") for values " + values.shape_string());
    }
  }
  Tensor2 out(segments, d);
  std::vector<std::size_t> count(segments, 0);
  if (path == Path::Reference) {
    std::vector<double> acc(op == Reduce::Max ? 0 : segments * d, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      const auto s = std::size_t(segment_ids[i]);
      const float* v = values.row(i).data();
      for (std::size_t c = 0; c < d; ++c) {
        if (op != Reduce::Max) {
          acc[s * d + c] += double(v[c]);
        } else {
          out(s, c) = count[s] == 0 ? v[c] : NanMax{}(out(s, c), v[c]);
        }
      }
      ++count[s];
    }
    if (op != Reduce::Max) {
      for (std::size_t s = 0; s < segments; ++s) {
        for (std::size_t c = 0; c < d; ++c) {
          const double sum = acc[s * d + c];
          out(s, c) = float(op == Reduce::Mean && count[s] > 0 ? sum / double(count[s]) : sum);
        }
      }
    }
    return out;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const auto s = std::size_t(segment_ids[i]);
    RowVec o = row_of(out, s);
    if (op != Reduce::Max) {
      o += row_of(values, i);
    } else if (count[s] == 0) {
      o = row_of(values, i);
    } else {
      o = o.binaryExpr(row_of(values, i), NanMax{});
    }
    ++count[s];
  }
  if (op == Reduce::Mean) {
    for (std::size_t s = 0; s < segments; ++s) {
      if (count[s] > 1) row_of(out, s) /= float(count[s]);
    }
  }
  return out;
}

// -------------------------------------------------------------------------------------------- LayerNorm

Tensor2 layer_norm(const Tensor2& x, std::span<const float> gamma, std::span<const float> beta, float eps, Path path) {
  const std::size_t d = x.cols();
  if (gamma.size() != d || beta.size() != d) {
    throw data_error("layer_norm: gamma has " + std::to_string(gamma.size()) + " and beta " +
                     std::to_string(beta.size()) + " values, input " + x.shape_string() + " needs " +
                     std::to_string(d) + " each");
  }
  if (!(eps >= 0.0f) || !std::isfinite(eps)) {
    throw data_error("layer_norm: eps " + std::to_string(eps) + " is not a finite non-negative number");
  }
  Tensor2 y(x.rows(), d);
  if (d == 0) return y;
  if (path == Path::Reference) {
    for (std::size_t r = 0; r < x.rows(); ++r) {
      const float* v = x.row(r).data();
      double mean = 0.0, var = 0.0;
      for (std::size_t c = 0; c < d; ++c) mean += double(v[c]);
      mean /= double(d);
      for (std::size_t c = 0; c < d; ++c) var += (double(v[c]) - mean) * (double(v[c]) - mean);
      const double inv = 1.0 / std::sqrt(var / double(d) + double(eps));
      for (std::size_t c = 0; c < d; ++c) {
        y(r, c) = float((double(v[c]) - mean) * inv * double(gamma[c]) + double(beta[c]));
      }
    }
    return y;
  }
  const ConstRowVec g(gamma.data(), Eigen::Index(d)), b(beta.data(), Eigen::Index(d));
  for (std::size_t r = 0; r < x.rows(); ++r) {
    RowVec out = row_of(y, r);
    const ConstRowVec in = row_of(x, r);
    const float mean = in.sum() / float(d);
    out = in - mean;
    const float var = out.square().sum() / float(d);
    const float inv = 1.0f / std::sqrt(var + eps);
    out = out * inv * g + b;
  }
  return y;
}

// ---------------------------------------------------------------------------------------------- softmax

void softmax_rows(Tensor2& x, bool causal, Path path) {
  const std::size_t cols = x.cols();
  for (std::size_t r = 0; r < x.rows(); ++r) {
    float* v = x.row(r).data();
    const std::size_t n = causal ? std::min(cols, r + 1) : cols;  // entries that take part
    for (std::size_t c = n; c < cols; ++c) v[c] = 0.0f;
    if (n == 0) continue;
    float m = -std::numeric_limits<float>::infinity();
    for (std::size_t c = 0; c < n; ++c) m = NanMax{}(m, v[c]);
    if (path == Path::Reference) {
      double sum = 0.0;
      std::vector<double> e(n);
      for (std::size_t c = 0; c < n; ++c) sum += e[c] = std::exp(double(v[c]) - double(m));
      for (std::size_t c = 0; c < n; ++c) v[c] = float(e[c] / sum);
      continue;
    }
    for (std::size_t c = 0; c < n; ++c) v[c] = std::exp(v[c] - m);
    RowVec row(v, Eigen::Index(n));
    row /= row.sum();
  }
}

}  // namespace perfcard::nn
