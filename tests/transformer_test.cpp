// The transformer predictor: the kernel sequence the core hands it (the runtime's kernels in order, after
// fusion), the committed weights/transformer.pcwt against the training script's float64 forward pass on the
// same weights (tests/data/transformer_parity.pcwt), windows encoded once however often they repeat, and
// the files it must refuse.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "model_builder.h"
#include "perfcard/device.h"
#include "perfcard/error.h"
#include "perfcard/kernel_sequence.h"
#include "perfcard/native_networks.h"
#include "perfcard/onnx_loader.h"
#include "perfcard/operator_graph.h"
#include "perfcard/predictor_registry.h"
#include "perfcard/transformer_network.h"
#include "perfcard/learned_embedding.h"
#include "perfcard/native_learned.h"
#include "test_util.h"

namespace {

using perfcard::test::read_text;
using perfcard::test::repo_path;

float feature(const perfcard::KernelSequence& s, std::size_t kernel, std::string_view name) {
  const auto schema = perfcard::kernel_feature_schema();
  for (std::size_t k = 0; k < schema.size(); ++k)
    if (schema[k].name == name) return s.x[kernel * s.features + k];
  FAIL("no kernel feature " << name);
  return 0;
}

struct Subject {
  perfcard::Model model;
  perfcard::Analysis analysis;
  perfcard::KernelPlan plan;
};

Subject plan_of(std::vector<std::uint8_t> bytes, std::int64_t batch, const char* runtime = "pytorch-eager") {
  auto constants = perfcard::RooflineConstants::parse(read_text(repo_path("weights/roofline.json")));
  Subject s{perfcard::load_model(bytes), {}, {}};
  perfcard::AnalyzeOptions ao;
  ao.dims.values["batch"] = batch;
  s.analysis = perfcard::analyze(s.model, ao);
  s.plan = perfcard::plan_kernels(s.model, s.analysis, constants, runtime, perfcard::Precision::FP16);
  return s;
}

perfcard::TransformerModel committed_model() {
  const auto bytes = perfcard::test::read_file(repo_path("weights/transformer.pcwt"));
  return perfcard::TransformerModel(perfcard::read_weights(bytes));
}

}  // namespace

TEST_CASE("the kernel sequence: the runtime's kernels in order, absolute and per-sample sizes") {
  perfcard::test::ModelBuilder mb;
  mb.input("x", 1, {"batch", 64});
  mb.initializer("w", 1, {64, 32});
  mb.node("MatMul", {"x", "w"}, {"y"});
  mb.node("Relu", {"y"}, {"r"});  // eager PyTorch runs it as its own kernel
  mb.node("NoSuchOp", {"r"}, {"u"});
  mb.output("u");
  const auto s1 = plan_of(mb.bytes(), 1), s16 = plan_of(mb.bytes(), 16);
  const auto k1 = perfcard::kernel_sequence(s1.model, s1.plan, 1);
  const auto k16 = perfcard::kernel_sequence(s16.model, s16.plan, 16);
  REQUIRE(k1.kernels == s1.plan.kernels.size());
  REQUIRE(k1.kernels >= 2);
  CHECK(k1.features == perfcard::kernel_feature_schema().size());
  CHECK(k1.op[0] == perfcard::op_id("", "MatMul"));
  CHECK(k1.op[1] == perfcard::op_id("", "Relu"));
  CHECK(k1.op_class[0] == std::int32_t(perfcard::OpClass::MatMul));
  CHECK(k1.unknown_ops == 1);
  CHECK(feature(k1, 0, "gemm_like") == 1.f);
  CHECK(feature(k1, 0, "log_gemm_k") == Approx(std::log1p(64.0)));
  CHECK(feature(k1, 0, "log_gemm_n") == Approx(std::log1p(32.0)));
  CHECK(feature(k1, 0, "log_flops") == Approx(std::log1p(2.0 * 64 * 32)));
  CHECK(feature(k16, 0, "log_flops") == Approx(std::log1p(16 * 2.0 * 64 * 32)));
  // FLOPs per sample do not move with the batch; bytes per sample fall (the weights are read once).
  CHECK(feature(k16, 0, "log_flops_per_sample") == Approx(feature(k1, 0, "log_flops_per_sample")));
  CHECK(feature(k16, 0, "log_bytes_per_sample") < feature(k1, 0, "log_bytes_per_sample"));
  CHECK(feature(k1, 1, "gemm_like") == 0.f);
  CHECK(perfcard::sequence_schema_hash().size() == 64);
  CHECK(perfcard::sequence_schema_hash() != perfcard::graph_schema_hash());
  CHECK_THROWS_AS(perfcard::kernel_sequence(s1.model, s1.plan, 0), perfcard::Error);
}

