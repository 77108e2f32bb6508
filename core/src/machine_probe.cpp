#include "perfcard/machine_probe.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "perfcard/error.h"
#include "json_writer.h"

namespace perfcard {

namespace {

// C += A B, i-k-j order: the inner loop is a contiguous axpy the compiler vectorizes (wasm SIMD128 in the
// page's build, the host's vector ISA natively). Not a tuned GEMM on purpose: a plain loop measures what
// the core can do with the machine, and its ratio to onnxruntime-web's kernels is what the fit learns.
void gemm_block(const float* __restrict a, const float* __restrict b, float* __restrict c, int n) {
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) {
      const float aik = a[i * n + k];
      const float* bk = b + k * n;
      float* ci = c + i * n;
      for (int j = 0; j < n; ++j) ci[j] += aik * bk[j];
    }
}

// An integer sum: the compiler may reorder and vectorize it (a float sum's order is fixed, so it would
// measure the latency of the adds, not the memory).
std::uint32_t stream_pass(const std::vector<std::uint32_t>& buf) {
  std::uint32_t s = 0;
  for (std::uint32_t v : buf) s += v;
  return s;
}

// A median of recorded probes (scripts/measure/probe_web.py) has no block count of its own.
std::string best_of(int n, const char* what) {
  return n > 0 ? ", best of " + std::to_string(n) + " " + what : "";
}

// A measured figure of an entry: its value with where and how it was measured.
void measured(JsonWriter& w, const char* key, double v, const std::string& where, const std::string& what) {
  w.key(key).begin_object().field("source", "measured " + where + ": " + what).field("uncertain", true).field("value", v).end();
}

}  // namespace

ProbeResult probe_machine(const std::function<double()>& now_ms, const ProbeOptions& o) {
  if (!(o.gemm_ms >= 1 && o.gemm_ms <= 5000) || !(o.stream_ms >= 1 && o.stream_ms <= 5000))
    throw option_error("probe: gemm_ms and stream_ms must lie in [1, 5000]");
  if (o.gemm_n < 8 || o.gemm_n > 512) throw option_error("probe: gemm_n must lie in [8, 512]");
  if (!(o.stream_mib >= 1 && o.stream_mib <= 1024)) throw option_error("probe: stream_mib must lie in [1, 1024]");
  ProbeResult r;
  const double start = now_ms();
  const int n = o.gemm_n;
  std::vector<float> a(std::size_t(n) * n), b(a.size()), c(a.size(), 0.0f);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = float(i % 7) * 0.125f - 0.375f;
    b[i] = float(i % 5) * 0.25f - 0.5f;
  }
  // A block is as many products as take 5-10 ms here (the first blocks find that count); best of blocks.
  // A clock that never advances would loop for ever: a block of the largest size timed at zero stops it.
  constexpr int kMaxPerBlock = 1 << 12;
  constexpr double kMinBlockMs = 2;
  int per_block = 1;
  const double flops_per_product = 2.0 * n * n * n;
  double best = 0;
  // A JIT compiles the loop again, optimized, while it runs (V8 tiers wasm up in the background), so the
  // first few hundred milliseconds can run at a third of the final speed. The measurement goes on past
  // its budget while the best block still improves (by 3% within the last 150 ms), up to 5x the budget.
  const double gemm_start = now_ms();
  double improved_at = gemm_start;
  for (;;) {
    const double t0 = now_ms();
    for (int k = 0; k < per_block; ++k) gemm_block(a.data(), b.data(), c.data(), n);
    const double dt = now_ms() - t0;
    ++r.gemm_blocks;
    // Only blocks long enough for the clock to resolve: a browser coarsens performance.now() (100 us in a
    // page that is not cross-origin isolated), and a best-of over short blocks would pick a rounding error.
    if (dt >= kMinBlockMs) {
      const double rate = flops_per_product * per_block / (dt * 1e6);
      if (rate > best * 1.03) improved_at = now_ms();
      best = std::max(best, rate);
    } else if (dt <= 0 && per_block == kMaxPerBlock) {
      break;
    }
    if (dt < 5 && per_block < kMaxPerBlock) per_block *= 2;
    const double now = now_ms();
    if (best > 0 && now - gemm_start >= o.gemm_ms && (now - improved_at >= 150 || now - gemm_start >= 5 * o.gemm_ms)) break;
  }
  r.gemm_gflops = best;
  for (float v : c) r.checksum += v;

  std::vector<std::uint32_t> buf(std::size_t(o.stream_mib * 1048576.0 / sizeof(std::uint32_t)));
  for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = std::uint32_t(i & 255);
  const double bytes = double(buf.size()) * sizeof(std::uint32_t);
  double best_gbs = 0;
  const double stream_end = now_ms() + o.stream_ms;
  for (;;) {
    const double t0 = now_ms();
    r.checksum += stream_pass(buf);
    const double dt = now_ms() - t0;
    ++r.stream_passes;
    if (dt > 0) best_gbs = std::max(best_gbs, bytes / (dt * 1e6));
    if (r.stream_passes >= 2 && now_ms() >= stream_end) break;
    if (r.stream_passes >= 16 && best_gbs == 0) break;  // a frozen clock: reported below
  }
  r.stream_gbs = best_gbs;
  r.elapsed_ms = now_ms() - start;
  if (!(r.gemm_gflops > 0) || !(r.stream_gbs > 0))
    throw internal_error("probe: the clock did not advance while measuring (a coarse or frozen timer)");
  return r;
}

