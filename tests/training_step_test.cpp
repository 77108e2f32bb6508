// A training step's kernels on graphs small enough to count by hand (fp32: 4 bytes an element), and their
// timing through the roofline with constants written here, so each figure follows from the model's rules.
#include <catch2/catch.hpp>

#include <numeric>

#include "model_builder.h"
#include "perfcard/analysis.h"
#include "perfcard/onnx_loader.h"
#include "perfcard/training_step.h"

using perfcard::KernelPhase;
using perfcard::Optimizer;
using perfcard::Precision;
using perfcard::test::ModelBuilder;

namespace {

const char* kConstants = R"({"format_version": "1.0", "version": "test-1",
  "arch_family": {"Ampere": "ampere"},
  "families": {
    "ampere": {"gemm_eff_tensor": 0.5, "gemm_eff_fp32": 0.5, "conv_eff_tensor": 0.5, "conv_eff_fp32": 0.5,
               "vector_eff": 1, "mem_eff": 0.5, "k_half": 0, "tile": 16, "launch_us": 0}},
  "runtimes": {
    "pytorch-eager": {"kind": "gpu", "dispatch_us": 0, "context_mb": 0, "workspace_mb": 0, "allocator_overhead": 0},
    "fused": {"kind": "gpu", "dispatch_us": 0, "context_mb": 0, "workspace_mb": 0, "allocator_overhead": 0,
              "fuse_elementwise": true}}})";

struct Step {
  perfcard::Model model;
  perfcard::Analysis analysis;
  perfcard::KernelPlan plan;
  std::vector<const perfcard::PlannedKernel*> of(KernelPhase p) const {
    std::vector<const perfcard::PlannedKernel*> out;
    for (const auto& k : plan.kernels)
      if (k.phase == p) out.push_back(&k);
    return out;
  }
  double bytes(KernelPhase p) const {
    double b = 0;
    for (const auto* k : of(p)) b += k->bytes * k->repeat;
    return b;
  }
};

Step step(const ModelBuilder& b, Optimizer opt = Optimizer::None, Precision p = Precision::FP32,
          const char* runtime = "pytorch-eager") {
  static const auto constants = perfcard::RooflineConstants::parse(kConstants);
  auto bytes = b.bytes();
  Step s{perfcard::load_model(bytes), {}, {}};
  s.analysis = perfcard::analyze(s.model, {});
  s.plan = perfcard::plan_training_step(s.model, s.analysis, constants, runtime, p, opt);
  return s;
}

// x [4, 8] -> MatMul(W [8, 16]) -> h [4, 16]: 128-byte input, 512-byte weight, 256-byte activations.
ModelBuilder linear() {
  ModelBuilder b;
  b.input("x", 1, {std::int64_t(4), std::int64_t(8)});
  b.initializer("W", 1, {8, 16});
  b.node("MatMul", {"x", "W"}, {"h"});
  return b;
}

}  // namespace

TEST_CASE("a linear layer and a ReLU: the ReLU's gradient reads its output, the weight's gradient is one product") {
  ModelBuilder b = linear();
  b.node("Relu", {"h"}, {"y"});
  b.output("y");
  auto s = step(b);
  REQUIRE(s.of(KernelPhase::Forward).size() == 2);
  const auto back = s.of(KernelPhase::Backward);
  REQUIRE(back.size() == 2);
  // In reverse: ReLU (dY, y, dX), then the MatMul: no gradient for the graph input x, so only dW = x^T dY,
  // a product of W's shape reduced over x's 4 rows, split across the device if it has few tiles.
  CHECK(back[0]->first->op_type == "Relu");
  CHECK(back[0]->bytes == 256 * 3);
  CHECK(back[1]->first->op_type == "MatMul");
  CHECK(back[1]->gemm_like);
  CHECK(back[1]->split_k);
  CHECK(back[1]->gemm_m == 8);
  CHECK(back[1]->gemm_n == 16);
  CHECK(back[1]->gemm_k == 4);
  CHECK(back[1]->flops == 2 * 8 * 16 * 4);
  CHECK(back[1]->bytes == 128 + 256 + 512);
  // optimizer none: plain SGD, one pass over the weights (read param and grad, write param)
  REQUIRE(s.of(KernelPhase::Update).size() == 1);
  CHECK(s.bytes(KernelPhase::Update) == 12 * 8 * 16);
  CHECK(s.plan.approximated == 0);
}

