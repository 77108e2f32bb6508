// Cost rules: MACs by their defining formulas, parameters counted once, BN buffers excluded.
#include <catch2/catch.hpp>

#include "model_builder.h"
#include "perfcard/analysis.h"
#include "perfcard/onnx_loader.h"

using perfcard::test::ModelBuilder;

namespace {

perfcard::Analysis run(const ModelBuilder& b, std::map<std::string, std::int64_t> dims = {}) {
  auto bytes = b.bytes();
  perfcard::Model m = perfcard::load_model(bytes);
  perfcard::AnalyzeOptions o;
  o.dims.values = std::move(dims);
  return perfcard::analyze(m, o);
}

}  // namespace

TEST_CASE("Conv MACs = N*Cout*Hout*Wout*(Cin/group)*kh*kw, with stride, padding and groups") {
  ModelBuilder b;
  b.input("x", 1, {std::string("batch"), std::int64_t(32), std::int64_t(56), std::int64_t(56)});
  b.initializer("w", 1, {64, 8, 3, 3});
  auto& n = b.node("Conv", {"x", "w"}, {"y"}, "conv");
  ModelBuilder::attr(n, "group", std::int64_t(4));
  ModelBuilder::attr(n, "strides", std::vector<std::int64_t>{2, 2});
  ModelBuilder::attr(n, "pads", std::vector<std::int64_t>{1, 1, 1, 1});
  b.output("y");
  auto a = run(b, {{"batch", 3}});
  // Hout = floor((56 + 2 - 3) / 2) + 1 = 28
  const double macs = 3.0 * 64 * 28 * 28 * (32 / 4) * 3 * 3;
  CHECK(a.totals.macs == Approx(macs));
  CHECK(a.totals.flops == Approx(2 * macs));
  CHECK(a.totals.params == 64 * 8 * 3 * 3);
  CHECK(a.totals.activations == Approx(3.0 * 64 * 28 * 28));
}

TEST_CASE("MatMul broadcasts batch dims; Gemm honours transB and counts its bias add") {
  ModelBuilder b;
  b.input("a", 1, {std::int64_t(4), std::int64_t(1), std::int64_t(16), std::int64_t(32)});
  b.input("b", 1, {std::int64_t(6), std::int64_t(32), std::int64_t(8)});
  b.node("MatMul", {"a", "b"}, {"c"});
  b.input("x", 1, {std::int64_t(5), std::int64_t(10)});
  b.initializer("w", 1, {7, 10});
  b.initializer("bias", 1, {7});
  auto& g = b.node("Gemm", {"x", "w", "bias"}, {"y"});
  ModelBuilder::attr(g, "transB", std::int64_t(1));
  b.output("c");
  b.output("y");
  auto a = run(b);
  const double matmul = 4.0 * 6 * 16 * 8 * 32, gemm = 5.0 * 7 * 10;
  CHECK(a.totals.macs == Approx(matmul + gemm));
  CHECK(a.totals.flops == Approx(2 * matmul + 2 * gemm + 5 * 7));
  CHECK(a.totals.params == 7 * 10 + 7);
}

TEST_CASE("a weight shared by two nodes is one set of parameters; BN running stats are buffers") {
  ModelBuilder b;
  b.input("x", 1, {std::int64_t(2), std::int64_t(8)});
  b.initializer("w", 1, {8, 8});
  b.node("MatMul", {"x", "w"}, {"h"});
  b.node("MatMul", {"h", "w"}, {"y"});
  b.input("img", 1, {std::int64_t(1), std::int64_t(16), std::int64_t(4), std::int64_t(4)});
  for (const char* p : {"scale", "bias", "mean", "var"}) b.initializer(p, 1, {16});
  b.node("BatchNormalization", {"img", "scale", "bias", "mean", "var"}, {"z"});
  b.output("y");
  b.output("z");
  auto a = run(b);
  CHECK(a.totals.params == 64 + 32);
  CHECK(a.totals.weight_bytes == (64 + 64) * 4);
}

TEST_CASE("binding a symbolic batch scales MACs linearly; unbound dims default to 1 with a warning") {
  ModelBuilder b;
  b.input("x", 1, {std::string("batch"), std::int64_t(64)});
  b.initializer("w", 1, {64, 32});
  b.node("MatMul", {"x", "w"}, {"y"});
  b.output("y");
  auto one = run(b);
  auto eight = run(b, {{"batch", 8}});
  CHECK(eight.totals.macs == Approx(8 * one.totals.macs));
  REQUIRE(one.shapes.symbols.size() == 1);
  CHECK_FALSE(one.shapes.symbols[0].bound);
  CHECK(one.shapes.warnings.size() == 1);
  CHECK(one.shapes.warnings[0].message == "dim 'batch' is not bound; using 1 (bind it with --dim batch=N)");
  CHECK(eight.shapes.symbols[0].bound);
  CHECK(eight.shapes.warnings.empty());
}

TEST_CASE("an unnamed dynamic dim defaults to 1 and says so") {
  ModelBuilder b;
  b.input("x", 1, {std::string(""), std::int64_t(4)});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  auto a = run(b);
  REQUIRE(a.shapes.warnings.size() == 1);
  CHECK(a.shapes.warnings[0].message == "input 'x' dim 0 is dynamic and unnamed; using 1");
  CHECK(a.totals.flops == Approx(4));
}

TEST_CASE("an op without a rule is listed as unknown and its cost is flagged, never silently zero") {
  ModelBuilder b;
  b.input("x", 1, {std::int64_t(2), std::int64_t(3)});
  auto& n = b.node("FancyOp", {"x"}, {"y"}, "mystery");
  n.set_domain("com.example");
  b.node("Relu", {"y"}, {"z"});
  b.output("z");
  auto a = run(b);
  REQUIRE(a.shapes.unknown_ops.size() == 1);
  CHECK(a.shapes.unknown_ops[0] == "com.example::FancyOp");
  CHECK(a.totals.unknown_nodes == 1);
  CHECK(a.totals.uncosted_nodes == 1);  // the Relu after it has no known shape
}

TEST_CASE("an op without a rule takes its shapes from value_info when present") {
  ModelBuilder b;
  b.input("x", 1, {std::int64_t(2), std::int64_t(3)});
  auto& n = b.node("FancyOp", {"x"}, {"y"});
  n.set_domain("com.example");
  auto* vi = b.graph().add_value_info();
  vi->set_name("y");
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(1);
  tt->mutable_shape()->add_dim()->set_dim_value(2);
  tt->mutable_shape()->add_dim()->set_dim_value(5);
  b.node("Relu", {"y"}, {"z"});
  b.output("z");
  auto a = run(b);
  CHECK(a.shapes.unknown_ops.empty());
  CHECK(a.totals.flops == Approx(10));  // the Relu over the value_info shape
}
