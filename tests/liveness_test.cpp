// Peak live activation memory over the execution order; views alias instead of allocating.
#include <catch2/catch.hpp>

#include "model_builder.h"
#include "perfcard/analysis.h"
#include "perfcard/onnx_loader.h"

using perfcard::test::ModelBuilder;

namespace {
perfcard::Analysis run(const ModelBuilder& b) {
  auto bytes = b.bytes();
  return perfcard::analyze(perfcard::load_model(bytes), {});
}
}  // namespace

TEST_CASE("a chain keeps at most two buffers alive") {
  ModelBuilder b;
  b.input("x", 1, {std::int64_t(1000)});
  b.node("Relu", {"x"}, {"a"});
  b.node("Relu", {"a"}, {"b"});
  b.node("Relu", {"b"}, {"y"});
  b.output("y");
  auto a = run(b);
  CHECK(a.liveness.peak_bytes == 2 * 4000);
  CHECK(a.liveness.complete);
}

TEST_CASE("a skip connection keeps its source alive until the join") {
  ModelBuilder b;
  b.input("x", 1, {std::int64_t(1000)});
  b.node("Relu", {"x"}, {"a"});
  b.node("Relu", {"a"}, {"b"});
  b.node("Relu", {"b"}, {"c"});
  b.node("Add", {"a", "c"}, {"y"});
  b.output("y");
  auto a = run(b);
  // At the third Relu: a (held for the Add), b (its input) and c (its output).
  CHECK(a.liveness.peak_bytes == 3 * 4000);
}

TEST_CASE("Reshape and Flatten alias their input instead of allocating") {
  ModelBuilder b;
  b.input("x", 1, {std::int64_t(10), std::int64_t(100)});
  b.initializer("shape", 7, {1}, {1000});
  b.node("Reshape", {"x", "shape"}, {"r"});
  b.node("Relu", {"r"}, {"y"});
  b.output("y");
  auto a = run(b);
  CHECK(a.liveness.peak_bytes == 2 * 4000);
  CHECK(a.totals.bytes_read == Approx(4000));  // the view moves no data; the Relu reads once
}