TEST_CASE("an activation's gradient is a product too, and a value read twice sums its gradients") {
  ModelBuilder b = linear();
  b.initializer("V", 1, {16, 16});
  b.node("Relu", {"h"}, {"a"});
  b.node("MatMul", {"a", "V"}, {"m"});  // a needs a gradient: dA = dM V^T, and dV = a^T dM
  b.node("Add", {"m", "h"}, {"y"});     // h is read by the ReLU and the Add: one accumulation
  b.output("y");
  auto s = step(b);
  const auto back = s.of(KernelPhase::Backward);
  // The Add passes its gradient through (same shapes): no kernel. The second MatMul: dA and dV. The ReLU.
  // h's two gradients summed (read two, write one). The first MatMul: dW only.
  REQUIRE(back.size() == 5);
  CHECK(back[0]->first->op_type == "MatMul");
  CHECK_FALSE(back[0]->split_k);
  CHECK(back[0]->bytes == 256 + 1024 + 256);  // dM, V, dA
  CHECK(back[1]->split_k);
  CHECK(back[1]->bytes == 256 + 256 + 1024);  // a, dM, dV
  CHECK(back[2]->first->op_type == "Relu");
  CHECK(back[3]->bytes == 3 * 256);            // the accumulation into h's gradient
  CHECK(back[4]->gemm_k == 4);
}

TEST_CASE("a broadcast bias gets its gradient summed over the rows") {
  ModelBuilder b = linear();
  b.initializer("c", 1, {16});
  b.node("Add", {"h", "c"}, {"y"});  // eager fuses it into the product (F.linear's addmm)
  b.output("y");
  auto s = step(b);
  const auto back = s.of(KernelPhase::Backward);
  REQUIRE(back.size() == 2);
  CHECK(back[0]->gemm_like);        // dW
  CHECK(back[1]->cls == perfcard::OpClass::Reduction);
  CHECK(back[1]->bytes == 256 + 64);  // dY read, the bias's gradient written
}

TEST_CASE("the optimizer's update: PyTorch's foreach passes over every weight element") {
  ModelBuilder b = linear();
  b.node("Relu", {"h"}, {"y"});
  b.output("y");
  const double n = 8 * 16;
  auto sgd = step(b, Optimizer::Sgd);
  CHECK(sgd.of(KernelPhase::Update).size() == 3);
  CHECK(sgd.bytes(KernelPhase::Update) == Approx(32 * n));  // momentum: mul_, add_(grad); param.add_(buf)
  auto adam = step(b, Optimizer::Adam);
  CHECK(adam.of(KernelPhase::Update).size() == 7);
  CHECK(adam.bytes(KernelPhase::Update) == Approx(72 * n));
  for (const auto* k : adam.of(KernelPhase::Update)) {
    CHECK(k->first == nullptr);
    CHECK_FALSE(k->label.empty());
    CHECK(k->repeat == 1);  // one weight: one launch per pass
  }
}

TEST_CASE("mixed precision: autocast's weight casts both ways, and fp16 unscales the gradients") {
  ModelBuilder b = linear();
  b.node("Relu", {"h"}, {"y"});
  b.output("y");
  const double n = 8 * 16;
  auto fp16 = step(b, Optimizer::None, Precision::FP16);
  const auto fwd = fp16.of(KernelPhase::Forward);
  REQUIRE(fwd.size() == 3);
  CHECK(fwd[0]->label == "autocast: fp32 weight to 16 bits");
  CHECK(fwd[0]->bytes == n * 4 + n * 2);
  const auto back = fp16.of(KernelPhase::Backward);
  REQUIRE(back.size() == 3);
  CHECK(back[2]->label == "autocast: weight gradient to fp32");
  CHECK(back[0]->bytes == 3 * 128);  // the ReLU's gradient at 16 bits
  REQUIRE(fp16.of(KernelPhase::Update).size() == 2);
  CHECK(fp16.bytes(KernelPhase::Update) == Approx(8 * n + 12 * n));  // the GradScaler's unscale, plain SGD
  auto bf16 = step(b, Optimizer::None, Precision::BF16);
  CHECK(bf16.of(KernelPhase::Update).size() == 1);  // bf16 needs no loss scaling
}

