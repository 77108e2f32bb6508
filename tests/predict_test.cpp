// The predictor's mechanics with constants written here (not the fitted ones), so each expectation
// follows from the model's definition: roofline time, dispatch queue, precision fallback, memory
// parts, energy and carbon arithmetic, MIG recommendation. The real catalog is checked for loading.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "model_builder.h"
#include "perfcard/carbon.h"
#include "perfcard/device.h"
#include "perfcard/error.h"
#include "perfcard/features.h"
#include "perfcard/onnx_loader.h"
#include "perfcard/options.h"
#include "perfcard/predict.h"
#include "perfcard/roofline_predictor.h"
#include "test_util.h"

using perfcard::test::ModelBuilder;

namespace {

// The predict document as a consumer reads it: the core's text, parsed by an independent JSON library.
nlohmann::json doc_of(const perfcard::PredictResult& r) { return nlohmann::json::parse(perfcard::predict_to_json_text(r)); }

const char* kDevices = R"({"schema_version": 1, "devices": [
  {"id": "gpu-a", "name": "GPU A", "kind": "gpu", "arch": "Ampere test",
   "peak_tflops": {"fp32": 10, "fp16": {"value": 100, "source": "test"}},
   "sm_count": 10, "memory_gb": 16, "memory_bandwidth_gbs": 1000, "tdp_w": 300, "idle_w": 50,
   "mig": {"source": "test", "compute_slices_total": 7, "memory_slices_total": 8, "profiles": [
     {"name": "1g.2gb", "memory_gb": 2, "compute_slices": 1, "memory_slices": 1, "max_instances": 7},
     {"name": "3g.8gb", "memory_gb": 8, "compute_slices": 3, "memory_slices": 4, "max_instances": 2},
     {"name": "7g.16gb", "memory_gb": 16, "compute_slices": 7, "memory_slices": 8, "max_instances": 1}]}},
  {"id": "cpu-b", "name": "CPU B", "kind": "cpu", "arch": "x86", "peak_fp32_gflops": 1000,
   "memory_bandwidth_gbs": 100, "tdp_w": 100}]})";

const char* kConstants = R"({"format_version": "1.0", "version": "test-1",
  "arch_family": {"Ampere": "ampere", "cpu": "cpu"},
  "families": {
    "ampere": {"gemm_eff_tensor": 0.5, "gemm_eff_fp32": 0.5, "conv_eff_tensor": 0.5, "conv_eff_fp32": 0.5,
               "vector_eff": 1, "mem_eff": 0.5, "k_half": 0, "tile": 0, "launch_us": 0},
    "cpu": {"gemm_eff_tensor": 1, "gemm_eff_fp32": 1, "conv_eff_tensor": 1, "conv_eff_fp32": 1,
            "vector_eff": 1, "mem_eff": 1, "k_half": 0, "tile": 0, "launch_us": 0}},
  "runtimes": {
    "pytorch-eager": {"kind": "gpu", "dispatch_us": 10, "context_mb": 100, "workspace_mb": 10, "allocator_overhead": 0},
    "onnxruntime": {"kind": "cpu", "dispatch_us": 0, "context_mb": 0, "workspace_mb": 0, "allocator_overhead": 0}},
  "power": {"gamma": 1, "floor": 0},
  "accuracy": {"ampere": {"mape": 0.25, "rows": 10, "source": "test"}},
  "training_accuracy": {"all": {"mape": 0.2, "rows": 12, "source": "test"}}})";

const char* kCarbon = R"({"schema_version": 1, "default": "world", "regions": [
  {"code": "world", "g_per_kwh": 500, "source": "test", "year": 2023},
  {"code": "clean", "g_per_kwh": 10, "source": "test", "year": 2023}],
  "pue": {"default": {"value": 1.5, "source": "test"}}})";

// y = x @ W with x [batch, 1024] and W [1024, 1024]: 2 GFLOP per sample... well, 2*1024*1024 per row.
perfcard::Model matmul_model() {
  static std::vector<std::uint8_t> bytes = [] {
    ModelBuilder b;
    b.input("x", 1, {std::string("batch"), std::int64_t(1024)});
    b.initializer("w", 1, {1024, 1024});
    b.node("MatMul", {"x", "w"}, {"y"});
    b.output("y");
    return b.bytes();
  }();
  return perfcard::load_model(bytes);
}

