// Every op of the registry against inputs of every small rank, unknown ranks included, with and without a
// declared output shape filling in what a rule leaves open: each combination analyzes or fails with a
// perfcard::Error, never a crash (run under ASan+UBSan by scripts/test_sanitize.sh, where an
// out-of-bounds read of an empty dims vector is a finding).
#include <catch2/catch.hpp>

#include <cmath>

#include "model_builder.h"
#include "perfcard/analysis.h"
#include "perfcard/error.h"
#include "perfcard/onnx_loader.h"
#include "perfcard/op_registry.h"
#include "perfcard/training_step.h"
#include "test_util.h"

using perfcard::test::ModelBuilder;

namespace {

constexpr int kUnranked = -1;

// Inputs of the given ranks (every dim 3), one node, one output declared as `out_dims` (or no shape).
// `weights`: inputs after the first of known rank are initializers (trainable: a training step's backward
// has something to differentiate).
std::vector<std::uint8_t> one_node(const perfcard::OpSpec& op, const std::vector<int>& ranks,
                                   const std::vector<std::int64_t>* out_dims, bool weights = false) {
  ModelBuilder b(17);
  std::vector<std::string> inputs;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    // Not "x" + std::to_string(i): at -O3 GCC 12 warns -Wrestrict on it inside libstdc++ (a false positive).
    std::string name = std::to_string(i).insert(0, 1, 'x');
    if (ranks[i] == kUnranked) b.input_unranked(name, 1);
    else if (weights && i > 0) b.initializer(name, 1, std::vector<std::int64_t>(std::size_t(ranks[i]), 3));
    else b.input(name, 1, std::vector<perfcard::test::DimSpec>(std::size_t(ranks[i]), std::int64_t(3)));
    inputs.push_back(name);
  }
  auto& n = b.node(std::string(op.op_type), inputs, {"y"}, "n");
  n.set_domain(std::string(op.domain));
  if (out_dims) b.output("y", 1, *out_dims);
  else b.output("y", 1);
  return b.bytes();
}

}  // namespace

TEST_CASE("every op with inputs of rank 0..3 or unknown, declared outputs or none: a result or an Error") {
  const std::vector<int> ranks = {kUnranked, 0, 1, 2, 3};
  const std::vector<std::int64_t> scalar_out, matrix_out = {3, 3};
  const std::vector<const std::vector<std::int64_t>*> outs = {nullptr, &scalar_out, &matrix_out};
  std::size_t runs = 0, errors = 0;
  for (const auto& op : perfcard::all_ops()) {
    for (std::size_t n_inputs = 1; n_inputs <= 3; ++n_inputs) {
      for (int r0 : ranks)
        for (int r1 : ranks) {
          if (n_inputs == 1 && r1 != kUnranked) continue;
          std::vector<int> rs = {r0};
          if (n_inputs >= 2) rs.push_back(r1);
          if (n_inputs >= 3) rs.push_back(1);
          for (const auto* out : outs) {
            auto bytes = one_node(op, rs, out);
            ++runs;
            try {
              perfcard::Model m = perfcard::load_model(bytes);
              perfcard::AnalyzeOptions o;
              perfcard::analyze(m, o);
            } catch (const perfcard::Error&) {
              ++errors;
            }
          }
        }
    }
  }
  INFO(runs << " models, " << errors << " refused with a perfcard::Error");
  CHECK(runs > 10000);
  CHECK(errors < runs);
}

TEST_CASE("every op with weights of rank 0..3 or unknown: a training step's plan or an Error, never a crash") {
  const auto constants =
      perfcard::RooflineConstants::parse(perfcard::test::read_text(perfcard::test::repo_path("weights/roofline.json")));
  const auto catalog =
      perfcard::DeviceCatalog::parse(perfcard::test::read_text(perfcard::test::repo_path("weights/devices.json")));
  const std::vector<int> ranks = {kUnranked, 0, 1, 2, 3};
  std::size_t runs = 0, planned = 0;
  for (const auto& op : perfcard::all_ops())
    for (std::size_t n_inputs = 2; n_inputs <= 3; ++n_inputs)
      for (int r0 : ranks)
        for (int r1 : ranks) {
          std::vector<int> rs = {r0, r1};
          if (n_inputs >= 3) rs.push_back(1);
          auto bytes = one_node(op, rs, nullptr, true);
          ++runs;
          try {
            perfcard::Model m = perfcard::load_model(bytes);
            const perfcard::Analysis a = perfcard::analyze(m, {});
            for (auto p : {perfcard::Precision::FP32, perfcard::Precision::FP16}) {
              const auto plan = perfcard::plan_training_step(m, a, constants, "pytorch-eager", p, perfcard::Optimizer::Adam);
              for (const auto& k : plan.kernels)
                CHECK((std::isfinite(k.bytes) && k.bytes >= 0 && std::isfinite(k.flops) && k.flops >= 0 && k.repeat >= 0));
              perfcard::RooflineOptions ro;
              ro.precision = p;
              const auto t = perfcard::roofline_latency(plan, catalog.get("h100-sxm5-80gb"), constants, ro);
              CHECK((std::isfinite(t.latency_ms) && t.latency_ms >= 0));
            }
            ++planned;
          } catch (const perfcard::Error&) {
          }
        }
  INFO(runs << " models, " << planned << " planned");
  CHECK(planned > runs / 4);
}

TEST_CASE("MatMul of a declared scalar is refused even when the other operand's rank is unknown") {
  for (const char* op : {"MatMul", "MatMulInteger"}) {
    ModelBuilder b;
    b.input("a", 1, {});
    b.input_unranked("b", 1);
    b.node(op, {"a", "b"}, {"y"}, "mm");
    b.output("y", 1, {3, 3});
    auto bytes = b.bytes();
    perfcard::Model m = perfcard::load_model(bytes);
    CHECK_THROWS_WITH(perfcard::analyze(m, {}),
                      Catch::Contains("input A is a scalar (rank 0); " + std::string(op) + " needs rank >= 1"));
  }
}
