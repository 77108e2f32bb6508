// Inference runtime of the learned predictors (docs/nn-runtime.md): the handful of dense ops a small
// GraphSAGE GNN over the operator graph and a small transformer over the kernel sequence need, on fp32
// activations and on weights kept in the storage of the weights file (f32, f16 or q8_0), used in place.
//
// Ops with arithmetic worth vectorizing come in two paths that tests compare: Path::Reference is plain
// loops that accumulate in fp64 (q8_0 dot products follow quant::dot_q8_0_f32 exactly), the yardstick;
// Path::Fast is built on Eigen (GEMM, vectorized reductions) and accumulates in fp32, which is where its
// error budget comes from. Activations, gather and the exponentials of softmax have one implementation (the
// C++ library's functions, element by element): Eigen's vectorized tanh / exp are approximations without a
// stated error bound, and the time that matters is in the GEMMs.
//
// Every size is checked and a mismatch throws perfcard::Error (ErrorCode::BadData) naming the op and both
// shapes; nothing else is thrown (but std::bad_alloc). No globals, no I/O: calls on different data may run
// concurrently. Eigen stays inside core/src: this header does not include it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "perfcard/quant.h"

namespace perfcard {
class WeightsFile;
}

namespace perfcard::nn {

// A row-major [rows, cols] fp32 activation matrix that owns its values.
class Tensor2 {
 public:
  Tensor2() = default;
  Tensor2(std::size_t rows, std::size_t cols, float fill = 0.0f);
  // Takes `values` (rows * cols of them, else perfcard::Error).
  Tensor2(std::size_t rows, std::size_t cols, std::vector<float> values);

  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  std::size_t size() const { return values_.size(); }
  float* data() { return values_.data(); }
  const float* data() const { return values_.data(); }
  std::span<float> values() { return values_; }
  std::span<const float> values() const { return values_; }
  std::span<float> row(std::size_t r) { return {values_.data() + r * cols_, cols_}; }
  std::span<const float> row(std::size_t r) const { return {values_.data() + r * cols_, cols_}; }
  float& operator()(std::size_t r, std::size_t c) { return values_[r * cols_ + c]; }
  float operator()(std::size_t r, std::size_t c) const { return values_[r * cols_ + c]; }
  std::string shape_string() const;  // "[5, 32]"

 private:
  std::size_t rows_ = 0, cols_ = 0;
  std::vector<float> values_;
};

// How a weight matrix is stored. Quantized rows are cols / 32 consecutive blocks (docs/weights-format.md).
enum class Storage : std::uint8_t { F32, F16, Q8_0 };
const char* storage_name(Storage s);  // "f32", "f16", "q8_0"

// A view of a row-major [rows, cols] weight matrix in memory the caller owns (typically a WeightsFile's
// tensor, whose bytes must outlive the Matrix). `name` only labels error messages.
class Matrix {
 public:
  Matrix() = default;
  static Matrix f32(std::span<const float> values, std::size_t rows, std::size_t cols, std::string name = {});
  static Matrix f16(std::span<const std::uint16_t> bits, std::size_t rows, std::size_t cols, std::string name = {});
  // cols must be a multiple of 32; blocks.size() == rows * cols / 32.
  static Matrix q8_0(std::span<const quant::BlockQ8_0> blocks, std::size_t rows, std::size_t cols,
                     std::string name = {});

  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  Storage storage() const { return storage_; }
  const std::string& name() const { return name_; }
  // The storage's data; each throws unless the Matrix has that storage.
  std::span<const float> f32_values() const;
  std::span<const std::uint16_t> f16_bits() const;
  std::span<const quant::BlockQ8_0> q8_0_blocks() const;
  // Row r as fp32 values (out.size() == cols). Exact: fp16 widens exactly, and d * q of a q8_0 block (an
  // 11-bit significand times an 8-bit integer) fits fp32's 24 bits.
  void row_to_f32(std::size_t r, std::span<float> out) const;
  // "weight 'gnn.w1' [64, 32] q8_0" (without the name part when unnamed).
  std::string describe() const;

 private:
  // The factories' one constructor, after each has checked its own storage's sizes.
  Matrix(const void* data, std::size_t count, std::size_t rows, std::size_t cols, Storage storage, std::string name)
      : data_(data), rows_(rows), cols_(cols), count_(count), storage_(storage), name_(std::move(name)) {}