std::string probe_device_entry(const ProbeResult& p, const std::string& id, const std::string& name,
                               const std::string& where) {
  JsonWriter w;
  w.begin_object().field("arch", kBrowserArch);
  w.key("cores").begin_object()
      .field("source", "one thread: onnxruntime-web's wasm backend without SharedArrayBuffer runs single-threaded")
      .field("value", 1).end();
  w.field("id", id).field("kind", "cpu");
  measured(w, "memory_bandwidth_gbs", p.stream_gbs, where,
           "one-thread read over a buffer larger than L3" + best_of(p.stream_passes, "passes") + " (PerfCard's probe)");
  // Not the machine's RAM: onnxruntime-web's wasm backend is a wasm32 module, so weights, activations and
  // its own heap share one 32-bit address space whatever the machine has. A model beyond it does not fit.
  w.key("memory_gb").begin_object()
      .field("source", "the wasm32 address space (2^32 bytes), the most onnxruntime-web's wasm backend can hold")
      .field("value", kWasm32AddressSpaceGb).end();
  w.field("name", name);
  measured(w, "peak_fp32_gflops", p.gemm_gflops, where,
           "f32 matrix product in cache" + best_of(p.gemm_blocks, "blocks") + " (PerfCard's probe)");
  w.field("vendor", "unknown").end();
  return w.take();
}

std::string probe_cpu_entry(const ProbeResult& p, int cores, double memory_gb, const std::string& id,
                            const std::string& name, const std::string& where) {
  if (cores < 1 || cores > 4096) throw option_error("probe: cores must lie in [1, 4096] (got " + std::to_string(cores) + ")");
  if (!(memory_gb > 0) || !std::isfinite(memory_gb)) throw option_error("probe: the machine's memory must be a positive number of GB");
  const std::string n = std::to_string(cores);
  JsonWriter w;
  w.begin_object().field("arch", kProbedCpuArch);
  w.key("cores").begin_object().field("source", "the machine's physical cores (SMT siblings once)").field("value", cores).end();
  w.field("id", id).field("kind", "cpu");
  measured(w, "memory_bandwidth_gbs", p.stream_gbs * cores, where,
          "one-thread read over a buffer larger than L3" + best_of(p.stream_passes, "passes") + " (PerfCard's probe) x " + n + " cores");
  w.key("memory_gb").begin_object().field("source", "the machine's RAM").field("value", memory_gb).end();
  w.field("name", name);
  measured(w, "peak_fp32_gflops", p.gemm_gflops * cores, where,
          "one-thread f32 matrix product in cache" + best_of(p.gemm_blocks, "blocks") + " (PerfCard's probe) x " + n + " cores");
  w.key("threads").begin_object().field("source", "onnxruntime's default: one thread per physical core").field("value", cores).end();
  w.field("vendor", "unknown").end();
  return w.take();
}

}  // namespace perfcard
