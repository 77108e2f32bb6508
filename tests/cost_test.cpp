// Cost rules: MACs by their defining formulas, parameters counted once, BN buffers excluded.
#include <catch2/catch.hpp>

#include <optional>

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

namespace {

const perfcard::NodeCost& cost_of(const perfcard::Analysis& a, const perfcard::Model& m, const std::string& name) {
  for (std::size_t i = 0; i < m.graph.nodes.size(); ++i)
    if (m.graph.nodes[i].name == name) return a.costs.nodes[i];
  FAIL("no node " << name);
  throw;
}

struct Loaded {
  std::vector<std::uint8_t> bytes;
  perfcard::Model model;
  perfcard::Analysis analysis;
  explicit Loaded(const ModelBuilder& b) : bytes(b.bytes()), model(perfcard::load_model(bytes)), analysis(perfcard::analyze(model, {})) {}
};

}  // namespace

TEST_CASE("Gather, GatherElements, GatherND and Slice read what they index, not the whole table") {
  ModelBuilder b;
  b.initializer("table", 1, {50000, 256});  // a 51 MB embedding table
  b.input("ids", 7, {std::int64_t(4), std::int64_t(16)});
  b.node("Gather", {"table", "ids"}, {"rows"}, "gather");
  b.output("rows");
  b.input("idx2", 7, {std::int64_t(8), std::int64_t(256)});
  b.node("GatherElements", {"table", "idx2"}, {"elems"}, "gather_elements");
  b.output("elems");
  b.input("idx3", 7, {std::int64_t(8), std::int64_t(1)});
  b.node("GatherND", {"table", "idx3"}, {"nd"}, "gather_nd");
  b.output("nd");
  b.initializer("starts", 7, {1}, {100});
  b.initializer("ends", 7, {1}, {110});
  b.node("Slice", {"table", "starts", "ends"}, {"sliced"}, "slice");
  b.output("sliced");
  Loaded l(b);
  CHECK(cost_of(l.analysis, l.model, "gather").bytes_read == Approx(4 * 16 * 8 + 4 * 16 * 256 * 4.0));
  CHECK(cost_of(l.analysis, l.model, "gather_elements").bytes_read == Approx(8 * 256 * 8 + 8 * 256 * 4.0));
  CHECK(cost_of(l.analysis, l.model, "gather_nd").bytes_read == Approx(8 * 8 + 8 * 256 * 4.0));
  CHECK(cost_of(l.analysis, l.model, "slice").bytes_read == Approx(8 + 8 + 10 * 256 * 4.0));
  CHECK(l.analysis.totals.params == 50000 * 256);  // the table is still a weight
}

TEST_CASE("Einsum with an ellipsis costs what the equivalent MatMul costs") {
  ModelBuilder b;
  b.input("a", 1, {std::int64_t(8), std::int64_t(4), std::int64_t(16), std::int64_t(32)});
  b.input("b", 1, {std::int64_t(8), std::int64_t(4), std::int64_t(32), std::int64_t(64)});
  auto& e = b.node("Einsum", {"a", "b"}, {"e"}, "einsum");
  ModelBuilder::attr(e, "equation", std::string("...ij,...jk->...ik"));
  b.node("MatMul", {"a", "b"}, {"m"}, "matmul");
  b.output("e");
  b.output("m");
  Loaded l(b);
  const double macs = 8.0 * 4 * 16 * 32 * 64;
  CHECK(cost_of(l.analysis, l.model, "einsum").macs == Approx(macs));
  CHECK(cost_of(l.analysis, l.model, "matmul").macs == Approx(macs));
}

namespace {

// A Loop over `trips` (empty: no trip count, a while loop on a graph-input condition) whose body runs a
// [16, 32] x [32, 32] MatMul on an outer-scope value and a [4096, 4096] intermediate it reduces away.
ModelBuilder loop_model(std::optional<std::int64_t> trips) {
  ModelBuilder b;
  b.input("x", 1, {std::int64_t(16), std::int64_t(32)});
  b.initializer("w", 1, {32, 32});
  b.initializer("big", 1, {4096, 4096});
  std::string m = "";
  if (trips) {
    b.initializer("M", 7, {}, {*trips});
    m = "M";
  }
  b.input("cond", 9, {});
  auto& loop = b.node("Loop", {m, "cond"}, {"ys", "sums"}, "loop");
  auto& body = ModelBuilder::graph_attr(loop, "body");
  ModelBuilder::body_value(body.mutable_input(), "i", 7, {});
  ModelBuilder::body_value(body.mutable_input(), "c", 9, {});
  auto* n = body.add_node();
  n->set_op_type("Identity"); n->add_input("c"); n->add_output("c_out"); n->set_name("keep_going");
  n = body.add_node();
  n->set_op_type("MatMul"); n->add_input("x"); n->add_input("w"); n->add_output("y"); n->set_name("body_matmul");
  n = body.add_node();
  n->set_op_type("Relu"); n->add_input("big"); n->add_output("big_relu"); n->set_name("body_big");
  n = body.add_node();
  n->set_op_type("ReduceSum"); n->add_input("big_relu"); n->add_output("s"); n->set_name("body_sum");
  ModelBuilder::body_value(body.mutable_output(), "c_out", 9, {});
  ModelBuilder::body_value(body.mutable_output(), "y", 1, {16, 32});
  ModelBuilder::body_value(body.mutable_output(), "s", 1, {1, 1});
  b.output("ys");
  b.output("sums");
  return b;
}

}  // namespace

