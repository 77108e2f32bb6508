// Weight matrices of the nn runtime, their views from a weights file, and gather (core/include/perfcard/nn.h).
// Tensor2, the activations' type the predictors hold too, is in nn_tensor.cpp (the core); activations are in
// nn_activation.cpp; the ops with two paths in nn_linear.cpp, nn_reduce.cpp and nn_attention.cpp.
#include "perfcard/nn.h"

#include <algorithm>
#include <limits>

#include "perfcard/error.h"
#include "perfcard/weights_file.h"
#include "nn_shape.h"

namespace perfcard::nn {

namespace {

std::string quoted(std::string_view s) {
  std::string q = "'";
  q += s;
  q += '\'';
  return q;
}

// "Matrix" or "Matrix 'name'", for the factories' messages.
std::string matrix_label(const std::string& name) {
  std::string label = "Matrix";
  if (!name.empty()) {
    label += ' ';
    label += quoted(name);
  }
  return label;
}

}  // namespace

// ----------------------------------------------------------------------------------------------- Matrix


namespace {
// Elements (f32, f16) for a [rows, cols] matrix, or an error naming the storage and the counts.
void require_values(const std::string& name, std::size_t got, const char* storage, std::size_t rows, std::size_t cols) {
  if (got != checked_count(rows, cols, "Matrix"))
    throw data_error(matrix_label(name) + ": " + std::to_string(got) + " " + storage + " values for shape " +
                     shape(rows, cols));
}
}  // namespace

Matrix Matrix::f32(std::span<const float> values, std::size_t rows, std::size_t cols, std::string name) {
  require_values(name, values.size(), "f32", rows, cols);
  return Matrix(values.data(), values.size(), rows, cols, Storage::F32, std::move(name));
}

Matrix Matrix::f16(std::span<const std::uint16_t> bits, std::size_t rows, std::size_t cols, std::string name) {
  require_values(name, bits.size(), "f16", rows, cols);
  return Matrix(bits.data(), bits.size(), rows, cols, Storage::F16, std::move(name));
}

Matrix Matrix::q8_0(std::span<const quant::BlockQ8_0> blocks, std::size_t rows, std::size_t cols, std::string name) {
  const std::string label = matrix_label(name);
  if (cols % quant::kBlockSize != 0) {
    throw data_error(label + ": q8_0 needs a column count that is a multiple of 32, shape " + shape(rows, cols));
  }
  if (blocks.size() != checked_count(rows, cols, "Matrix") / quant::kBlockSize) {
    throw data_error(label + ": " + std::to_string(blocks.size()) + " q8_0 blocks for shape " + shape(rows, cols) +
                     " (" + std::to_string(rows * cols / quant::kBlockSize) + " needed)");
  }
  return Matrix(blocks.data(), blocks.size(), rows, cols, Storage::Q8_0, std::move(name));
}

namespace {
void require_storage(const Matrix& m, Storage want) {
  if (m.storage() != want) {
    throw data_error(m.describe() + " is not " + storage_name(want));
  }
}
}  // namespace

std::span<const float> Matrix::f32_values() const {
  require_storage(*this, Storage::F32);
  return {static_cast<const float*>(data_), count_};
}

std::span<const std::uint16_t> Matrix::f16_bits() const {
  require_storage(*this, Storage::F16);
  return {static_cast<const std::uint16_t*>(data_), count_};
}

std::span<const quant::BlockQ8_0> Matrix::q8_0_blocks() const {
  require_storage(*this, Storage::Q8_0);
  return {static_cast<const quant::BlockQ8_0*>(data_), count_};
}

void Matrix::row_to_f32(std::size_t r, std::span<float> out) const {
  if (r >= rows_ || out.size() != cols_) {
    throw data_error("row_to_f32: row " + std::to_string(r) + " into " + std::to_string(out.size()) +
                     " values, for " + describe());
  }
  switch (storage_) {
    case Storage::F32: {
      const float* src = static_cast<const float*>(data_) + r * cols_;
      for (std::size_t c = 0; c < cols_; ++c) out[c] = src[c];
      break;
    }
    case Storage::F16: {
      const std::uint16_t* src = static_cast<const std::uint16_t*>(data_) + r * cols_;
      for (std::size_t c = 0; c < cols_; ++c) out[c] = quant::fp16_to_fp32(src[c]);
      break;
    }
    case Storage::Q8_0: {
      const std::size_t per_row = cols_ / quant::kBlockSize;
      const auto* blocks = static_cast<const quant::BlockQ8_0*>(data_) + r * per_row;
      for (std::size_t b = 0; b < per_row; ++b) {
        const float d = blocks[b].scale();
        for (std::size_t i = 0; i < quant::kBlockSize; ++i) out[b * quant::kBlockSize + i] = d * float(blocks[b].q[i]);
      }
      break;
    }
  }
}

std::string Matrix::describe() const {
  std::string s = "weight ";
  if (!name_.empty()) {
    s += quoted(name_);
    s += ' ';
  }
  s += shape(rows_, cols_);
  s += ' ';
  s += storage_name(storage_);
  return s;
}

// -------------------------------------------------------------------------------- from a weights file

Matrix weight_matrix(const WeightsFile& file, std::string_view name, std::int64_t rows, std::int64_t cols) {
  const TensorInfo& t = file.tensor(name);  // throws when absent
  Location at;
  at.byte_offset = t.entry_offset;
  if (t.dtype != WDType::F32 && t.dtype != WDType::F16 && t.dtype != WDType::Q8_0) {
    throw Error("tensor " + quoted(name) + " is " + wdtype_name(t.dtype) + "; a weight matrix must be f32, f16 or q8_0",
                at, ErrorCode::BadData);
  }
  if (t.dims.size() != 2) {
    throw Error("tensor " + quoted(name) + " has rank " + std::to_string(t.dims.size()) + " (shape " +
                    t.shape_string() + "); a weight matrix has rank 2",
                at, ErrorCode::BadData);
  }
  file.tensor(name, t.dtype, {rows, cols});  // the shape check and its message
  const auto r = std::size_t(t.dims[0]), c = std::size_t(t.dims[1]);
  switch (t.dtype) {
    case WDType::F32: return Matrix::f32(t.f32(), r, c, std::string(name));
    case WDType::F16: return Matrix::f16(t.f16_bits(), r, c, std::string(name));
    default: return Matrix::q8_0(t.q8_0(), r, c, std::string(name));
  }
}

std::span<const float> weight_vector(const WeightsFile& file, std::string_view name, std::int64_t size) {
  return file.tensor(name, WDType::F32, {size}).f32();
}

// ---------------------------------------------------------------------------------------------- gather

Tensor2 gather_rows(const Tensor2& values, std::span<const std::int32_t> indices) {
  Tensor2 out(indices.size(), values.cols());
  for (std::size_t i = 0; i < indices.size(); ++i) {
    const std::int32_t k = indices[i];
    if (k < 0 || std::size_t(k) >= values.rows()) {
      throw data_error("gather_rows: index " + std::to_string(k) + " at position " + std::to_string(i) +
                       " is outside [0, " + std::to_string(values.rows()) + ") of values " + values.shape_string());
    }
    const auto src = values.row(std::size_t(k));
    std::copy(src.begin(), src.end(), out.row(i).begin());
  }
  return out;
}

void OwnedMatrix::widen_to_f32() {
  if (m.storage() == Storage::F32) return;
  std::vector<float> wide(m.rows() * m.cols());
  for (std::size_t r = 0; r < m.rows(); ++r) m.row_to_f32(r, std::span<float>(wide).subspan(r * m.cols(), m.cols()));
  f32 = std::move(wide);
  m = Matrix::f32(f32, m.rows(), m.cols(), m.name());
  std::vector<std::uint16_t>().swap(f16);
  std::vector<quant::BlockQ8_0>().swap(q8);
}

OwnedMatrix::OwnedMatrix(const WeightsFile& file, std::string_view name, std::int64_t rows, std::int64_t cols) {
  const Matrix view = weight_matrix(file, name, rows, cols);
  switch (view.storage()) {
    case Storage::F32: {
      auto v = view.f32_values();
      f32.assign(v.begin(), v.end());
      m = Matrix::f32(f32, view.rows(), view.cols(), std::string(name));
      break;
    }
    case Storage::F16: {
      auto v = view.f16_bits();
      f16.assign(v.begin(), v.end());
      m = Matrix::f16(f16, view.rows(), view.cols(), std::string(name));
      break;
    }
    case Storage::Q8_0: {
      auto v = view.q8_0_blocks();
      q8.assign(v.begin(), v.end());
      m = Matrix::q8_0(q8, view.rows(), view.cols(), std::string(name));
      break;
    }
  }
}

}  // namespace perfcard::nn
