// Peak live activation memory over the execution order; views alias instead of allocating.
#include <catch2/catch.hpp>

#include "model_builder.h"
#include "perfcard/analysis.h"
#include "perfcard/liveness.h"
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

TEST_CASE("eager's Python frames: a module's input is held until the module returns, by the scopes in node names") {
  ModelBuilder b;
  b.input("x", 1, {std::int64_t(1000)});
  b.node("Relu", {"x"}, {"s"}, "/stem/Relu");
  b.node("Relu", {"s"}, {"a"}, "/trunk/block/a/Relu");  // s enters /trunk: its caller holds it until /trunk ends
  b.node("Relu", {"a"}, {"c"}, "/trunk/block/b/Relu");
  b.node("Relu", {"c"}, {"d"}, "/trunk/block/c/Relu");
  b.node("Relu", {"d"}, {"y"}, "/head/Relu");
  b.output("y");
  auto bytes = b.bytes();
  const auto m = perfcard::load_model(bytes);
  const auto a = perfcard::analyze(m, {});
  const auto plain = perfcard::buffer_intervals(m.graph);
  const auto frames = perfcard::buffer_intervals(m.graph, nullptr, true);
  const int s = m.graph.find("s"), av = m.graph.find("a"), d = m.graph.find("d");
  CHECK(plain.held(std::size_t(s)) == 1);
  CHECK(frames.held(std::size_t(s)) == 3);   // the last node of /trunk
  CHECK(frames.last[std::size_t(s)] == 1);   // its last reader is unchanged (the backward's gradient spans)
  CHECK(frames.held(std::size_t(av)) == 2);  // a enters /trunk/block/b, which ends at its one node
  CHECK(frames.held(std::size_t(d)) == 4);   // d enters /head: its last reader anyway
  // x held by the caller, s held, and the chain's two: four buffers at /trunk/block/c.
  CHECK(perfcard::peak_live_memory(m.graph, a.shapes.graph, 0, true, nullptr, true).peak_bytes == 4 * 4000);
  CHECK(perfcard::peak_live_memory(m.graph, a.shapes.graph, 0, true, nullptr, false).peak_bytes == 3 * 4000);
}

TEST_CASE("module scopes without a leading slash (other exporters' names) are told apart by their first component") {
  ModelBuilder b;
  b.input("x", 1, {std::int64_t(1000)});
  b.node("Relu", {"x"}, {"s"}, "a/Relu");
  b.node("Relu", {"s"}, {"t"}, "b/inner/Relu");  // s enters module b
  b.node("Relu", {"t"}, {"y"}, "b/other/Relu");
  b.output("y");
  auto bytes = b.bytes();
  const auto m = perfcard::load_model(bytes);
  const auto frames = perfcard::buffer_intervals(m.graph, nullptr, true);
  CHECK(frames.held(std::size_t(m.graph.find("s"))) == 2);  // held to b's last node
  CHECK(perfcard::module_scope("b/inner/Relu") == "b/inner");
  CHECK(perfcard::module_scope("/Relu").empty());
  CHECK(perfcard::module_scope("Relu").empty());
}