struct Setup {
  perfcard::DeviceCatalog cat = perfcard::DeviceCatalog::parse(kDevices);
  perfcard::RooflineConstants c = perfcard::RooflineConstants::parse(kConstants);
  perfcard::CarbonTable carbon = perfcard::CarbonTable::parse(kCarbon);
  perfcard::RooflinePredictor pred{c};
  perfcard::PredictResult run(const perfcard::Model& m, perfcard::PredictOptions o) {
    return perfcard::predict(m, cat, pred, c, carbon, o);
  }
};

}  // namespace

TEST_CASE("one GEMM: latency is dispatch plus max(compute, memory) at the fitted efficiencies") {
  Setup s;
  perfcard::PredictOptions o;
  o.devices = {"gpu-a"};
  o.batches = {4096};
  o.precision = perfcard::Precision::FP16;
  auto r = s.run(matmul_model(), o);
  REQUIRE(r.rows.size() == 1);
  const auto& p = r.rows[0];
  const double flops = 2.0 * 4096 * 1024 * 1024;
  const double bytes = 2.0 * (4096 * 1024 + 1024 * 1024 + 4096 * 1024);
  const double compute_ms = flops / (100e12 * 0.5) * 1e3, memory_ms = bytes / (1000e9 * 0.5) * 1e3;
  CHECK(p.latency_ms == Approx(0.010 + std::max(compute_ms, memory_ms)));
  CHECK(p.throughput_per_s == Approx(4096 / (p.latency_ms / 1e3)));
  CHECK(p.uncertainty == Approx(0.25));
  CHECK(r.batch_symbol == "batch");
}

TEST_CASE("a host-bound row carries the error measured on host-bound rows where it exceeds its family's") {
  std::string text = kConstants;
  const std::string tail = R"("training_accuracy")";
  text.replace(text.find(tail), tail.size(),
               R"("host_bound_accuracy": {"pytorch-eager": {"mape": 0.4, "rows": 30, "source": "test"}}, "training_accuracy")");
  perfcard::RooflineConstants c = perfcard::RooflineConstants::parse(text);
  REQUIRE(c.host_bound_accuracy.at("pytorch-eager").mape == 0.4);
  Setup s;
  perfcard::RooflinePredictor pred{c};
  perfcard::PredictOptions o;
  o.devices = {"gpu-a"};
  o.batches = {1, 4096};
  o.precision = perfcard::Precision::FP16;
  auto r = perfcard::predict(matmul_model(), s.cat, pred, c, s.carbon, o);
  REQUIRE(r.rows.size() == 2);
  // batch 1: 10 us of dispatch, a few us of GEMM: host-bound. batch 4096: the GEMM binds.
  CHECK(perfcard::host_bound(r.rows[0].busy_ms, r.rows[0].latency_ms));
  CHECK(r.rows[0].uncertainty == Approx(0.4));
  CHECK(r.rows[0].band_high_ms == Approx(r.rows[0].latency_ms * 1.4));
  CHECK_FALSE(perfcard::host_bound(r.rows[1].busy_ms, r.rows[1].latency_ms));
  CHECK(r.rows[1].uncertainty == Approx(0.25));
  // A family's own figure above the host-bound one stays.
  c.accuracy["ampere"].mape = 0.6;
  perfcard::RooflinePredictor wide{c};
  CHECK(perfcard::predict(matmul_model(), s.cat, wide, c, s.carbon, o).rows[0].uncertainty == Approx(0.6));
  CHECK_THROWS_WITH(perfcard::RooflineConstants::parse(text.replace(text.find("\"mape\": 0.4"), 11, "\"mape\": \"x\"")),
                    Catch::Contains("host_bound_accuracy.pytorch-eager"));
}

