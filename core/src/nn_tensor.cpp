// Tensor2, the nn runtime's activation matrix (core/include/perfcard/nn.h): in the core, because the
// predictors hold embeddings whichever module computes them; the rest of the runtime is perfcard_networks.
#include "perfcard/nn.h"

#include <limits>
#include <string>
#include <utility>

#include "perfcard/error.h"
#include "nn_shape.h"

namespace perfcard::nn {

// Strings are built by appending: GCC 12 at -O3 reports a false -Wrestrict inside libstdc++ for
// "literal" + std::string temporaries.
std::string shape(std::size_t rows, std::size_t cols) {
  std::string s = "[";
  s += std::to_string(rows);
  s += ", ";
  s += std::to_string(cols);
  s += ']';
  return s;
}

std::size_t checked_count(std::size_t rows, std::size_t cols, const char* what) {
  if (cols != 0 && rows > std::numeric_limits<std::size_t>::max() / 4 / cols) {
    throw data_error(std::string(what) + ": shape " + shape(rows, cols) + " has too many elements");
  }
  return rows * cols;
}

Tensor2::Tensor2(std::size_t rows, std::size_t cols, float fill)
    : rows_(rows), cols_(cols), values_(checked_count(rows, cols, "Tensor2"), fill) {}

Tensor2::Tensor2(std::size_t rows, std::size_t cols, std::vector<float> values)
    : rows_(rows), cols_(cols), values_(std::move(values)) {
  if (values_.size() != checked_count(rows, cols, "Tensor2")) {
    throw data_error("Tensor2: " + std::to_string(values_.size()) + " values for shape " + shape(rows, cols));
  }
}

std::string Tensor2::shape_string() const { return shape(rows_, cols_); }

const char* storage_name(Storage s) {
  switch (s) {
    case Storage::F32: return "f32";
    case Storage::F16: return "f16";
    case Storage::Q8_0: return "q8_0";
  }
  return "?";
}

}  // namespace perfcard::nn
