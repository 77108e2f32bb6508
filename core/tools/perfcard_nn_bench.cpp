// perfcard_nn_bench [--reps N]
// Times the nn runtime's reference loops against its Eigen path (core/include/perfcard/nn.h) on the shapes
// of the learned predictors: linear layers per weight storage and one self-attention block. Prints one JSON
// line per case: milliseconds per call (median of N reps, thread CPU time, each rep long enough for the
// clock), the speedup and the largest difference between the two outputs.
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "perfcard/error.h"
#include "perfcard/nn.h"
#include "perfcard/quant.h"

namespace nn = perfcard::nn;
namespace quant = perfcard::quant;

namespace {

// CPU time of this thread: on a shared machine wall time mostly measures the neighbours. WebAssembly has
// no thread clock (Emscripten's reads a constant), so there it is the monotonic clock.
double cpu_ms() {
  timespec ts{};
#ifdef __EMSCRIPTEN__
  clock_gettime(CLOCK_MONOTONIC, &ts);
#else
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
#endif
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

std::vector<float> random_values(std::size_t n, std::uint64_t seed, float scale) {
  std::vector<float> v(n);
  std::uint64_t s = seed;
  for (auto& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = scale * (float(s >> 40) * 0x1p-24f * 2.0f - 1.0f);  // uniform in [-scale, scale)
  }
  return v;
}

// The weights of one [rows, cols] matrix in every storage, kept alive for the Matrix views.
struct Weights {
  std::vector<float> f32;
  std::vector<std::uint16_t> f16;
  std::vector<quant::BlockQ8_0> q8;
  std::size_t rows, cols;

  Weights(std::size_t r, std::size_t c, std::uint64_t seed) : rows(r), cols(c) {
    f32 = random_values(r * c, seed, 1.0f / std::sqrt(float(c)));
    for (float x : f32) f16.push_back(quant::fp32_to_fp16(x));
    q8.resize(r * c / quant::kBlockSize);
    quant::quantize_row_q8_0(f32, q8);  // rows are whole blocks: one call covers the matrix
  }
  nn::Matrix matrix(nn::Storage s) const {
    switch (s) {
      case nn::Storage::F32: return nn::Matrix::f32(f32, rows, cols);
      case nn::Storage::F16: return nn::Matrix::f16(f16, rows, cols);
      case nn::Storage::Q8_0: return nn::Matrix::q8_0(q8, rows, cols);
    }
    return {};
  }
};

// Median milliseconds per call of f over `reps` reps of at least ~5 ms each.
double time_ms(const std::function<void()>& f, int reps) {
  const double t0 = cpu_ms();
  f();
  const double once = std::max(cpu_ms() - t0, 1e-4);
  const int inner = std::max(1, int(5.0 / once));
  std::vector<double> per_call;
  for (int r = 0; r < reps; ++r) {
    const double start = cpu_ms();
    for (int i = 0; i < inner; ++i) f();
    per_call.push_back((cpu_ms() - start) / inner);
  }
  std::nth_element(per_call.begin(), per_call.begin() + reps / 2, per_call.end());
  return per_call[std::size_t(reps / 2)];
}

double max_abs_diff(const nn::Tensor2& a, const nn::Tensor2& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double(a.data()[i]) - double(b.data()[i])));
  return m;
}

void report(const std::string& fields, double ref_ms, double fast_ms, double diff, int reps) {
  std::printf("{%s, \"reference_ms\": %.4f, \"eigen_ms\": %.4f, \"speedup\": %.1f, \"max_abs_diff\": %.3g, "
              "\"reps\": %d}\n",
              fields.c_str(), ref_ms, fast_ms, ref_ms / fast_ms, diff, reps);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 15;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: perfcard_nn_bench [--reps N]\n");
      return 2;
    }
  }
  try {
    const nn::Storage storages[] = {nn::Storage::F32, nn::Storage::F16, nn::Storage::Q8_0};
    struct Shape {
      std::size_t n, in, out;
    };
    for (const Shape s : {Shape{64, 256, 256}, Shape{1024, 128, 128}}) {
      const Weights w(s.out, s.in, 1);
      const std::vector<float> bias = random_values(s.out, 2, 0.1f);
      const nn::Tensor2 x(s.n, s.in, random_values(s.n * s.in, 3, 1.0f));
      for (const nn::Storage st : storages) {
        const nn::Matrix m = w.matrix(st);
        nn::Tensor2 yr, yf;
        const double ref = time_ms([&] { yr = nn::linear(x, m, bias, nn::Path::Reference); }, reps);
        const double fast = time_ms([&] { yf = nn::linear(x, m, bias, nn::Path::Fast); }, reps);
        report("\"case\": \"linear\", \"storage\": \"" + std::string(nn::storage_name(st)) + "\", \"x\": [" +
                   std::to_string(s.n) + ", " + std::to_string(s.in) + "], \"w\": [" + std::to_string(s.out) + ", " +
                   std::to_string(s.in) + "]",
               ref, fast, max_abs_diff(yr, yf), reps);
      }
    }
    const std::size_t t = 128, d = 128, heads = 4;
    const Weights wq(d, d, 11), wk(d, d, 12), wv(d, d, 13), wo(d, d, 14);
    const std::vector<float> b = random_values(d, 15, 0.1f);
    const nn::Tensor2 x(t, d, random_values(t * d, 16, 1.0f));
    for (const nn::Storage st : storages) {
      for (const bool causal : {false, true}) {
        nn::AttentionWeights aw{wq.matrix(st), wk.matrix(st), wv.matrix(st), wo.matrix(st), b, b, b, b, heads};
        nn::Tensor2 yr, yf;
        const double ref = time_ms([&] { yr = nn::self_attention(x, aw, causal, nn::Path::Reference); }, reps);
        const double fast = time_ms([&] { yf = nn::self_attention(x, aw, causal, nn::Path::Fast); }, reps);
        report("\"case\": \"self_attention\", \"storage\": \"" + std::string(nn::storage_name(st)) +
                   "\", \"t\": " + std::to_string(t) + ", \"d\": " + std::to_string(d) + ", \"heads\": " +
                   std::to_string(heads) + ", \"causal\": " + (causal ? "true" : "false"),
               ref, fast, max_abs_diff(yr, yf), reps);
      }
    }
  } catch (const perfcard::Error& e) {
    std::fprintf(stderr, "perfcard_nn_bench: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