TEST_CASE("a runtime with its own measured error shows it on the families it ran on, and the larger one elsewhere") {
  auto with = [](const std::string& entry) {
    std::string text = kConstants;
    const std::string tail = R"("training_accuracy")";
    text.replace(text.find(tail), tail.size(), R"("runtime_accuracy": {"graphs": )" + entry + R"(}, "training_accuracy")");
    return perfcard::RooflineConstants::parse(text);
  };
  Setup s;
  const perfcard::Device& gpu = *s.cat.find("gpu-a");  // ampere: eager's held-out error 0.25
  const auto on = [&](const perfcard::RooflineConstants& c, std::string_view runtime) {
    std::vector<std::string> warnings;
    const double u = perfcard::RooflinePredictor{c}.uncertainty(gpu, runtime, &warnings);
    CHECK(warnings.empty());
    return u;
  };
  const auto measured_here = with(R"({"mape": 0.1, "rows": 29, "families": ["ampere"], "source": "test"})");
  CHECK(measured_here.runtime_accuracy.at("graphs").families == std::vector<std::string>{"ampere"});
  CHECK(on(measured_here, "graphs") == Approx(0.1));          // measured on this family: its own, even below eager's
  CHECK(on(measured_here, "pytorch-eager") == Approx(0.25));  // other runtimes keep the family's
  CHECK(on(with(R"({"mape": 0.1, "rows": 29, "families": ["cpu"], "source": "test"})"), "graphs") == Approx(0.25));
  CHECK(on(with(R"({"mape": 0.4, "rows": 29, "families": ["cpu"], "source": "test"})"), "graphs") == Approx(0.4));
  CHECK(on(with(R"({"mape": 0.4, "rows": 0, "families": ["ampere"], "source": "test"})"), "graphs") == Approx(0.25));
  CHECK_THROWS_WITH(with(R"({"mape": 0.1, "rows": 29, "families": ["volta"]})"),
                    Catch::Contains("runtime_accuracy.graphs.families' holds 'volta', which is no family"));
  CHECK_THROWS_WITH(with(R"({"mape": 0.1, "rows": 29})"), Catch::Contains("runtime_accuracy.graphs.families"));
  CHECK_THROWS_WITH(with(R"({"rows": 29, "families": []})"), Catch::Contains("runtime_accuracy.graphs"));
}

TEST_CASE("a calibrated band on a host-bound row is widened to the host's spread even where the family's error is larger") {
  std::string text = kConstants;
  const std::string tail = R"("training_accuracy")";
  text.replace(text.find(tail), tail.size(),
               R"("host_bound_accuracy": {"pytorch-eager": {"mape": 0.4, "rows": 30, "source": "test"}}, "training_accuracy")");
  const auto c = perfcard::RooflineConstants::parse(text);
  perfcard::PredictorOutput out;
  out.latency_ms = 10;
  out.busy_ms = 1;             // host-bound
  out.uncertainty = 0.6;       // the family's figure, above the host's
  out.band_low_ms = 9.5;       // a narrow calibrated band (its own width, not the uncertainty's)
  out.band_high_ms = 10.5;
  out.band_coverage = 0.8;
  perfcard::widen_for_host(out, c, "pytorch-eager", perfcard::Mode::Inference);
  CHECK(out.uncertainty == 0.6);
  CHECK(out.band_low_ms == Approx(10 / 1.4));
  CHECK(out.band_high_ms == Approx(14));
  perfcard::PredictorOutput step = out;
  step.band_low_ms = 9.5;
  perfcard::widen_for_host(step, c, "pytorch-eager", perfcard::Mode::Training);  // a training step keeps its own
  CHECK(step.band_low_ms == 9.5);
  perfcard::PredictorOutput busy = out;
  busy.busy_ms = 9;            // the device binds: nothing to widen
  busy.band_low_ms = 9.5;
  perfcard::widen_for_host(busy, c, "pytorch-eager", perfcard::Mode::Inference);
  CHECK(busy.band_low_ms == 9.5);
}

