// "This device": a short measurement of the machine the code runs on, for a machine no catalog describes
// (the visitor's own, in the page; natively, `perfcard probe --cpu`, the machine the CLI runs on). It measures achieved rates, not peaks: a cache-resident f32 matrix
// product (GFLOP/s) and a read over a buffer larger than any L3 (GB/s), one thread. The roofline family
// `browser` (weights/roofline.json) holds what onnxruntime-web reaches of these rates, fitted on machines
// where both were measured (scripts/calibration/calibrate_browser.py).
//
// No clock of its own: the caller passes one (the CLI a steady clock, the page performance.now()), so the
// core stays free of platform calls.
#pragma once

#include <functional>
#include <string>

namespace perfcard {

struct ProbeOptions {
  double gemm_ms = 300;          // time spent on the matrix product; more (up to 5x) while a JIT still speeds it up
  double stream_ms = 200;        // time spent streaming, at least two passes
  int gemm_n = 64;               // square operands: 3 x 64 x 64 x 4 B = 48 KiB, in L2 everywhere
  double stream_mib = 64;        // larger than the L3 of the machines this runs on
};

struct ProbeResult {
  double gemm_gflops = 0;        // best block: a busy machine slows some blocks, never speeds one up
  double stream_gbs = 0;         // best pass
  double elapsed_ms = 0;
  int gemm_blocks = 0, stream_passes = 0;
  double checksum = 0;           // keeps the work observable, so no compiler drops it
};

// Runs the two measurements; `now_ms` is a monotonic clock in milliseconds. Throws Error on options that
// are out of range (no probe runs longer than a few seconds or allocates more than 1 GiB).
ProbeResult probe_machine(const std::function<double()>& now_ms, const ProbeOptions& options = {});

// 2^32 bytes in GB (the catalog's unit): what a wasm32 module can address.
inline constexpr double kWasm32AddressSpaceGb = 4294967296.0 / 1e9;

// The extraDevices entry (the catalog's schema) that stands for the probed machine, as JSON text: a one-core
// CPU of arch "browser" whose fp32 peak and memory bandwidth are the probe's rates and whose memory is the
// wasm32 address space, each with its source in words. `where` completes "measured <where>: ..." in the
// sources; a probe with no block or pass count (a median of recorded probes) leaves "best of" out. Written with JsonWriter: the page's module carries it, and a tree of nlohmann objects costs it KBs.
std::string probe_device_entry(const ProbeResult& probe, const std::string& id, const std::string& name,
                               const std::string& where);

// The machine as onnxruntime runs on it natively: `cores` cores (the CPUs onnxruntime's threads spread over)
// and `memory_gb` of RAM. The fp32 peak and the bandwidth are the probe's one-thread rates times the cores,
// achieved rates as in the browser's entry, so the entry's arch is "cpu-probed": the roofline family of
// that name (weights/roofline.json, stage P) holds what onnxruntime's kernels reach of them, fitted on
// machines PerfCard measured with onnxruntime-node and probed, and its uncertainty is that fit's error on a
// machine left out of it. Throws Error on cores outside [1, 4096] or a memory that is not positive.
std::string probe_cpu_entry(const ProbeResult& probe, int cores, double memory_gb, const std::string& id,
                            const std::string& name, const std::string& where);

// The archs (and roofline families) of the probes' entries: probe_device_entry's and probe_cpu_entry's. Their
// rates are not peaks, so only their own family's constants may time them (RooflineConstants::family_of).
inline constexpr const char* kBrowserArch = "browser";
inline constexpr const char* kProbedCpuArch = "cpu-probed";

}  // namespace perfcard
