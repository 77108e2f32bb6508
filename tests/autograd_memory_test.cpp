// What eager autograd keeps, and the forward / backward peaks that follow, on graphs small enough to count
// by hand (fp32 throughout: 4 bytes an element).
#include <catch2/catch.hpp>

#include "model_builder.h"
#include "perfcard/analysis.h"
#include "perfcard/autograd_memory.h"
#include "perfcard/liveness.h"
#include "perfcard/onnx_loader.h"

using perfcard::test::ModelBuilder;

namespace {
struct Run {
  perfcard::Model model;
  perfcard::Analysis analysis;
  perfcard::AutogradMemory ag;
};

Run run(const ModelBuilder& b) {
  auto bytes = b.bytes();
  Run r{perfcard::load_model(bytes), {}, {}};
  r.analysis = perfcard::analyze(r.model, {});
  r.ag = perfcard::autograd_memory(r.model.graph, r.analysis.shapes.graph, r.analysis.costs, 32, 4);
  return r;
}

// x [4, 8] -> MatMul(W [8, 16]) -> h [4, 16] -> ... : 128-byte input, 512-byte weight, 256-byte activations.
ModelBuilder linear(std::string h = "h") {
  ModelBuilder b;
  b.input("x", 1, {std::int64_t(4), std::int64_t(8)});
  b.initializer("W", 1, {8, 16});
  b.node("MatMul", {"x", "W"}, {h});
  return b;
}
}  // namespace

TEST_CASE("a linear layer and a ReLU: the input for the weight's gradient, the ReLU's output for its own") {
  ModelBuilder b = linear();
  b.node("Relu", {"h"}, {"y"});
  b.output("y");
  auto r = run(b);
  CHECK(r.ag.saved_bytes == 128 + 256);
  // Forward: x (held by the caller), h and y together at the ReLU.
  CHECK(r.ag.inference_grad_peak == 128 + 256 + 256);
  // Backward of the MatMul (the last step): x, the output y, the gradient of h and W's gradient.
  CHECK(r.ag.backward_peak == 128 + 256 + 256 + 512);
  CHECK(r.ag.backward_peak_weight_grads == 512);
  CHECK(r.ag.weight_grad_elements == 8 * 16);
  CHECK(r.ag.complete);
}

TEST_CASE("nothing is kept off the gradient's path") {
  ModelBuilder b;
  b.input("x", 1, {std::int64_t(4), std::int64_t(8)});
  b.node("Mul", {"x", "x"}, {"a"});
  b.node("Sigmoid", {"a"}, {"y"});
  b.output("y");
  auto r = run(b);
  CHECK(r.ag.saved_bytes == 0);
  CHECK(r.ag.weight_grad_elements == 0);
}

TEST_CASE("Add keeps nothing, Mul keeps each operand the other's gradient needs, Div its divisor") {
  ModelBuilder b = linear();
  b.initializer("c", 1, {16});
  b.node("Add", {"h", "c"}, {"a"});      // nothing
  b.node("Mul", {"a", "c"}, {"m"});      // c (a weight: resident, not counted) for a's gradient; a for c's
  b.node("Div", {"m", "c"}, {"y"});      // the divisor (a weight), and m for c's gradient
  b.output("y");
  auto r = run(b);
  CHECK(r.ag.saved_bytes == 128 + 256 + 256);  // x (MatMul), a (Mul), m (Div)
}

TEST_CASE("the exporter's SiLU is one eager op keeping its input") {
  ModelBuilder b = linear();
  b.node("Sigmoid", {"h"}, {"s"});
  b.node("Mul", {"h", "s"}, {"y"});
  b.output("y");
  auto r = run(b);
  CHECK(r.ag.eager_ops_taken_back == 1);
  CHECK(r.ag.saved_bytes == 128 + 256);  // x and h; the sigmoid's output is not kept
}

TEST_CASE("the exporter's erf GELU is one eager op keeping its input") {
  ModelBuilder b = linear();
  b.initializer("sqrt2", 1, {});
  b.initializer("one", 1, {});
  b.initializer("half", 1, {});
  b.node("Div", {"h", "sqrt2"}, {"d"});
  b.node("Erf", {"d"}, {"e"});
  b.node("Add", {"e", "one"}, {"a"});
  b.node("Mul", {"h", "a"}, {"m"});
  b.node("Mul", {"m", "half"}, {"y"});
  b.output("y");
  auto r = run(b);
  CHECK(r.ag.eager_ops_taken_back == 1);
  CHECK(r.ag.saved_bytes == 128 + 256);
}

TEST_CASE("the exporter's LayerNorm, affine part included, is one eager op keeping its input") {
  ModelBuilder b = linear();
  b.initializer("two", 1, {});
  b.initializer("eps", 1, {});
  b.initializer("gamma", 1, {16});
  b.initializer("beta", 1, {16});
  auto& r1 = b.node("ReduceMean", {"h"}, {"mu"});
  ModelBuilder::attr(r1, "axes", std::vector<std::int64_t>{-1});
  b.node("Sub", {"h", "mu"}, {"c"});
  b.node("Pow", {"c", "two"}, {"p"});
  auto& r2 = b.node("ReduceMean", {"p"}, {"v"});
  ModelBuilder::attr(r2, "axes", std::vector<std::int64_t>{-1});
  b.node("Add", {"v", "eps"}, {"ve"});
  b.node("Sqrt", {"ve"}, {"sd"});
  b.node("Div", {"c", "sd"}, {"n"});
  b.node("Mul", {"n", "gamma"}, {"g"});
  b.node("Add", {"g", "beta"}, {"y"});
  b.output("y");
  auto r = run(b);
  CHECK(r.ag.eager_ops_taken_back == 1);
  CHECK(r.ag.saved_bytes == 128 + 256 + 2 * 4 * 4);  // x, h, and the fp32 mean and 1/std of h's 4 rows
}