  const void* data_ = nullptr;
  std::size_t rows_ = 0, cols_ = 0, count_ = 0;  // count_: elements (f32, f16) or blocks (q8_0)
  Storage storage_ = Storage::F32;
  std::string name_;
};

// The tensor `name` of a weights file as a Matrix: it must exist, be f32, f16 or q8_0, have rank 2 and
// shape [rows, cols] (-1 matches any extent). Throws perfcard::Error naming the tensor and what is wrong,
// located at its tensor-table entry.
Matrix weight_matrix(const WeightsFile& file, std::string_view name, std::int64_t rows = -1,
                     std::int64_t cols = -1);
// A rank-1 f32 tensor of `size` values (-1: any), e.g. a bias, LayerNorm's gamma or beta.
std::span<const float> weight_vector(const WeightsFile& file, std::string_view name, std::int64_t size = -1);

// A weight matrix copied out of a weights file in its own storage (a predictor keeps its weights after the
// file's bytes are freed). Not copyable or movable: `m` points into the vectors; hold it by unique_ptr.
struct OwnedMatrix {
  std::vector<float> f32;
  std::vector<std::uint16_t> f16;
  std::vector<quant::BlockQ8_0> q8;
  Matrix m;

  // weight_matrix(file, name, rows, cols), copied.
  OwnedMatrix(const WeightsFile& file, std::string_view name, std::int64_t rows = -1, std::int64_t cols = -1);
  OwnedMatrix(const OwnedMatrix&) = delete;
  OwnedMatrix& operator=(const OwnedMatrix&) = delete;
  // Keeps the matrix as fp32 from now on (exact, as Matrix::row_to_f32): for a small matrix multiplied by
  // one row at a time, many times, where widening its f16 / q8_0 rows on every call would cost more than
  // the product.
  void widen_to_f32();
};

enum class Path : std::uint8_t {
  Reference,  // plain loops, fp64 accumulation
  Fast,       // Eigen, fp32 accumulation
};

// y = x W^T + bias: x [n, in], W [out, in], bias empty (none) or `out` values; returns [n, out].
// The fast path widens f16 / q8_0 weights a panel of rows at a time into an fp32 scratch (about 128 KiB)
// and multiplies each panel with Eigen's GEMM: no full fp32 copy of the matrix is made.
Tensor2 linear(const Tensor2& x, const Matrix& w, std::span<const float> bias = {}, Path path = Path::Fast);

// Activations, in place, element by element.
void relu(std::span<float> x);
// GELU, tanh approximation (PyTorch's approximate="tanh"):
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))). Not the erf form: the two differ by up to 4.7e-4
// (near x = -2.7), so a model trained with exact GELU must be exported with the tanh form.
void gelu_tanh(std::span<float> x);
void silu(std::span<float> x);     // x * sigmoid(x)
void tanh(std::span<float> x);
void sigmoid(std::span<float> x);  // 1 / (1 + exp(-x)), evaluated without overflow for either sign

enum class Activation : std::uint8_t { None, Relu, GeluTanh, Silu, Tanh, Sigmoid };
// "none", "relu", "gelu_tanh", "silu", "tanh", "sigmoid" (the names a weights file's metadata uses);
// another name throws perfcard::Error listing these.
Activation activation_from_name(std::string_view name);
const char* activation_name(Activation a);
void apply(Activation a, std::span<float> x);

// out[i] = values[indices[i]]: [indices.size(), d]. An index outside [0, values.rows()) throws.
Tensor2 gather_rows(const Tensor2& values, std::span<const std::int32_t> indices);

// Segment reductions for message passing: row i of `values` [n, d] belongs to segment segment_ids[i] in
// [0, segments) (ids need not be sorted); the result is [segments, d]. An EMPTY SEGMENT GIVES 0 for sum,
// mean and max alike. Mean divides the sum by the row count; max propagates a NaN of its segment. An id
// outside [0, segments) or segment_ids.size() != n throws.
enum class Reduce : std::uint8_t { Sum, Mean, Max };
Tensor2 segment_reduce(const Tensor2& values, std::span<const std::int32_t> segment_ids, std::size_t segments,
                       Reduce op, Path path = Path::Fast);

// LayerNorm over each row: (x - mean) / sqrt(var + eps) * gamma + beta, var the biased variance (divided by
// d, as PyTorch). gamma and beta have d values each; eps >= 0.
Tensor2 layer_norm(const Tensor2& x, std::span<const float> gamma, std::span<const float> beta, float eps = 1e-5f,
                   Path path = Path::Fast);

// Softmax of each row in place, stable: exp(x - max(row)) / sum. With `causal`, row i takes only its
// columns 0..i and the others become 0 (the attention mask). A row whose entries are all -inf becomes NaN
// (as in PyTorch).
void softmax_rows(Tensor2& x, bool causal = false, Path path = Path::Fast);

// Multi-head self-attention over t tokens of width d: Q = x Wq^T + bq (likewise K, V), per head h of
// width d / heads: O_h = softmax(Q_h K_h^T / sqrt(d / heads)) V_h; the heads side by side make O [t, d];
// out = O Wo^T + bo.
// Every W is [d, d]; biases empty or d values. With `causal`, token i attends to tokens 0..i only.
struct AttentionWeights {
  Matrix wq, wk, wv, wo;
  std::span<const float> bq, bk, bv, bo;
  std::size_t heads = 1;
};
Tensor2 self_attention(const Tensor2& x, const AttentionWeights& w, bool causal = false, Path path = Path::Fast);

}  // namespace perfcard::nn
