// Helpers for the tests: read fixture files, build small ONNX models in memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace perfcard::test {

std::string data_path(const std::string& relative);  // under tests/data/
std::vector<std::uint8_t> read_file(const std::string& path);

}  // namespace perfcard::test