TEST_CASE("the committed transformer matches the training script's forward pass on its own stored weights") {
  const auto model = committed_model();
  const auto pbytes = perfcard::test::read_file(perfcard::test::data_path("transformer_parity.pcwt"));
  const auto parity = perfcard::read_weights(pbytes);
  parity.require_schema_hash(perfcard::feature_schema_hash());
  parity.require_schema_hash(perfcard::sequence_schema_hash(), "sequence_schema.hash");
  const std::size_t F = perfcard::kernel_feature_schema().size(), R = perfcard::feature_schema().size();
  const auto op = parity.tensor("op").i32(), cls = parity.tensor("class").i32();
  const auto x = parity.tensor("x").f32(), rows = parity.tensor("row").f32();
  const auto ptr = parity.tensor("kernel_ptr").i32();
  const auto margin = parity.tensor("margin").f32();
  REQUIRE(margin.size() + 1 == ptr.size());
  REQUIRE(margin.size() >= 12);
  // Bounds on |core - numpy float64| of the predicted log ratio, both on the weights as stored: the
  // reference path differs only by the fp32 activations between layers (LayerNorm, softmax and GELU of
  // O(1) values over 2 blocks); the fast path also accumulates in fp32 (dot products of <= 128 terms,
  // means over up to 10^4 kernels). 1e-3 in a log ratio is 0.1% of a latency.
  const double ref_bound = 1e-4, fast_bound = 1e-3;
  double worst_ref = 0, worst_fast = 0;
  for (std::size_t r = 0; r < margin.size(); ++r) {
    perfcard::KernelSequence s;
    const auto k0 = std::size_t(ptr[r]), k1 = std::size_t(ptr[r + 1]);
    s.kernels = k1 - k0;
    s.features = F;
    s.op.assign(op.begin() + std::ptrdiff_t(k0), op.begin() + std::ptrdiff_t(k1));
    s.op_class.assign(cls.begin() + std::ptrdiff_t(k0), cls.begin() + std::ptrdiff_t(k1));
    s.x.assign(x.begin() + std::ptrdiff_t(k0 * F), x.begin() + std::ptrdiff_t(k1 * F));
    const auto row = rows.subspan(r * R, R);
    const double ref = model.head(model.embed(s, perfcard::nn::Path::Reference), row, perfcard::nn::Path::Reference);
    const double fast = model.head(model.embed(s), row);
    worst_ref = std::max(worst_ref, std::fabs(ref - double(margin[r])));
    worst_fast = std::max(worst_fast, std::fabs(fast - double(margin[r])));
  }
  INFO("worst |core - numpy|: reference path " << worst_ref << ", fast path " << worst_fast << " over "
                                               << margin.size() << " rows");
  CHECK(worst_ref <= ref_bound);
  CHECK(worst_fast <= fast_bound);
}

