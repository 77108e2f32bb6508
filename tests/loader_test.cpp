// The loader on valid input: structure, declared types, weights kept as shapes only.
#include <catch2/catch.hpp>

#include "model_builder.h"
#include "perfcard/analysis.h"
#include "perfcard/onnx_loader.h"
#include "test_util.h"

using perfcard::test::ModelBuilder;

TEST_CASE("the bundled graph-only resnet50 loads without its external weights") {
  auto bytes = perfcard::test::read_file(perfcard::test::repo_path("public/examples/resnet50.onnx"));
  perfcard::Model m = perfcard::load_model(bytes);
  CHECK(m.graph.nodes.size() == 169);
  CHECK(m.graph.order.size() == m.graph.nodes.size());
  REQUIRE(m.graph.inputs.size() == 1);
  const auto& in = m.graph.values[std::size_t(m.graph.inputs[0])];
  REQUIRE(in.declared);
  CHECK(in.declared->dims[0].symbol == "batch");
  std::uint64_t stored = 0;
  for (const auto& t : m.graph.initializers) stored += t.stored_bytes;
  CHECK(stored == 0);  // external data: nothing stored in the file
  perfcard::AnalyzeOptions o;
  o.dims.values["batch"] = 1;
  auto a = perfcard::analyze(m, o);
  CHECK(a.totals.macs == Approx(4.0892e9).epsilon(0.001));
  CHECK(a.totals.params == Approx(25.53e6).epsilon(0.002));
}

TEST_CASE("nodes out of file order are executed in topological order") {
  ModelBuilder b;
  b.input("x", 1, {std::int64_t(4)});
  b.node("Relu", {"a"}, {"y"}, "second");
  b.node("Relu", {"x"}, {"a"}, "first");
  b.output("y");
  auto bytes = b.bytes();
  perfcard::Model m = perfcard::load_model(bytes);
  REQUIRE(m.graph.order.size() == 2);
  CHECK(m.graph.nodes[std::size_t(m.graph.order[0])].name == "first");
}

TEST_CASE("small integer initializers keep their contents for shape arithmetic; weights do not") {
  ModelBuilder b;
  b.input("x", 1, {std::int64_t(2), std::int64_t(6)});
  b.initializer("shape", 7, {2}, {3, -1});
  b.initializer("w", 1, {4, 4});
  b.node("Reshape", {"x", "shape"}, {"y"});
  b.output("y");
  auto bytes = b.bytes();
  perfcard::Model m = perfcard::load_model(bytes);
  REQUIRE(m.graph.initializers.size() == 2);
  REQUIRE(m.graph.initializers[0].data.has_value());
  CHECK(m.graph.initializers[0].data->ints == std::vector<std::int64_t>{3, -1});
  CHECK_FALSE(m.graph.initializers[1].data.has_value());
  auto a = perfcard::analyze(m, {});
  int y = m.graph.find("y");
  CHECK(a.shapes.graph.values[std::size_t(y)].dims == std::vector<std::int64_t>{3, 4});
}

TEST_CASE("a subgraph reads values of the enclosing graph and is counted once") {
  ModelBuilder b;
  b.input("x", 1, {std::int64_t(8)});
  b.input("cond", 9, {});
  auto& n = b.node("If", {"cond"}, {"y"}, "branch");
  for (const char* name : {"then_branch", "else_branch"}) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* g = a->mutable_g();
    g->set_name(name);
    auto* node = g->add_node();
    node->set_op_type(std::string(name) == "then_branch" ? "Relu" : "Neg");
    node->add_input("x");  // from the enclosing scope
    node->add_output(std::string(name) + "_out");
    g->add_output()->set_name(std::string(name) + "_out");
  }
  b.output("y");
  auto bytes = b.bytes();
  perfcard::Model m = perfcard::load_model(bytes);
  auto a = perfcard::analyze(m, {});
  int y = m.graph.find("y");
  CHECK(a.shapes.graph.values[std::size_t(y)].dims == std::vector<std::int64_t>{8});
  CHECK(a.totals.subgraph_nodes == 1);  // one branch counted
  CHECK(a.totals.flops == Approx(8));
  // The capture: the body's x is the enclosing graph's, found through outer_of (kept beside the values).
  const perfcard::Graph& body = m.graph.nodes[0].attributes[0].graphs[0];
  const int xb = body.find("x");
  REQUIRE(xb >= 0);
  CHECK(body.values[std::size_t(xb)].kind == perfcard::ValueKind::OuterScope);
  CHECK(body.outer_value(std::size_t(xb)) == m.graph.find("x"));
  CHECK(body.outer_value(std::size_t(body.find("then_branch_out"))) == -1);
  CHECK(m.graph.outer_of.empty());  // the main graph captures nothing and pays nothing for it
}
