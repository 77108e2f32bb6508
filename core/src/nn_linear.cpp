// linear (core/include/perfcard/nn.h): y = x W^T + b, a reference in plain loops and a fast path on
// Eigen's GEMM. Quantized and half weights are widened a panel of rows at a time, so the scratch stays
// small whatever the matrix size.
#include <Eigen/Core>
#include <algorithm>

#include "perfcard/error.h"
#include "perfcard/nn.h"

namespace perfcard::nn {

namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMajor>;
using MutMap = Eigen::Map<RowMajor>;

// About 128 KiB of fp32 per panel: big enough that GEMM runs at speed, small enough to stay in L2.
constexpr std::size_t kPanelFloats = 32768;

void check(const Tensor2& x, const Matrix& w, std::span<const float> bias) {
  if (x.cols() != w.cols()) {
    throw data_error("linear: input " + x.shape_string() + " does not match " + w.describe() +
                     " (input columns must equal weight columns)");
  }
  if (!bias.empty() && bias.size() != w.rows()) {
    throw data_error("linear: bias has " + std::to_string(bias.size()) + " values, " + w.describe() + " has " +
                     std::to_string(w.rows()) + " rows");
  }
}

// fp64 sums; q8_0 rows go through quant::dot_q8_0_f32 (fp32 block sums, fp64 across blocks).
void linear_reference(const Tensor2& x, const Matrix& w, std::span<const float> bias, Tensor2& y) {
  const std::size_t n = x.rows(), in = w.cols(), out = w.rows();
  std::vector<float> row(in);
  for (std::size_t o = 0; o < out; ++o) {
    const double b = bias.empty() ? 0.0 : double(bias[o]);
    if (w.storage() == Storage::Q8_0) {
      const auto blocks = w.q8_0_blocks().subspan(o * (in / quant::kBlockSize), in / quant::kBlockSize);
      for (std::size_t i = 0; i < n; ++i) y(i, o) = float(double(quant::dot_q8_0_f32(blocks, x.row(i))) + b);
      continue;
    }
    w.row_to_f32(o, row);
    for (std::size_t i = 0; i < n; ++i) {
      const float* xi = x.row(i).data();
      double acc = 0.0;
      for (std::size_t k = 0; k < in; ++k) acc += double(row[k]) * double(xi[k]);
      y(i, o) = float(acc + b);
    }
  }
}

void linear_fast(const Tensor2& x, const Matrix& w, std::span<const float> bias, Tensor2& y) {
  const auto n = Eigen::Index(x.rows()), in = Eigen::Index(w.cols()), out = Eigen::Index(w.rows());
  const ConstMap X(x.data(), n, in);
  MutMap Y(y.data(), n, out);
  if (w.storage() == Storage::F32) {
    Y.noalias() = X * ConstMap(w.f32_values().data(), out, in).transpose();
  } else {
    const auto panel_rows = Eigen::Index(std::clamp<std::size_t>(kPanelFloats / std::max<std::size_t>(w.cols(), 1), 1,
                                                                 std::max<std::size_t>(w.rows(), 1)));
    RowMajor panel(panel_rows, in);
    for (Eigen::Index r0 = 0; r0 < out; r0 += panel_rows) {
      const Eigen::Index rows = std::min(panel_rows, out - r0);
      for (Eigen::Index r = 0; r < rows; ++r) {
        w.row_to_f32(std::size_t(r0 + r), {panel.data() + r * in, std::size_t(in)});
      }
      Y.middleCols(r0, rows).noalias() = X * panel.topRows(rows).transpose();
    }
  }
  if (!bias.empty()) Y.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(bias.data(), out);
}

}  // namespace

Tensor2 linear(const Tensor2& x, const Matrix& w, std::span<const float> bias, Path path) {
  check(x, w, bias);
  Tensor2 y(x.rows(), w.rows());
  if (y.size() == 0) return y;
  if (w.cols() == 0) {  // an empty sum: the bias alone
    for (std::size_t i = 0; i < y.rows(); ++i) {
      if (!bias.empty()) std::copy(bias.begin(), bias.end(), y.row(i).begin());
    }
    return y;
  }
  if (path == Path::Reference) {
    linear_reference(x, w, bias, y);
  } else {
    linear_fast(x, w, bias, y);
  }
  return y;
}

}  // namespace perfcard::nn