TEST_CASE("the host's time per kernel can be given for eager on GPUs; every row says what it assumed") {
  Setup s;
  perfcard::PredictOptions o;
  o.devices = {"gpu-a", "cpu-b"};
  o.batches = {1};
  o.precision = perfcard::Precision::FP16;
  const auto fitted = s.run(matmul_model(), o);
  REQUIRE(fitted.rows.size() == 2);
  CHECK(*fitted.rows[0].host_us == 10);  // the runtime's dispatch_us
  CHECK_FALSE(fitted.rows[1].host_us);   // a CPU runtime: no eager host
  o.host_us = 30;
  const auto given = s.run(matmul_model(), o);
  CHECK(*given.rows[0].host_us == 30);
  // One kernel: the latency moves by the difference in host time, 20 us, and nothing else.
  CHECK(given.rows[0].latency_ms - fitted.rows[0].latency_ms == Approx(0.020));
  CHECK(given.rows[1].latency_ms == fitted.rows[1].latency_ms);
  CHECK(doc_of(given)["predictions"][0]["host_us_per_kernel"].get<double>() == 30);
  CHECK(doc_of(given)["predictions"][1]["host_us_per_kernel"].is_null());
  for (double bad : {-1.0, 0.0, 1e9, std::nan("")}) {
    o.host_us = bad;
    CHECK_THROWS_WITH(s.run(matmul_model(), o), Catch::Contains("host_us"));
  }
  CHECK_THROWS_WITH(perfcard::predict_options_from_text(R"({"hostUs": "fast"})"), Catch::Contains("--host-us expects a number"));
}

TEST_CASE("a precision the device lacks falls back, and the row says so") {
  Setup s;
  perfcard::PredictOptions o;
  o.devices = {"gpu-a"};
  o.precision = perfcard::Precision::BF16;
  auto r = s.run(matmul_model(), o);
  CHECK(r.rows[0].precision_used == perfcard::Precision::FP16);
  REQUIRE_FALSE(r.rows[0].warnings.empty());
  CHECK(r.rows[0].warnings[0] == "bf16 is not supported by gpu-a; predicted at fp16");
}

TEST_CASE("memory: weights at precision, activations, workspace and context; training adds Adam state") {
  Setup s;
  perfcard::PredictOptions o;
  o.devices = {"gpu-a"};
  o.batches = {8};
  o.precision = perfcard::Precision::FP16;
  auto inf = s.run(matmul_model(), o).rows[0].memory;
  CHECK(inf.weights == Approx(1024.0 * 1024 * 2));
  CHECK(inf.activations == Approx(2.0 * 8 * 1024 * 2));  // x and y live together
  CHECK(inf.workspace == Approx(10.0 * 1024 * 1024));
  CHECK(inf.context == Approx(100.0 * 1024 * 1024));
  CHECK(inf.optimizer == 0);
  CHECK(inf.saved_activations == 0);
  // With autograd on, the MatMul keeps x for its weight's gradient (fp16 activations, mixed precision:
  // fp32 weights and their fp16 copies).
  o.mode = perfcard::Mode::InferenceGrad;
  auto ig = s.run(matmul_model(), o).rows[0].memory;
  CHECK(ig.weights == Approx(1024.0 * 1024 * 6));
  CHECK(ig.saved_activations == Approx(8.0 * 1024 * 2));
  CHECK(ig.activations == Approx(2.0 * 8 * 1024 * 2));
  CHECK(ig.gradients == 0);
  o.mode = perfcard::Mode::Training;
  auto tr = s.run(matmul_model(), o).rows[0].memory;
  // The update is the peak here: every fp32 gradient, Adam's two moments and its sqrt(v) temporary.
  CHECK(tr.gradients == Approx(1024.0 * 1024 * 4));
  CHECK(tr.optimizer == Approx(1024.0 * 1024 * 8));
  CHECK(tr.optimizer_update == Approx(1024.0 * 1024 * 4));
  CHECK(tr.saved_activations == Approx(8.0 * 1024 * 2));
  o.optimizer = perfcard::Optimizer::Sgd;
  auto sgd = s.run(matmul_model(), o).rows[0].memory;
  CHECK(sgd.optimizer == Approx(1024.0 * 1024 * 4));  // momentum only, updated in place
  CHECK(sgd.total() < tr.total());
  CHECK_THROWS_WITH(perfcard::parse_optimizer("lion"), Catch::Contains("unknown optimizer 'lion'") &&
                                                         Catch::Contains("adam, adamw, sgd"));
  CHECK_THROWS_WITH(perfcard::parse_mode("train"), Catch::Contains("unknown memory protocol 'train'") &&
                                                     Catch::Contains("inference, inference-grad or training"));
}

