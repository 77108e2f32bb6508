// Shape text and checked element counts, for the nn runtime's messages: shared by Tensor2 (nn_tensor.cpp, the
// core) and the weight matrices (nn.cpp, perfcard_networks).
#pragma once

#include <cstddef>
#include <string>

namespace perfcard::nn {

// "[rows, cols]"
std::string shape(std::size_t rows, std::size_t cols);
// rows * cols, or an error naming `what` when the product does not fit (a vector could never hold it anyway).
std::size_t checked_count(std::size_t rows, std::size_t cols, const char* what);

}  // namespace perfcard::nn