TEST_CASE("a window that repeats is encoded once, and the encoding is the one of every window encoded") {
  const auto model = committed_model();
  const std::size_t W = model.window(), F = perfcard::kernel_feature_schema().size();
  // Three identical blocks of W kernels and a short tail: 2 distinct windows.
  perfcard::KernelSequence s;
  s.features = F;
  for (std::size_t rep = 0; rep < 3; ++rep)
    for (std::size_t j = 0; j < W; ++j) {
      s.op.push_back(perfcard::op_id("", j % 3 ? "Relu" : "Conv"));
      s.op_class.push_back(std::int32_t(j % 3 ? perfcard::OpClass::Elementwise : perfcard::OpClass::Conv));
      for (std::size_t k = 0; k < F; ++k) s.x.push_back(float((j * 7 + k * 3) % 11) * 0.5f);
    }
  for (std::size_t j = 0; j < 5; ++j) {
    s.op.push_back(perfcard::op_id("", "Add"));
    s.op_class.push_back(std::int32_t(perfcard::OpClass::Elementwise));
    for (std::size_t k = 0; k < F; ++k) s.x.push_back(1.0f);
  }
  s.kernels = s.op.size();
  CHECK(model.distinct_windows(s) == 2);
  // The same sequence with each block made distinct by a tiny change: every window encoded, and the
  // pooled result moves only by that change.
  perfcard::KernelSequence t = s;
  for (std::size_t rep = 1; rep < 3; ++rep) t.x[rep * W * F] += 1e-6f * float(rep);
  CHECK(model.distinct_windows(t) == 4);
  const auto a = model.embed(s), b = model.embed(t);
  REQUIRE(a.size() == b.size());
  for (std::size_t k = 0; k < a.size(); ++k) CHECK(a.data()[k] == Approx(b.data()[k]).margin(1e-4));
  // No kernels: a zero encoding, not a NaN.
  perfcard::KernelSequence none;
  none.features = F;
  const auto zero = model.embed(none);
  REQUIRE(zero.size() == model.embed(s).size());
  for (float v : zero.values()) CHECK(v == 0.f);
}

TEST_CASE("the transformer predictor corrects the roofline, says so, and refuses files of another schema") {
  auto bytes = perfcard::test::read_file(repo_path("weights/transformer.pcwt"));
  perfcard::verify_weights(read_text(repo_path("weights/manifest.json")), "transformer.pcwt", bytes);
  auto constants = perfcard::RooflineConstants::parse(read_text(repo_path("weights/roofline.json")));
  auto catalog = perfcard::DeviceCatalog::parse(read_text(repo_path("weights/devices.json")));
  auto roofline = std::make_shared<const perfcard::RooflinePredictor>(constants);
  perfcard::PredictorSet set{roofline, {perfcard::make_learned_predictor(bytes, roofline, perfcard::NativeLearned{})}};
  const auto tf = perfcard::select_predictor("transformer", set);
  CHECK(tf->name() == "transformer");

  const auto model = perfcard::test::load_example("resnet50.onnx");
  perfcard::AnalyzeOptions ao;
  ao.dims.values["batch"] = 8;
  const auto analysis = perfcard::analyze(model, ao);
  auto prepared = tf->prepare({&model, &analysis, "pytorch-eager", perfcard::Precision::FP16, 8});
  for (const char* id : {"rtx3090", "titanxp", "h100-sxm5-80gb"}) {
    const auto out = tf->predict(*prepared, {&catalog.get(id)});
    INFO(id);
    CHECK(out.predictor == "transformer");
    CHECK(out.version.rfind("transformer-1.", 0) == 0);
    CHECK(out.baseline_ms == Approx(roofline->predict(*prepared, {&catalog.get(id)}).latency_ms));
    CHECK(out.latency_ms > 0);
    CHECK(std::isfinite(out.latency_ms));
    CHECK(out.uncertainty > 0);
  }
  const auto file = perfcard::read_weights(bytes);
  try {
    file.require_schema_hash(std::string(64, '0'), "sequence_schema.hash");
    FAIL("a wrong sequence schema hash was accepted");
  } catch (const perfcard::Error& e) {
    CHECK(std::string(e.what()).find("was trained on sequence schema") != std::string::npos);
  }
  const auto gbytes = perfcard::test::read_file(repo_path("weights/gnn.pcwt"));
  try {
    perfcard::LearnedTransformer bad(perfcard::read_weights(gbytes), perfcard::core_schemas(*roofline), perfcard::NativeNetworks{});
    FAIL("a GNN file made a transformer");
  } catch (const perfcard::Error& e) {
    CHECK(std::string(e.what()) == "the file is a 'gnn' predictor, not 'transformer'");
  }
}