TEST_CASE("energy and carbon follow power x time and the grid intensity x PUE") {
  Setup s;
  perfcard::PredictOptions o;
  o.devices = {"gpu-a"};
  o.batches = {4096};
  o.region = "clean";
  auto p = s.run(matmul_model(), o).rows[0];
  REQUIRE(p.power_w);
  CHECK(*p.power_w > 50);
  CHECK(*p.power_w <= 300);
  CHECK(*p.energy_j_per_sample == Approx(*p.power_w * p.latency_ms / 1e3 / 4096));
  CHECK(*p.carbon_g_per_1000 == Approx(*p.energy_j_per_sample * 1000 / 3.6e6 * 10 * 1.5));
  o.grid_g_per_kwh = 100.0;
  o.pue = 1.0;
  auto q = s.run(matmul_model(), o).rows[0];
  CHECK(*q.carbon_g_per_1000 == Approx(*q.energy_j_per_sample * 1000 / 3.6e6 * 100));
}

TEST_CASE("MIG: the smallest profile that fits with headroom and meets the latency target") {
  Setup s;
  perfcard::PredictOptions o;
  o.devices = {"gpu-a"};
  o.batches = {1};
  auto p = s.run(matmul_model(), o).rows[0];
  REQUIRE(p.mig.size() == 3);
  REQUIRE(p.mig_recommended);
  CHECK(p.mig[*p.mig_recommended].name == "1g.2gb");
  CHECK(p.mig[0].latency_ms >= p.mig[2].latency_ms);  // a seventh of the GPU is not faster
  CHECK(p.mig[0].total_throughput_per_s == Approx(p.mig[0].throughput_per_s * 7));
  o.latency_target_ms = p.mig[2].latency_ms * 1.0001;  // only the full profile is fast enough
  auto q = s.run(matmul_model(), o).rows[0];
  REQUIRE(q.mig_recommended);
  CHECK(q.mig[*q.mig_recommended].name == "7g.16gb");
}

TEST_CASE("a CPU draws its idle power plus the busy cores' share of TDP - idle; without idle power, no energy") {
  Setup s;
  s.cat = s.cat.with_devices(perfcard::Json::parse(R"([{"id": "cpu-c", "name": "CPU C", "kind": "cpu",
    "arch": "x86", "peak_fp32_gflops": 1000, "memory_bandwidth_gbs": 100, "cores": 8, "tdp_w": 100, "idle_w": 20}])", "test"));
  perfcard::PredictOptions o;
  o.devices = {"cpu-c"};
  o.batches = {64};
  auto all = s.run(matmul_model(), o).rows[0];
  o.cpu_threads = 2;
  auto two = s.run(matmul_model(), o).rows[0];
  REQUIRE(all.power_w);
  REQUIRE(two.power_w);
  // The onnxruntime entry has no dispatch cost here: the cores compute the whole wall time.
  CHECK(*all.power_w == Approx(100));
  CHECK(*two.power_w == Approx(20 + 80 * 2.0 / 8));
  CHECK(*two.energy_j_per_sample == Approx(*two.power_w * two.latency_ms / 1e3 / 64));
  o.cpu_threads = 64;  // more threads than cores: every core, no more
  CHECK(*s.run(matmul_model(), o).rows[0].power_w == Approx(100));
  o.devices = {"cpu-b"};  // a TDP but no idle power
  auto b = s.run(matmul_model(), o).rows[0];
  CHECK_FALSE(b.power_w);
  CHECK_FALSE(b.energy_j_per_sample);
  CHECK_THAT(b.warnings, Catch::VectorContains(std::string("no TDP or idle power for cpu-b: energy not predicted")));
}

TEST_CASE("CPUs take their own runtime and default to fp32; unknown ids are clear errors") {
  Setup s;
  perfcard::PredictOptions o;
  o.devices = {"cpus"};
  auto r = s.run(matmul_model(), o);
  REQUIRE(r.rows.size() == 1);
  CHECK(r.rows[0].runtime == "onnxruntime");
  CHECK(r.rows[0].precision_used == perfcard::Precision::FP32);
  o.devices = {"h900"};
  CHECK_THROWS_WITH(s.run(matmul_model(), o), "unknown device 'h900'; known devices: gpu-a, cpu-b");
  o.devices = {"gpu-a"};
  o.region = "mars";
  CHECK_THROWS_WITH(s.run(matmul_model(), o), "unknown region 'mars'; known regions: world, clean");
}

