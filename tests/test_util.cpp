#include "test_util.h"

#include <fstream>
#include <iterator>
#include <stdexcept>

#include "perfcard/onnx_loader.h"

namespace perfcard::test {

std::string data_path(const std::string& relative) { return std::string(PERFCARD_TEST_DATA) + "/" + relative; }
std::string repo_path(const std::string& relative) { return data_path("../../" + relative); }

std::vector<std::uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("test fixture missing: " + path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::string read_text(const std::string& path) {
  const auto b = read_file(path);
  return {b.begin(), b.end()};
}

Model load_example(const std::string& file) { return load_model(read_file(repo_path("public/examples/" + file))); }

}  // namespace perfcard::test