TEST_CASE("a hand-written norm is counted op by op, as eager runs it") {
  ModelBuilder b = linear();
  b.initializer("two", 1, {});
  b.node("Pow", {"h", "two"}, {"p"});  // keeps h
  auto& m = b.node("ReduceMean", {"p"}, {"v"});  // keeps p (PyTorch 1.13's mean keeps its input)
  ModelBuilder::attr(m, "axes", std::vector<std::int64_t>{-1});
  b.node("Sqrt", {"v"}, {"s"});        // keeps its output (4 x 1)
  b.node("Div", {"h", "s"}, {"y"});    // keeps s and h
  b.output("y");
  auto r = run(b);
  CHECK(r.ag.eager_ops_taken_back == 0);
  CHECK(r.ag.saved_bytes == 128 + 256 + 256 + 16);
}

TEST_CASE("MaxPool keeps its input and int64 indices of its output's shape") {
  ModelBuilder b;
  b.input("x", 1, {std::int64_t(1), std::int64_t(2), std::int64_t(8), std::int64_t(8)});
  b.initializer("W", 1, {2, 2, 1, 1});
  b.node("Conv", {"x", "W"}, {"c"});
  auto& p = b.node("MaxPool", {"c"}, {"y"});
  ModelBuilder::attr(p, "kernel_shape", std::vector<std::int64_t>{2, 2});
  ModelBuilder::attr(p, "strides", std::vector<std::int64_t>{2, 2});
  b.output("y");
  auto r = run(b);
  CHECK(r.ag.saved_bytes == 512 + 512 + 2 * 4 * 4 * 8);  // x, c, indices
}

TEST_CASE("an embedding keeps its indices, not its table") {
  ModelBuilder b;
  b.input("ids", 7, {std::int64_t(2), std::int64_t(5)});
  b.initializer("table", 1, {100, 8});
  b.node("Gather", {"table", "ids"}, {"e"});
  b.node("Tanh", {"e"}, {"y"});
  b.output("y");
  auto r = run(b);
  CHECK(r.ag.saved_bytes == 2 * 5 * 8 + 2 * 5 * 8 * 4);  // the int64 ids and tanh's output
  CHECK(r.ag.weight_grad_elements == 800);
}

TEST_CASE("a weight the exporter transposed is no activation under eager, which reads the weight as it is") {
  ModelBuilder b;
  b.input("x", 1, {std::int64_t(4), std::int64_t(8)});
  b.initializer("E", 1, {16, 8});  // a tied embedding, [vocab, hidden]
  b.node("Transpose", {"E"}, {"Et"});
  b.node("MatMul", {"x", "Et"}, {"y"});
  b.output("y");
  auto r = run(b);
  const auto& g = r.model.graph;
  const auto eager = perfcard::eager_ops(g, r.analysis.costs, true);
  const auto other = perfcard::eager_ops(g, r.analysis.costs, false);
  CHECK(eager.internal[std::size_t(g.find("Et"))]);
  CHECK_FALSE(other.internal[std::size_t(g.find("Et"))]);
  // x and y (128 + 256 bytes) under eager; a runtime that materializes Et (512 bytes) holds it too.
  CHECK(perfcard::peak_live_memory(g, r.analysis.shapes.graph, 32, true, &eager).peak_bytes == 128 + 256);
  CHECK(perfcard::peak_live_memory(g, r.analysis.shapes.graph, 32, true, &other).peak_bytes == 128 + 512 + 256);
  CHECK(r.ag.saved_bytes == 128);  // x, for the weight's gradient; Et is kept as the weight it is
}

TEST_CASE("a tied embedding and head: two gradients of one weight meet when the second arrives") {
  ModelBuilder b;
  b.input("ids", 7, {std::int64_t(4)});
  b.initializer("E", 1, {16, 8});
  b.node("Gather", {"E", "ids"}, {"h"});
  b.node("Transpose", {"E"}, {"Et"});  // the exporter's tied head reads E through its transpose
  b.node("MatMul", {"h", "Et"}, {"y"});
  b.output("y");
  auto r = run(b);
  // As eager runs it (module_frames: the transpose is never made, the head reads E itself).
  const auto ag = perfcard::autograd_memory(r.model.graph, r.analysis.shapes.graph, r.analysis.costs, 32, 4, true);
  CHECK(ag.weight_grad_elements == 16 * 8);
  // At the embedding's backward (the last to run) its gradient exists beside the head's, already stored:
  // the indices and the output (32 + 256, held throughout), h's gradient (128) and two of E's (2 x 512).
  CHECK(ag.backward_peak_weight_grads == 2 * 512);
  CHECK(ag.backward_peak == 32 + 256 + 128 + 2 * 512);
}