TEST_CASE("constants of another major format version are rejected with a clear message") {
  std::string text = kConstants;
  text.replace(text.find("\"1.0\""), 5, "\"2.0\"");
  CHECK_THROWS_WITH(perfcard::RooflineConstants::parse(text),
                    "roofline constants format 2.0 is not readable by this build (reads 1.x); update PerfCard");
}

TEST_CASE("the shipped catalog, carbon table and constants load, and every GPU gets a prediction") {
  auto read = [](const char* name) { return perfcard::test::read_text(perfcard::test::repo_path(std::string("weights/") + name)); };
  auto cat = perfcard::DeviceCatalog::parse(read("devices.json"));
  auto carbon = perfcard::CarbonTable::parse(read("carbon_regions.json"));
  auto c = perfcard::RooflineConstants::parse(read("roofline.json"));
  for (const char* id : {"a100-sxm4-40gb", "a100-sxm4-80gb", "a100-pcie-80gb", "h100-sxm5-80gb", "h100-pcie-80gb",
                         "h200-sxm-141gb", "b200-sxm-180gb", "v100-sxm2-32gb", "l4", "t4", "a10", "a30", "l40s",
                         "rtx3090", "rtx4090"})
    CHECK(cat.find(id) != nullptr);
  perfcard::RooflinePredictor pred(c);
  perfcard::PredictOptions o;
  o.batches = {1, 64};
  auto r = perfcard::predict(matmul_model(), cat, pred, c, carbon, o);
  CHECK(r.rows.size() == 2 * 16);
  for (const auto& p : r.rows) {
    CHECK(p.latency_ms > 0);
    CHECK(p.fits);
  }
}

TEST_CASE("devices the caller describes join the catalog for one call; taken ids and bad entries are refused") {
  Setup s;
  // A twin of cpu-b under another id predicts exactly as cpu-b; the catalog itself is unchanged.
  const std::string twin = R"([{"id": "my-cpu", "name": "My CPU", "kind": "cpu", "arch": "x86",
    "peak_fp32_gflops": 1000, "memory_bandwidth_gbs": 100, "tdp_w": 100}])";
  perfcard::PredictOptions o = perfcard::predict_options_from_text(R"({"devices": ["cpu-b", "my-cpu"], "batch": [1, 8]})");
  o.extra_devices = perfcard::Json::parse(twin, "test");
  auto r = s.run(matmul_model(), o);
  REQUIRE(r.rows.size() == 4);
  auto row = [&](const std::string& id, std::int64_t batch) -> const perfcard::DevicePrediction& {
    for (const auto& p : r.rows)
      if (p.device_id == id && p.batch == batch) return p;
    FAIL("no row for " << id << " at batch " << batch);
    return r.rows[0];
  };
  CHECK(row("my-cpu", 1).device_name == "My CPU");
  CHECK(row("my-cpu", 1).latency_ms == row("cpu-b", 1).latency_ms);
  CHECK(row("my-cpu", 8).latency_ms == row("cpu-b", 8).latency_ms);
  CHECK(s.cat.find("my-cpu") == nullptr);
  // The options object carries them as JSON (the page's and the CLI's --extra-devices).
  auto from_json = perfcard::predict_options_from_text(std::string(R"({"devices": ["my-cpu"], "extraDevices": )") + twin + "}");
  CHECK(s.run(matmul_model(), from_json).rows.at(0).latency_ms == row("my-cpu", 1).latency_ms);
  auto error_of = [&](const std::string& extra) {
    perfcard::PredictOptions bad = o;
    bad.extra_devices = perfcard::Json::parse(extra, "test");
    return perfcard::test::error_message([&] { s.run(matmul_model(), bad); });
  };
  CHECK(error_of(R"([{"id": "cpu-b", "kind": "cpu", "peak_fp32_gflops": 1}])") ==
        "extraDevices: device id 'cpu-b' is taken (the catalog's, or given twice)");
  CHECK(error_of(twin.substr(0, twin.size() - 1) + ", " + twin.substr(1)) ==
        "extraDevices: device id 'my-cpu' is taken (the catalog's, or given twice)");
  // The caller's entries are the caller's option (bad_option), with the catalog's words for what is wrong.
  CHECK(error_of(R"([{"id": "my-gpu", "kind": "gpu", "peak_tflops": {"fp32": 10}}])") ==
        "extraDevices: an entry does not follow the catalog's schema (device catalog: 'my-gpu' has no "
        "memory_bandwidth_gbs)");
  CHECK(error_of(R"({"id": "x"})") == "extraDevices: expected an array of device entries (the catalog's schema)");
  CHECK(error_of(R"([{"id": "m", "kind": "gpu", "peak_tflops": {"fp32": 10}, "memory_bandwidth_gbs": 100,
                     "mig": {"compute_slices_total": "seven", "profiles": []}}])")
            .rfind("extraDevices: an entry does not follow the catalog's schema (", 0) == 0);
  CHECK(perfcard::test::error_message([&] { perfcard::predict_options_from_text(R"({"extraDevices": {"id": "x"}})"); }) ==
        "extraDevices expects an array of device entries (the catalog's schema)");
}

