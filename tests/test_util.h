// Helpers for the tests: read fixture files, build small ONNX models in memory.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "perfcard/error.h"
#include "perfcard/graph.h"

namespace perfcard::test {

std::string data_path(const std::string& relative);  // under tests/data/
std::string repo_path(const std::string& relative);  // under the repository root (weights/, public/)
std::vector<std::uint8_t> read_file(const std::string& path);
std::string read_text(const std::string& path);
// public/examples/<file>, loaded (the page's examples are the tests' real models).
Model load_example(const std::string& file);

// The message (without the location suffix) of the perfcard::Error that f throws, or "(no error)".
template <class F>
std::string error_message(F f) {
  try {
    f();
  } catch (const perfcard::Error& e) {
    return e.message();
  }
  return "(no error)";
}

// splitmix64, and Box-Muller on top: the same numbers with libstdc++ and libc++ (native and wasm), where
// the standard distributions differ.
struct Rng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1p-53; }  // [0, 1)
  double normal() {
    const double r = std::sqrt(-2.0 * std::log(1.0 - uniform()));
    return r * std::cos(6.283185307179586 * uniform());
  }
  std::vector<float> normals(std::size_t n, double scale = 1.0, double offset = 0.0) {
    std::vector<float> v(n);
    for (auto& x : v) x = float(offset + scale * normal());
    return v;
  }
};

}  // namespace perfcard::test
