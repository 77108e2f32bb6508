// "This device": the probe measures positive rates within its time budget, stops on a frozen clock instead
// of spinning, refuses absurd options, and its device entry is a catalog entry the predictor accepts.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>

#include <nlohmann/json.hpp>

#include "perfcard/device.h"
#include "perfcard/error.h"
#include "perfcard/json.h"
#include "perfcard/machine_probe.h"
#include "perfcard/roofline.h"
#include "test_util.h"

namespace {

double steady_ms() {
  static const auto t0 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

perfcard::ProbeOptions quick() {
  perfcard::ProbeOptions o;
  o.gemm_ms = 20;
  o.stream_ms = 10;
  o.stream_mib = 4;
  return o;
}

}  // namespace

TEST_CASE("the probe measures positive rates within its budget") {
  const auto p = perfcard::probe_machine(steady_ms, quick());
  CHECK(p.gemm_gflops > 0.01);
  CHECK(p.gemm_gflops < 10000);  // a 64^3 product loop: far below any machine's peak x 100
  CHECK(p.stream_gbs > 0.01);
  CHECK(p.stream_gbs < 100000);
  CHECK(p.gemm_blocks >= 1);
  CHECK(p.stream_passes >= 2);
  // The budget is 30 ms of measuring plus the setup (a 4 MiB buffer) and one overrunning block or pass;
  // under sanitizers or a loaded machine far slower, so the bound is loose: what it catches is a loop that
  // ignores the clock.
  CHECK(p.elapsed_ms < 5000);
}

TEST_CASE("a frozen clock is an error, not a hang") {
  CHECK_THROWS_WITH(perfcard::probe_machine([] { return 42.0; }, quick()),
                    Catch::Contains("the clock did not advance"));
}

TEST_CASE("probe options out of range are refused by name") {
  auto o = quick();
  o.gemm_ms = 1e9;
  CHECK_THROWS_WITH(perfcard::probe_machine(steady_ms, o), Catch::Contains("gemm_ms and stream_ms"));
  o = quick();
  o.stream_mib = 1e6;
  CHECK_THROWS_WITH(perfcard::probe_machine(steady_ms, o), Catch::Contains("stream_mib"));
  o = quick();
  o.gemm_n = 4;
  CHECK_THROWS_WITH(perfcard::probe_machine(steady_ms, o), Catch::Contains("gemm_n"));
}

TEST_CASE("the probe's device entry is a one-core browser CPU with the measured rates") {
  perfcard::ProbeResult p;
  p.gemm_gflops = 12.5;
  p.stream_gbs = 7.25;
  p.gemm_blocks = 30;
  p.stream_passes = 20;
  const auto entry = perfcard::probe_device_entry(p, "this-device", "This device", "in a test");
  const auto cat = perfcard::DeviceCatalog::parse(R"({"schema_version": 1, "devices": []})")
                       .with_devices(perfcard::Json::parse("[" + entry + "]", "the probe's entry"));
  const perfcard::Device& d = cat.get("this-device");
  CHECK(d.kind == "cpu");
  CHECK(d.arch == "browser");
  CHECK(d.cores.value == 1);
  CHECK(d.peak(perfcard::Precision::FP32) == Approx(12.5e-3));  // TFLOP/s, as every catalog peak
  CHECK(d.memory_bandwidth_gbs.value == Approx(7.25));
  CHECK(d.peak_fp32_gflops.source.find("best of 30 blocks") != std::string::npos);
  // onnxruntime-web's wasm32 heap, not the machine's RAM: a model beyond 4 GiB does not fit in the browser.
  CHECK(d.memory_gb.value == Approx(4.294967296));
  CHECK(d.memory_gb.source.find("wasm32") != std::string::npos);
}

TEST_CASE("an entry made from recorded rates has no block count to state") {
  perfcard::ProbeResult p;
  p.gemm_gflops = 3;
  p.stream_gbs = 8;
  const auto entry = nlohmann::json::parse(perfcard::probe_device_entry(p, "probe-m1", "m1", "on m1, the median of 5 probes"));
  const std::string source = entry["peak_fp32_gflops"]["source"];
  CHECK(source == "measured on m1, the median of 5 probes: f32 matrix product in cache (PerfCard's probe)");
}

TEST_CASE("the native entry is a CPU of the cpu-probed family with the one-thread rates times the cores") {
  perfcard::ProbeResult p;
  p.gemm_gflops = 25;
  p.stream_gbs = 20;
  const auto entry = perfcard::probe_cpu_entry(p, 8, 64, "this-machine", "This machine", "in a test");
  const auto cat = perfcard::DeviceCatalog::parse(R"({"schema_version": 1, "devices": []})")
                       .with_devices(perfcard::Json::parse("[" + entry + "]", "the probe's entry"));
  const perfcard::Device& d = cat.get("this-machine");
  CHECK(d.kind == "cpu");
  CHECK(d.arch == perfcard::kProbedCpuArch);
  CHECK(d.cores.value == 8);
  CHECK(d.peak(perfcard::Precision::FP32) == Approx(0.2));  // 25 GFLOP/s x 8 cores, in TFLOP/s
  CHECK(d.memory_bandwidth_gbs.value == Approx(160));
  CHECK(d.memory_gb.value == Approx(64));  // the machine's RAM: a native onnxruntime has no wasm32 limit
  CHECK(d.peak_fp32_gflops.source.find("x 8 cores") != std::string::npos);
  // The shipped constants map the arch to its own family (stage P), not to the catalog CPUs' "cpu".
  const auto constants = perfcard::RooflineConstants::parse(perfcard::test::read_text(perfcard::test::repo_path("weights/roofline.json")));
  std::string family;
  constants.family_of(d, &family);
  CHECK(family == "cpu-probed");
  CHECK(constants.accuracy.count("cpu-probed") == 1);
}

TEST_CASE("constants without a probed entry's family refuse it instead of timing its rates as peaks") {
  perfcard::ProbeResult p;
  p.gemm_gflops = 25;
  p.stream_gbs = 20;
  const auto cat = perfcard::DeviceCatalog::parse(R"({"schema_version": 1, "devices": []})")
                       .with_devices(perfcard::Json::parse("[" + perfcard::probe_cpu_entry(p, 2, 8, "m", "m", "t") + ", " +
                                                               perfcard::probe_device_entry(p, "d", "d", "t") + "]", "entries"));
  const std::string fam = R"({"gemm_eff_tensor": 1, "gemm_eff_fp32": 1, "conv_eff_tensor": 1, "conv_eff_fp32": 1,
      "vector_eff": 1, "mem_eff": 1, "k_half": 0, "tile": 0, "launch_us": 0})";
  const auto older = perfcard::RooflineConstants::parse(R"({"format_version": "1.0", "version": "t",
    "arch_family": {"cpu": "cpu"}, "families": {"cpu": )" + fam + R"(}, "runtimes": {"onnxruntime": {"kind": "cpu",
    "dispatch_us": 0, "context_mb": 0, "workspace_mb": 0, "allocator_overhead": 0}}})");
  CHECK_THROWS_WITH(older.family_of(cat.get("m")), Catch::Contains("no 'cpu-probed' family for the probed device 'm'"));
  CHECK_THROWS_WITH(older.family_of(cat.get("d")), Catch::Contains("no 'browser' family for the probed device 'd'"));
}

TEST_CASE("the native entry refuses a machine of no cores or no memory") {
  perfcard::ProbeResult p;
  p.gemm_gflops = 25;
  p.stream_gbs = 20;
  CHECK_THROWS_WITH(perfcard::probe_cpu_entry(p, 0, 64, "m", "m", "t"), Catch::Contains("cores must lie in [1, 4096]"));
  CHECK_THROWS_WITH(perfcard::probe_cpu_entry(p, 4, 0, "m", "m", "t"), Catch::Contains("memory must be a positive number"));
  CHECK_THROWS_WITH(perfcard::probe_cpu_entry(p, 4, std::nan(""), "m", "m", "t"), Catch::Contains("memory must be a positive number"));
}