TEST_CASE("a training step is timed op by op: forward, backward, update, in the row and its JSON") {
  Setup s;
  perfcard::PredictOptions o;
  o.devices = {"gpu-a"};
  o.batches = {4096};
  o.precision = perfcard::Precision::FP32;
  const auto inf = s.run(matmul_model(), o).rows[0];
  o.mode = perfcard::Mode::Training;
  o.optimizer = perfcard::Optimizer::Sgd;
  const auto res = s.run(matmul_model(), o);
  const auto& tr = res.rows[0];
  // x is a graph input (no gradient): the backward is dW = x^T dY alone, a product of the forward's size.
  const double fwd = inf.busy_ms;
  CHECK(tr.busy_ms_by_phase[0] == Approx(fwd));
  CHECK(tr.busy_ms_by_phase[1] == Approx(fwd).epsilon(0.01));
  CHECK(tr.busy_ms_by_phase[2] > 0);
  CHECK(tr.busy_ms == Approx(tr.busy_ms_by_phase[0] + tr.busy_ms_by_phase[1] + tr.busy_ms_by_phase[2]));
  CHECK(tr.latency_ms > 2 * inf.latency_ms);
  // Its uncertainty is a training step's, measured on other families here (the pooled figure), and said so.
  CHECK(inf.uncertainty == 0.25);
  CHECK(tr.uncertainty == 0.2);
  std::string said;
  for (const auto& w : tr.warnings) said += w + "\n";
  CHECK(said.find("no training step measured on device family 'ampere': the error shown is the one over 12 training "
                  "rows of other families") != std::string::npos);
  const auto j = doc_of(res);
  CHECK(j["predictions"][0]["device_busy_ms_by_phase"]["backward"].get<double>() == Approx(tr.busy_ms_by_phase[1]));
  CHECK_FALSE(doc_of(s.run(matmul_model(), [&] { auto i = o; i.mode = perfcard::Mode::Inference; return i; }()))
                  ["predictions"][0].contains("device_busy_ms_by_phase"));
}

// The document's shape, pinned: every key of a row that has everything (a training step on a MIG GPU, with
// kernels and features), and of its nested objects. predict_to_json_text() writes them by hand in sorted
// order; a key lost or renamed there fails here, not in a consumer.
TEST_CASE("a predict row's keys, nested ones included, are the documented ones") {
  const auto catalog = perfcard::DeviceCatalog::parse(perfcard::test::read_text(perfcard::test::repo_path("weights/devices.json")));
  const auto carbon = perfcard::CarbonTable::parse(perfcard::test::read_text(perfcard::test::repo_path("weights/carbon_regions.json")));
  const auto constants = perfcard::RooflineConstants::parse(perfcard::test::read_text(perfcard::test::repo_path("weights/roofline.json")));
  const perfcard::RooflinePredictor roofline(constants);
  const auto model = perfcard::test::load_example("resnet50.onnx");
  perfcard::PredictOptions o;
  o.devices = {"a100-sxm4-80gb"};
  o.batches = {8};
  o.mode = perfcard::Mode::Training;
  o.keep_kernels = true;
  o.keep_features = true;
  const auto doc = nlohmann::json::parse(
      perfcard::predict_to_json_text(perfcard::predict(model, catalog, roofline, constants, carbon, o)));
  auto keys = [](const nlohmann::json& j) {
    std::string s;
    for (auto it = j.begin(); it != j.end(); ++it) (s += s.empty() ? "" : " ") += it.key();
    return s;
  };
  CHECK(keys(doc) == "batch_symbol carbon predictions schema_version warnings");
  CHECK(keys(doc["carbon"]) == "grid_g_per_kwh pue region");
  REQUIRE(doc["predictions"].size() == 1);
  const auto& row = doc["predictions"][0];
  CHECK(keys(row) ==
        "batch carbon_g_per_1000 device device_busy_ms device_busy_ms_by_phase device_memory_gb device_name "
        "energy_j_per_sample features fits host_bound host_us_per_kernel kernels latency_band_coverage latency_band_ms latency_ms "
        "memory_mb memory_protocol mig ood_reasons optimizer out_of_distribution peak_memory_mb power_w precision "
        "precision_requested predictor runtime threads throughput_per_s uncertainty warnings");
  CHECK(keys(row["device_busy_ms_by_phase"]) == "backward forward update");
  CHECK(keys(row["memory_mb"]) ==
        "activations allocator context gradients optimizer optimizer_update saved_activations weights workspace");
  CHECK(keys(row["mig"]) == "profiles recommended");
  CHECK(keys(row["mig"]["profiles"][0]) ==
        "fits instances latency_ms meets_target memory_gb name throughput_per_s total_throughput_per_s");
  CHECK(keys(row["predictor"]) == "baseline_latency_ms name requested version");
  CHECK(keys(row["kernels"][0]) == "bytes class compute_ms flops memory_ms name op_type phase repeat time_ms");
  CHECK(row["features"].size() == perfcard::feature_schema().size());
  CHECK(row["latency_band_ms"].size() == 2);
}