TEST_CASE("a training step is timed phase by phase, and its kernels are named") {
  ModelBuilder b;
  b.input("x", 1, {std::int64_t(64), std::int64_t(256)});
  b.initializer("W", 1, {256, 256});
  b.node("MatMul", {"x", "W"}, {"h"});
  b.node("Relu", {"h"}, {"y"});
  b.output("y");
  auto s = step(b, Optimizer::Adam);
  const char* devices = R"({"schema_version": 1, "devices": [
    {"id": "gpu-a", "name": "GPU A", "kind": "gpu", "arch": "Ampere test",
     "peak_tflops": {"fp32": 10, "fp16": {"value": 100, "source": "test"}},
     "sm_count": 64, "memory_gb": 16, "memory_bandwidth_gbs": 1000}]})";
  const auto cat = perfcard::DeviceCatalog::parse(devices);
  const auto c = perfcard::RooflineConstants::parse(kConstants);
  perfcard::RooflineOptions o;
  o.precision = Precision::FP32;
  o.keep_kernels = true;
  auto r = perfcard::roofline_latency(s.plan, cat.get("gpu-a"), c, o);
  CHECK(r.busy_ms_by_phase[0] + r.busy_ms_by_phase[1] + r.busy_ms_by_phase[2] == Approx(r.gpu_busy_ms));
  CHECK(r.busy_ms_by_phase[1] > 0);
  CHECK(r.busy_ms_by_phase[2] > 0);
  CHECK(r.kernels.back().name == "adam: param.addcdiv_(exp_avg, denom)");
  CHECK(r.kernels.back().phase == KernelPhase::Update);
  // dW = x^T dY may split its reduction (256 output tiles of 16 already fill the 64 SMs: the timing
  // leaves it whole; the next test splits one).
  const auto* dw = s.of(KernelPhase::Backward).back();
  CHECK(dw->split_k);
  CHECK(r.warnings.empty());
}

TEST_CASE("a split reduction fills the device: a weight gradient with one output tile is not 1/SMs of peak") {
  ModelBuilder b;
  b.input("x", 1, {std::int64_t(65536), std::int64_t(16)});
  b.initializer("W", 1, {16, 16});
  b.node("MatMul", {"x", "W"}, {"y"});
  b.output("y");
  auto s = step(b);
  const char* devices = R"({"schema_version": 1, "devices": [
    {"id": "gpu-a", "name": "GPU A", "kind": "gpu", "arch": "Ampere test",
     "peak_tflops": {"fp32": 10}, "sm_count": 64, "memory_gb": 16, "memory_bandwidth_gbs": 1e9}]})";
  const auto cat = perfcard::DeviceCatalog::parse(devices);
  const auto c = perfcard::RooflineConstants::parse(kConstants);
  perfcard::RooflineOptions o;
  o.precision = Precision::FP32;
  o.keep_kernels = true;
  auto split = perfcard::roofline_latency(s.plan, cat.get("gpu-a"), c, o);
  auto unsplit_plan = s.plan;
  for (auto& k : unsplit_plan.kernels) k.split_k = false;
  auto unsplit = perfcard::roofline_latency(unsplit_plan, cat.get("gpu-a"), c, o);
  // One 16 x 16 tile on 64 SMs: unsplit it runs at 1/64 of the product's roof, split at all of it.
  CHECK(unsplit.busy_ms_by_phase[1] == Approx(64 * split.busy_ms_by_phase[1]).epsilon(1e-6));
}

TEST_CASE("ops whose results need no gradient run no backward: ArgMax on the way, integer results") {
  ModelBuilder b = linear();
  b.node("Relu", {"h"}, {"y"});
  auto& am = b.node("ArgMax", {"h"}, {"i"});  // int64: no gradient flows back through it
  ModelBuilder::attr(am, "axis", std::int64_t(1));
  b.output("y");
  b.output("i", 7);
  auto s = step(b);
  for (const auto* k : s.of(KernelPhase::Backward)) CHECK(k->first->op_type != "ArgMax");
  CHECK(s.of(KernelPhase::Backward).size() == 2);  // ReLU's and the weight's
}

TEST_CASE("a runtime that fuses pointwise ops plans its training step one op a kernel, and says so") {
  ModelBuilder b = linear();
  b.node("Relu", {"h"}, {"y"});
  b.output("y");
  auto s = step(b, Optimizer::None, Precision::FP32, "fused");
  CHECK(s.of(KernelPhase::Forward).size() == 2);  // the ReLU not fused into the product
  CHECK(s.of(KernelPhase::Backward).size() == 2);
  REQUIRE(s.plan.notes.size() == 1);
  CHECK(s.plan.notes[0].find("training on fused: timed one op a kernel") == 0);
}