TEST_CASE("a Loop's body counts once per iteration when the trip count is known, and says so when not") {
  const double body_macs = 16.0 * 32 * 32;
  Loaded known(loop_model(10));
  CHECK(known.analysis.totals.macs == Approx(10 * body_macs));
  CHECK(known.analysis.totals.per_iteration_loops == 0);
  CHECK(cost_of(known.analysis, known.model, "loop").trips == 10);

  Loaded unknown(loop_model(std::nullopt));
  CHECK(unknown.analysis.totals.macs == Approx(body_macs));
  CHECK(unknown.analysis.totals.per_iteration_loops == 1);
  bool said = false;
  for (const auto& w : unknown.analysis.shapes.warnings) said |= w.message.find("costed once, per iteration") != std::string::npos;
  CHECK(said);
}

TEST_CASE("activations inside a body count in the peak: a 64 MiB buffer inside a Loop does not fit in less") {
  Loaded l(loop_model(3));
  CHECK(l.analysis.liveness.peak_bytes >= 4096ull * 4096 * 4);
}

TEST_CASE("an If with an extra graph attribute still costs its costlier branch") {
  ModelBuilder b;
  b.input("x", 1, {std::int64_t(16), std::int64_t(32)});
  b.initializer("w", 1, {32, 32});
  b.input("cond", 9, {});
  auto& n = b.node("If", {"cond"}, {"y"}, "if");
  auto& extra = ModelBuilder::graph_attr(n, "annotations");  // not an If attribute: never runs
  (void)extra;
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto& g = ModelBuilder::graph_attr(n, branch);
    auto* m = g.add_node();
    m->set_op_type(std::string(branch) == "then_branch" ? "MatMul" : "Add");
    m->add_input("x"); m->add_input(std::string(branch) == "then_branch" ? "w" : "x"); m->add_output("r");
    ModelBuilder::body_value(g.mutable_output(), "r", 1, {16, 32});
  }
  b.output("y");
  Loaded l(b);
  CHECK(l.analysis.totals.macs == Approx(16.0 * 32 * 32));
}

TEST_CASE("totals that pass 2^64 saturate and say so") {
  ModelBuilder b;
  b.input("x", 1, {std::int64_t(1)});
  for (int i = 0; i < 4100; ++i) b.initializer("w" + std::to_string(i), 1, {std::int64_t{1} << 25, std::int64_t{1} << 25});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  Loaded l(b);
  CHECK(l.analysis.totals.saturated);
  CHECK(l.analysis.totals.weight_bytes == UINT64_MAX);
  bool said = false;
  for (const auto& w : l.analysis.shapes.warnings) said |= w.message.find("saturated") != std::string::npos;
  CHECK(said);
}

TEST_CASE("an analysis without the node costs table has the same totals, and what reads the table refuses it") {
  ModelBuilder b;
  b.input("x", 1, {std::int64_t(2), std::int64_t(16)});
  b.initializer("w", 1, {16, 16});
  b.node("MatMul", {"x", "w"}, {"h"}, "mm1");
  b.node("Relu", {"h"}, {"r"}, "relu");
  b.node("MatMul", {"r", "w"}, {"y"}, "mm2");  // the same weight again: counted once, at the first reader
  b.output("y");
  auto bytes = b.bytes();
  perfcard::Model m = perfcard::load_model(bytes);
  perfcard::AnalyzeOptions with, without;
  without.node_costs = false;
  const perfcard::Analysis full = perfcard::analyze(m, with), lean = perfcard::analyze(m, without);
  REQUIRE(full.costs.nodes.size() == 3);
  CHECK(lean.costs.nodes.empty());
  CHECK(lean.totals.macs == full.totals.macs);
  CHECK(lean.totals.bytes_read == full.totals.bytes_read);
  CHECK(lean.totals.params == 16 * 16);
  CHECK(lean.by_op_type.at("MatMul").count == 2);
  CHECK_NOTHROW(perfcard::require_node_costs(m, full));
  try {
    perfcard::require_node_costs(m, lean);
    FAIL("an analysis without node costs was accepted");
  } catch (const perfcard::Error& e) {
    CHECK(e.code() == perfcard::ErrorCode::Internal);
    CHECK(e.message() == "this needs every node's costs: analyze() was called without AnalyzeOptions::node_costs");
  }
}