TEST_CASE("a predict cache gives the same documents as fresh analyses, across settings, dims and evictions") {
  // It also keeps the MIG slices' times: the host's time per kernel, the precision, the runtime and the
  // mode change them; a latency target does not (the calls below change each, and come back).
  auto read = [](const char* name) { return perfcard::test::read_text(perfcard::test::repo_path(std::string("weights/") + name)); };
  auto cat = perfcard::DeviceCatalog::parse(read("devices.json"));
  auto carbon = perfcard::CarbonTable::parse(read("carbon_regions.json"));
  auto c = perfcard::RooflineConstants::parse(read("roofline.json"));
  perfcard::RooflinePredictor pred(c);
  const perfcard::Model m = perfcard::load_model(perfcard::test::read_file(perfcard::test::data_path("models/bert_tiny.onnx")));
  perfcard::PredictCache cache(m);
  // What a page does: a sweep, then settings that keep the dims, then others, then more batches than the
  // cache keeps (every analysis evicted and made again), then the first sweep once more.
  std::vector<perfcard::PredictOptions> calls(11);
  calls[0].batches = {1, 2, 4, 8, 16, 32, 64, 128};
  calls[0].dims.values["sequence"] = 128;
  calls[1] = calls[0];
  calls[1].devices = {"all-gpus"};
  calls[1].precision = perfcard::Precision::FP32;
  calls[2] = calls[0];
  calls[2].mode = perfcard::Mode::Training;
  calls[3] = calls[0];
  calls[3].dims.values["sequence"] = 64;
  calls[3].devices = {"cpus"};
  calls[4] = calls[0];
  calls[4].batches.clear();
  for (std::int64_t b = 1; b <= 20; ++b) calls[4].batches.push_back(b);
  calls[5] = calls[0];
  calls[5].gpu_runtime = "pytorch-cuda-graphs";
  calls[6] = calls[0];
  calls[7] = calls[0];
  calls[7].host_us = 25;
  calls[8] = calls[0];
  calls[8].host_us = 60;
  calls[8].latency_target_ms = 2;
  calls[9] = calls[0];
  calls[9].precision = perfcard::Precision::BF16;
  calls[10] = calls[7];
  for (std::size_t i = 0; i < calls.size(); ++i) {
    INFO("call " << i);
    const std::string fresh = perfcard::predict_to_json_text(perfcard::predict(m, cat, pred, c, carbon, calls[i]));
    CHECK(perfcard::predict_to_json_text(perfcard::predict(m, cat, pred, c, carbon, calls[i], &cache)) == fresh);
  }
  const perfcard::Model other = matmul_model();
  CHECK(perfcard::test::error_message([&] { perfcard::predict(other, cat, pred, c, carbon, calls[0], &cache); }) ==
        "a predict cache was handed another model than its own");
}
