// The nn runtime (core/include/perfcard/nn.h): hand-computed cases for every op, the Eigen path against
// the fp64 reference for every op and weight storage, the stored weights against their fp32 originals, and
// the errors. Timings are not tested here (core/tools/perfcard_nn_bench.cpp).
//
// Error budgets (docs/nn-runtime.md), with eps = 2^-24 (fp32 unit roundoff) and gamma_n(k) = k eps / (1 - k eps)
// (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., section 3.1):
//  * A sum of k products computed in fp32 in any order (Eigen's GEMM blocks and vectorizes; with or without
//    FMA) errs by at most gamma_n(k) * sum |w x|. The reference sums in fp64 (error ~ k 2^-53, negligible)
//    and rounds once (eps |y|); for q8_0 it sums each block of 32 in fp32 (quant::dot_q8_0_f32): gamma_n(31).
//    So per output |fast - reference| <= (gamma_n(in) [+ gamma_n(31) for q8_0] + 4 eps) * (sum |w x| + |b|).
//  * Stored weights against their fp32 originals: fp16 rounds each weight by at most half an ulp,
//    2^-11 |w| (2^-25 below fp16's normal range); q8_0 by at most d / 2 per block (docs/weights-format.md:
//    0.57% relative RMS predicted for gaussian weights, budget 0.75%).
//  * Library functions (expf, tanhf) are taken as accurate to kUlps = 4 ulp, i.e. a relative 8 eps: glibc
//    documents at most 2 ulp for both on x86-64, and musl's (Emscripten's libc) are of the same order.
//  * LayerNorm, softmax and attention: the first-order propagation of those roundings through each stage,
//    written out next to each test; a first-order bound is used with a 5% margin for the second-order terms
//    (relative size ~1e-4 of the first-order ones here).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "perfcard/error.h"
#include "perfcard/nn.h"
#include "perfcard/quant.h"
#include "perfcard/weights_file.h"
#include "test_util.h"

namespace nn = perfcard::nn;
namespace quant = perfcard::quant;
using nn::Matrix;
using nn::Path;
using nn::Storage;
using nn::Tensor2;

namespace {

constexpr double kEps = 0x1p-24;
constexpr double kUlps = 4;  // the library functions' accuracy assumed above
constexpr double kTiny = 0x1p-149;  // fp32's smallest subnormal: the absolute floor near underflow
double gamma_n(double k) { return k * kEps / (1 - k * kEps); }

using perfcard::test::Rng;

Tensor2 random_tensor(Rng& rng, std::size_t rows, std::size_t cols, double scale = 1.0, double offset = 0.0) {
  return Tensor2(rows, cols, rng.normals(rows * cols, scale, offset));
}

// One weight matrix in all three storages, kept alive for the Matrix views, and the values each storage
// holds exactly (in fp64).
struct Stored {
  std::size_t rows, cols;
  std::vector<float> f32;
  std::vector<std::uint16_t> f16;
  std::vector<quant::BlockQ8_0> q8;

  Stored(std::size_t r, std::size_t c, std::vector<float> values) : rows(r), cols(c), f32(std::move(values)) {
    for (float x : f32) f16.push_back(quant::fp32_to_fp16(x));
    q8.resize(r * c / quant::kBlockSize);
    quant::quantize_row_q8_0(f32, q8);  // c % 32 == 0: the rows are whole blocks
  }
  Matrix matrix(Storage s, std::string name = "w") const {
    if (s == Storage::F16) return Matrix::f16(f16, rows, cols, name);
    if (s == Storage::Q8_0) return Matrix::q8_0(q8, rows, cols, name);
    return Matrix::f32(f32, rows, cols, name);
  }
  std::vector<double> exact(Storage s) const {
    std::vector<double> v(f32.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (s == Storage::F32) v[i] = f32[i];
      if (s == Storage::F16) v[i] = quant::fp16_to_fp32(f16[i]);
      if (s == Storage::Q8_0) v[i] = double(q8[i / 32].scale()) * q8[i / 32].q[i % 32];
    }
    return v;
  }
};

const Storage kStorages[] = {Storage::F32, Storage::F16, Storage::Q8_0};

// fp64 y = x W^T + b and S = |x| |W|^T + |b| (the scale of the rounding errors), W [out, in] row-major.
struct Dense {
  std::vector<double> y, s;
};
Dense dense(const std::vector<double>& x, std::size_t n, const std::vector<double>& w, std::size_t out,
            std::size_t in, std::span<const float> b) {
  Dense r{std::vector<double>(n * out), std::vector<double>(n * out)};
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t o = 0; o < out; ++o) {
      double y = b.empty() ? 0.0 : b[o], s = b.empty() ? 0.0 : std::fabs(b[o]);
      for (std::size_t k = 0; k < in; ++k) {
        y += x[i * in + k] * w[o * in + k];
        s += std::fabs(x[i * in + k] * w[o * in + k]);
      }
      r.y[i * out + o] = y;
      r.s[i * out + o] = s;
    }
  }
  return r;
}

std::vector<double> widen(const Tensor2& t) { return {t.values().begin(), t.values().end()}; }

// Counts the elements outside their bound and keeps the worst |error| / bound.
struct Budget {
  std::size_t over = 0, checked = 0;
  double worst = 0;
  void check(double got, double want, double bound) {
    const double err = std::fabs(got - want);
    ++checked;
    if (!(err <= bound)) ++over;  // NaN counts as over
    if (bound > 0) worst = std::max(worst, err / bound);
  }
};

using perfcard::test::error_message;

}  // namespace

// ------------------------------------------------------------------------------------------ value types

TEST_CASE("Tensor2 and Matrix check their sizes; rows widen exactly from every storage") {
  Tensor2 t(2, 3, {1, 2, 3, 4, 5, 6});
  CHECK(t(1, 2) == 6.0f);
  CHECK(t.row(1)[0] == 4.0f);
  CHECK(t.shape_string() == "[2, 3]");
  CHECK(error_message([] { Tensor2(2, 3, std::vector<float>(5)); }) == "Tensor2: 5 values for shape [2, 3]");

  Rng rng{1};
  const Stored w(3, 64, rng.normals(3 * 64));
  for (Storage s : kStorages) {
    const Matrix m = w.matrix(s, "proj");
    CHECK(m.rows() == 3);
    CHECK(m.cols() == 64);
    CHECK(m.storage() == s);
    std::vector<float> row(64);
    const std::vector<double> exact = w.exact(s);
    for (std::size_t r = 0; r < 3; ++r) {
      m.row_to_f32(r, row);
      for (std::size_t c = 0; c < 64; ++c) REQUIRE(double(row[c]) == exact[r * 64 + c]);
    }
  }
  CHECK(w.matrix(Storage::Q8_0, "proj").describe() == "weight 'proj' [3, 64] q8_0");
  CHECK(Matrix::f32(w.f32, 3, 64).describe() == "weight [3, 64] f32");
  CHECK(error_message([&] { (void)w.matrix(Storage::F16, "proj").f32_values(); }) == "weight 'proj' [3, 64] f16 is not f32");
  CHECK(error_message([&] { Matrix::f32(w.f32, 4, 64, "a"); }) == "Matrix 'a': 192 f32 values for shape [4, 64]");
  CHECK(error_message([&] { Matrix::f16(w.f16, 3, 63); }) == "Matrix: 192 f16 values for shape [3, 63]");
  CHECK(error_message([&] { Matrix::q8_0(w.q8, 6, 48, "q"); }) ==
        "Matrix 'q': q8_0 needs a column count that is a multiple of 32, shape [6, 48]");
  CHECK(error_message([&] { Matrix::q8_0(w.q8, 2, 64, "q"); }) == "Matrix 'q': 6 q8_0 blocks for shape [2, 64] (4 needed)");
}

TEST_CASE("weight matrices and vectors from a weights file: dtype, rank and shape checked, data in place") {
  const auto bytes = perfcard::test::read_file(perfcard::test::data_path("weights/example_v1.pcwt"));
  const perfcard::WeightsFile file = perfcard::read_weights(bytes);
  const Matrix f32 = nn::weight_matrix(file, "x", 4, 64);
  const Matrix f16 = nn::weight_matrix(file, "x_f16", -1, 64);
  const Matrix q8 = nn::weight_matrix(file, "x_q8_0");
  CHECK(f32.storage() == Storage::F32);
  CHECK(f16.storage() == Storage::F16);
  CHECK(q8.storage() == Storage::Q8_0);
  CHECK(q8.name() == "x_q8_0");
  CHECK(f32.f32_values().data() == file.tensor("x").f32().data());  // a view, not a copy
  const std::vector<float> want = file.tensor("x_q8_0").to_f32();
  std::vector<float> row(64);
  for (std::size_t r = 0; r < 4; ++r) {
    q8.row_to_f32(r, row);
    for (std::size_t c = 0; c < 64; ++c) REQUIRE(row[c] == want[r * 64 + c]);
  }
  // The reference linear of a q8_0 matrix is quant::matvec_q8_0_f32, bit for bit.
  Rng rng{2};
  const Tensor2 x = random_tensor(rng, 1, 64);
  std::vector<float> y(4);
  quant::matvec_q8_0_f32(file.tensor("x_q8_0").q8_0(), 4, 64, x.values(), y);
  const Tensor2 got = nn::linear(x, q8, {}, Path::Reference);
  for (std::size_t o = 0; o < 4; ++o) CHECK(got(0, o) == y[o]);

  auto entry = [&](const char* name) { return file.tensor(name).entry_offset; };
  try {
    nn::weight_matrix(file, "x_bf16");
    FAIL("no error");
  } catch (const perfcard::Error& e) {
    CHECK(e.message() == "tensor 'x_bf16' is bf16; a weight matrix must be f32, f16 or q8_0");
    CHECK(e.where().byte_offset == entry("x_bf16"));
    CHECK(e.code() == perfcard::ErrorCode::BadData);
  }
  CHECK(error_message([&] { nn::weight_matrix(file, "bias"); }) ==
        "tensor 'bias' is f64; a weight matrix must be f32, f16 or q8_0");
  CHECK(error_message([&] { nn::weight_matrix(file, "scalar"); }) ==
        "tensor 'scalar' has rank 0 (shape []); a weight matrix has rank 2");
  CHECK(error_message([&] { nn::weight_matrix(file, "x_f16", 64, 4); }) == "tensor 'x_f16' has shape [4, 64], expected [64, 4]");
  CHECK(error_message([&] { nn::weight_matrix(file, "nope"); }) == "predictor 'example' has no tensor 'nope'");
  CHECK(error_message([&] { nn::weight_vector(file, "bias"); }) == "tensor 'bias' is f64, expected f32");
  CHECK(error_message([&] { nn::weight_vector(file, "x", 64); }) == "tensor 'x' has shape [4, 64], expected [64]");
  CHECK(error_message([&] { nn::weight_vector(file, "scalar"); }) == "tensor 'scalar' has shape [], expected [-1]");
}

// ----------------------------------------------------------------------------------------------- linear

TEST_CASE("linear by hand: a 2x3 layer in f32 and f16, a 32-wide q8_0 row") {
  const Tensor2 x(2, 3, {1, 2, 3, 4, 5, 6});
  const std::vector<float> w = {1, 0, -1, 0.5f, 0.5f, 0.5f};
  std::vector<std::uint16_t> w16;
  for (float v : w) w16.push_back(quant::fp32_to_fp16(v));  // all exact in fp16
  const std::vector<float> b = {10, -1};
  // [1 2 3] . [1 0 -1] + 10 = 8, [1 2 3] . [.5 .5 .5] - 1 = 2; [4 5 6]: 8 and 6.5.
  for (const Matrix& m : {Matrix::f32(w, 2, 3), Matrix::f16(w16, 2, 3)}) {
    for (Path p : {Path::Reference, Path::Fast}) {
      const Tensor2 y = nn::linear(x, m, b, p);
      REQUIRE(y.shape_string() == "[2, 2]");
      CHECK(y.values()[0] == 8.0f);
      CHECK(y.values()[1] == 2.0f);
      CHECK(y.values()[2] == 8.0f);
      CHECK(y.values()[3] == 6.5f);
      CHECK(nn::linear(x, m, {}, p)(1, 1) == 7.5f);  // no bias
    }
  }
  // Weights k / 2 for k in -127..: amax 63.5 gives d = 0.5 exactly, so q8_0 holds them exactly.
  std::vector<float> wq(32);
  for (int i = 0; i < 32; ++i) wq[std::size_t(i)] = float(i == 0 ? -127 : 3 * i - 40) / 2;
  std::vector<quant::BlockQ8_0> blocks(1);
  quant::quantize_row_q8_0(wq, blocks);
  REQUIRE(blocks[0].scale() == 0.5f);
  const Tensor2 ones(1, 32, 1.0f);
  double sum = 0;
  for (float v : wq) sum += v;  // -63.5 + sum_{i=1..31} (3i - 40) / 2 = -63.5 + (1488 - 1240) / 2 = 60.5
  REQUIRE(sum == 60.5);
  for (Path p : {Path::Reference, Path::Fast}) CHECK(nn::linear(ones, Matrix::q8_0(blocks, 1, 32), {}, p)(0, 0) == 60.5f);
}

TEST_CASE("linear: the Eigen path against the reference for every storage, within the fp32 summation bound") {
  Rng rng{3};
  struct Shape {
    std::size_t n, in, out;
  };
  // 300 outputs of 256 inputs make three panels of 128 rows, the last one partial.
  for (const Shape sh : {Shape{37, 96, 50}, Shape{64, 256, 300}, Shape{1, 32, 1}}) {
    const Stored w(sh.out, sh.in, rng.normals(sh.out * sh.in, 1.0 / std::sqrt(double(sh.in))));
    const std::vector<float> b = rng.normals(sh.out, 0.1);
    const Tensor2 x = random_tensor(rng, sh.n, sh.in);
    for (Storage s : kStorages) {
      const Matrix m = w.matrix(s);
      const Tensor2 ref = nn::linear(x, m, b, Path::Reference);
      const Tensor2 fast = nn::linear(x, m, b, Path::Fast);
      const Dense exact = dense(widen(x), sh.n, w.exact(s), sh.out, sh.in, b);
      const double g = gamma_n(double(sh.in)) + (s == Storage::Q8_0 ? gamma_n(31) : 0.0) + 4 * kEps;
      Budget between, ref_vs_exact;
      double err2 = 0, y2 = 0;
      for (std::size_t i = 0; i < ref.size(); ++i) {
        between.check(fast.values()[i], ref.values()[i], g * exact.s[i]);
        // The reference alone: one rounding, its fp64 sum, and for q8_0 the fp32 block sums.
        ref_vs_exact.check(ref.values()[i], exact.y[i],
                           kEps * std::fabs(exact.y[i]) + double(sh.in + 2) * 0x1p-53 * exact.s[i] +
                               (s == Storage::Q8_0 ? gamma_n(33) * exact.s[i] : 0.0));
        err2 += std::pow(double(fast.values()[i]) - ref.values()[i], 2);
        y2 += exact.y[i] * exact.y[i];
      }
      INFO(nn::storage_name(s) << " [" << sh.n << " x " << sh.in << "] x [" << sh.out
                               << "]: worst |fast - ref| / bound " << between.worst << ", relative RMS "
                               << std::sqrt(err2 / y2));
      CHECK(between.over == 0);
      CHECK(ref_vs_exact.over == 0);
      // Independent roundings grow like eps sqrt(in / 6) rather than in eps (see the next test): expected
      // <= 4e-7 relative RMS; the figure asked of the fast path is 1e-5.
      CHECK(std::sqrt(err2 / y2) < 1e-5);
    }
  }
}

TEST_CASE("linear: f16 and q8_0 weights against their fp32 originals, within the rounding of the storage") {
  Rng rng{4};
  const std::size_t n = 16, in = 512, out = 256;
  const Stored w(out, in, rng.normals(out * in));
  Tensor2 x = random_tensor(rng, n, in);
  x(3, 7) = 25.0f;  // an outlier input
  std::vector<double> w64(w.f32.begin(), w.f32.end());
  const Dense original = dense(widen(x), n, w64, out, in, {});
  for (Storage s : kStorages) {
    const Tensor2 y = nn::linear(x, w.matrix(s), {}, Path::Fast);
    const std::vector<double> held = w.exact(s);
    const Dense stored = dense(widen(x), n, held, out, in, {});
    Budget budget;
    double err2 = 0, ref2 = 0, predicted2 = 0;
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t o = 0; o < out; ++o) {
        // Storage error: f16 half an ulp per weight, q8_0 d / 2 per weight (the hard bounds), and their
        // variance for the predicted RMS: a rounding error uniform on [-h, h] has variance h^2 / 3.
        double storage_bound = 0;
        for (std::size_t k = 0; k < in; ++k) {
          const double xk = x(i, k), wk = w.f32[o * in + k];
          double half = 0;  // the largest rounding error this weight can have
          if (s == Storage::F16) half = 0x1p-11 * std::fabs(wk) + 0x1p-25;
          if (s == Storage::Q8_0) half = w.q8[(o * in + k) / 32].scale() / 2 * (1 + 0x1p-16);
          storage_bound += half * std::fabs(xk);
          const double ulp_half = s == Storage::F16 ? std::ldexp(1.0, std::ilogb(wk) - 11) : half;
          predicted2 += xk * xk * ulp_half * ulp_half / 3;
        }
        const std::size_t at = i * out + o;
        budget.check(y(i, o), original.y[at],
                     storage_bound + gamma_n(double(in)) * stored.s[at] + kEps * std::fabs(stored.y[at]));
        err2 += std::pow(double(y(i, o)) - original.y[at], 2);
        ref2 += original.y[at] * original.y[at];
      }
    }
    const double rel = std::sqrt(err2 / ref2), predicted = std::sqrt(predicted2 / ref2);
    INFO(nn::storage_name(s) << ": relative RMS error " << rel << " (predicted " << predicted << "), worst |err| / bound "
                             << budget.worst);
    CHECK(budget.over == 0);
    // fp32 summation only. Independent roundings of the running sum s_k (~ sqrt(k) rms(w x)) give a
    // relative RMS of eps sqrt(in / 6) for a sequential sum (~5.5e-7 here); Eigen's blocked sums do better.
    if (s == Storage::F32) CHECK(rel < 2 * kEps * std::sqrt(double(in) / 6));
    if (s == Storage::F16) {
      CHECK(rel < 0x1p-11 / std::sqrt(3.0));  // at most half an ulp = 2^-11 relative, uniform: RMS 2^-11 / sqrt 3
      CHECK(rel == Approx(predicted).epsilon(0.25));
    }
    if (s == Storage::Q8_0) {
      CHECK(rel < 0.0075);  // docs/weights-format.md: 0.57% predicted for gaussian weights, budget 0.75%
      CHECK(rel == Approx(predicted).epsilon(0.25));
    }
  }
}

// ------------------------------------------------------------------------------------------ activations

TEST_CASE("activations: hand values, and every element within the library-function bound of fp64") {
  std::vector<float> v = {-2.0f, -0.0f, 0.0f, 3.0f, std::numeric_limits<float>::quiet_NaN()};
  nn::relu(v);
  CHECK(v[0] == 0.0f);
  CHECK(v[3] == 3.0f);
  CHECK(std::isnan(v[4]));
  std::vector<float> s = {0.0f, -100.0f, 100.0f, -1000.0f};
  nn::sigmoid(s);
  CHECK(s[0] == 0.5f);
  CHECK(s[1] > 0.0f);  // exp(-100) ~ 3.7e-44: a subnormal, not 0 and not NaN
  CHECK(s[2] == 1.0f);
  CHECK(s[3] == 0.0f);
  std::vector<float> g = {0.0f, 1.0f, -1.0f};
  nn::gelu_tanh(g);
  CHECK(g[0] == 0.0f);
  CHECK(g[1] == Approx(0.8411920).epsilon(1e-6));  // 0.5 (1 + tanh(0.7978846 * 1.044715))
  CHECK(g[2] == Approx(-0.1588080).epsilon(1e-6));
  std::vector<float> si = {1.0f, -1000.0f};
  nn::silu(si);
  CHECK(si[0] == Approx(0.7310586).epsilon(1e-6));
  CHECK(si[1] == 0.0f);

  // Per element against the same formula in fp64 at the same input:
  //  tanh: kUlps ulp, |dt| <= 2 kUlps eps |t|.
  //  sigmoid: e = exp(-|x|) within 2 kUlps eps, then 1 + e and one division (x >= 0), or e / (1 + e)
  //           (x < 0, e counted twice): relative (4 kUlps + 3) eps; silu one product more.
  //  gelu: u = c (x + a x^3) in fp32 with c and a rounded to fp32: 7 roundings of same-sign terms, |du| <=
  //        7 eps |u|; t = tanh(u) moves by (1 - t^2) |du| plus its own 2 kUlps eps |t|; then 1 + t (eps |1 + t|)
  //        and the product (eps |y|): |dy| <= |x| / 2 ((1 - t^2) 7 eps |u| + 2 kUlps eps |t| + eps |1 + t|) + eps |y|.
  //  Near underflow a result is a subnormal: an absolute kUlps * 2^-149 more.
  Rng rng{5};
  std::vector<float> x = rng.normals(4000, 4.0);
  for (float e : {0.0f, 1e-30f, -1e-30f, 20.0f, -20.0f, 88.0f, -88.0f, 100.0f, -100.0f, 1e4f, -1e4f}) x.push_back(e);
  const double c = std::sqrt(2.0 / 3.141592653589793), a = 0.044715;
  for (nn::Activation act : {nn::Activation::Relu, nn::Activation::GeluTanh, nn::Activation::Silu,
                             nn::Activation::Tanh, nn::Activation::Sigmoid}) {
    std::vector<float> y = x;
    nn::apply(act, y);
    Budget budget;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double xi = x[i];
      const double sig = 1.0 / (1.0 + std::exp(-xi));
      double want = 0, bound = 0;
      switch (act) {
        case nn::Activation::Relu: want = xi < 0 ? 0.0 : xi; break;
        case nn::Activation::Tanh:
          want = std::tanh(xi);
          bound = 2 * kUlps * kEps * std::fabs(want) + kUlps * kTiny;
          break;
        case nn::Activation::Sigmoid:
          want = sig;
          bound = (4 * kUlps + 3) * kEps * want + kUlps * kTiny;
          break;
        case nn::Activation::Silu:
          want = xi * sig;
          bound = (4 * kUlps + 4) * kEps * std::fabs(want) + std::fabs(xi) * kUlps * kTiny;
          break;
        case nn::Activation::GeluTanh: {
          const double u = c * (xi + a * xi * xi * xi), t = std::tanh(u);
          want = 0.5 * xi * (1 + t);
          bound = std::fabs(xi) / 2 * ((1 - t * t) * 7 * kEps * std::fabs(u) + 2 * kUlps * kEps * std::fabs(t) +
                                       kEps * std::fabs(1 + t)) +
                  kEps * std::fabs(want) + kUlps * kTiny;
          break;
        }
        case nn::Activation::None: break;
      }
      budget.check(y[i], want, bound * (1 + 1e-6));
    }
    INFO(nn::activation_name(act) << ": worst |err| / bound " << budget.worst);
    CHECK(budget.over == 0);
  }

  for (auto named : {nn::Activation::None, nn::Activation::Relu, nn::Activation::GeluTanh, nn::Activation::Silu,
                     nn::Activation::Tanh, nn::Activation::Sigmoid}) {
    CHECK(nn::activation_from_name(nn::activation_name(named)) == named);
  }
  CHECK_THROWS_WITH(nn::activation_from_name("swish"),
                    Catch::Contains("unknown activation 'swish' (known: none, relu, gelu_tanh, silu, tanh, sigmoid)"));
}

// ------------------------------------------------------------------------------------- message passing

TEST_CASE("gather and segment sum / mean / max by hand, with an empty segment") {
  const Tensor2 v(4, 2, {1, 2, 3, 4, 5, 6, -7, 8});
  const std::vector<std::int32_t> ids = {0, 2, 0, 2};  // segment 1 has no rows
  for (Path p : {Path::Reference, Path::Fast}) {
    const auto sum = nn::segment_reduce(v, ids, 3, nn::Reduce::Sum, p);
    CHECK(std::vector<float>(sum.values().begin(), sum.values().end()) == std::vector<float>{6, 8, 0, 0, -4, 12});
    const auto mean = nn::segment_reduce(v, ids, 3, nn::Reduce::Mean, p);
    CHECK(std::vector<float>(mean.values().begin(), mean.values().end()) == std::vector<float>{3, 4, 0, 0, -2, 6});
    const auto max = nn::segment_reduce(v, ids, 3, nn::Reduce::Max, p);
    CHECK(std::vector<float>(max.values().begin(), max.values().end()) == std::vector<float>{5, 6, 0, 0, 3, 8});
    // A NaN wins the max of its segment only.
    Tensor2 nan = v;
    nan(2, 1) = std::numeric_limits<float>::quiet_NaN();
    const auto mx = nn::segment_reduce(nan, ids, 3, nn::Reduce::Max, p);
    CHECK(std::isnan(mx(0, 1)));
    CHECK(mx(0, 0) == 5.0f);
    CHECK(mx(2, 1) == 8.0f);
  }
  const Tensor2 g = nn::gather_rows(v, std::vector<std::int32_t>{3, 0, 3});
  CHECK(std::vector<float>(g.values().begin(), g.values().end()) == std::vector<float>{-7, 8, 1, 2, -7, 8});
  CHECK(nn::gather_rows(v, {}).shape_string() == "[0, 2]");

  CHECK_THROWS_WITH(nn::segment_reduce(v, std::vector<std::int32_t>{0, 3, 0, 1}, 3, nn::Reduce::Mean),
                    Catch::Contains("segment_reduce: segment id 3 at row 1 is outside [0, 3) for values [4, 2]"));
  CHECK_THROWS_WITH(nn::segment_reduce(v, std::vector<std::int32_t>{0, 0, -1, 1}, 3, nn::Reduce::Sum, Path::Reference),
                    Catch::Contains("segment id -1 at row 2 is outside [0, 3)"));
  CHECK_THROWS_WITH(nn::segment_reduce(v, std::vector<std::int32_t>{0, 1}, 3, nn::Reduce::Max),
                    Catch::Contains("segment_reduce: 2 segment ids for values [4, 2] (one per row)"));
  CHECK_THROWS_WITH(nn::gather_rows(v, std::vector<std::int32_t>{1, 4}),
                    Catch::Contains("gather_rows: index 4 at position 1 is outside [0, 4) of values [4, 2]"));
}

TEST_CASE("segment reductions: the Eigen path against the fp64 reference") {
  // Sum of k rows: fp32 in row order (gamma_n(k - 1) sum |v|) against fp64 rounded once (eps |sum|). Mean
  // divides both by k (one more rounding each). Max does no arithmetic: identical.
  Rng rng{6};
  const std::size_t n = 500, d = 24, segments = 40;
  const Tensor2 v = random_tensor(rng, n, d, 2.0, 0.5);
  std::vector<std::int32_t> ids(n);
  for (auto& id : ids) id = std::int32_t(rng.next() % 37);  // segments 37..39 stay empty
  std::vector<std::size_t> count(segments, 0);
  std::vector<double> abs_sum(segments * d, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    ++count[std::size_t(ids[i])];
    for (std::size_t c = 0; c < d; ++c) abs_sum[std::size_t(ids[i]) * d + c] += std::fabs(double(v(i, c)));
  }
  for (nn::Reduce op : {nn::Reduce::Sum, nn::Reduce::Mean, nn::Reduce::Max}) {
    const Tensor2 ref = nn::segment_reduce(v, ids, segments, op, Path::Reference);
    const Tensor2 fast = nn::segment_reduce(v, ids, segments, op, Path::Fast);
    Budget budget;
    for (std::size_t s = 0; s < segments; ++s) {
      for (std::size_t c = 0; c < d; ++c) {
        const double k = double(count[s]), r = ref(s, c);
        double bound = 0;
        if (op == nn::Reduce::Sum) bound = gamma_n(std::max(k - 1, 0.0)) * abs_sum[s * d + c] + kEps * std::fabs(r);
        if (op == nn::Reduce::Mean && k > 0) {
          bound = gamma_n(k - 1) * abs_sum[s * d + c] / k + 3 * kEps * std::fabs(r);
        }
        budget.check(fast(s, c), r, bound * (1 + 1e-6));
        if (count[s] == 0) REQUIRE(fast(s, c) == 0.0f);
        if (count[s] == 0) REQUIRE(ref(s, c) == 0.0f);
      }
    }
    INFO("reduce " << int(op) << ": worst |fast - ref| / bound " << budget.worst);
    CHECK(budget.over == 0);
  }
}

// -------------------------------------------------------------------------------------------- LayerNorm

TEST_CASE("layer_norm of a known row, a constant row, and bad arguments") {
  // [1 2 3 4]: mean 2.5, biased variance 1.25, z = (x - 2.5) / sqrt(1.25) = [-1.3416408, -0.4472136, ...].
  const Tensor2 x(2, 4, {1, 2, 3, 4, 7, 7, 7, 7});
  const std::vector<float> gamma = {1, 1, 2, 1}, beta = {0, 0, 0, 0.5f};
  for (Path p : {Path::Reference, Path::Fast}) {
    const Tensor2 y = nn::layer_norm(x, gamma, beta, 0.0f, p);
    CHECK(y(0, 0) == Approx(-1.3416408).epsilon(1e-6));
    CHECK(y(0, 1) == Approx(-0.4472136).epsilon(1e-6));
    CHECK(y(0, 2) == Approx(0.8944272).epsilon(1e-6));
    CHECK(y(0, 3) == Approx(1.8416408).epsilon(1e-6));
    const Tensor2 c = nn::layer_norm(x, gamma, beta, 1e-5f, p);  // a constant row: beta alone
    CHECK(c(1, 0) == 0.0f);
    CHECK(c(1, 3) == 0.5f);
  }
  const std::vector<float> three = {1, 1, 1};
  CHECK_THROWS_WITH(nn::layer_norm(x, three, beta),
                    Catch::Contains("layer_norm: gamma has 3 and beta 4 values, input [2, 4] needs 4 each"));
  CHECK_THROWS_WITH(nn::layer_norm(x, gamma, beta, -1.0f), Catch::Contains("layer_norm: eps -1"));
}

TEST_CASE("layer_norm: the Eigen path against the fp64 reference within its propagated bound") {
  // fp32, per row of d values with A = mean |x|, s = sqrt(var + eps), z = (x - mean) / s, to first order:
  //   mean: a sum and a division: |d mean| <= d eps A
  //   x - mean: |d mean| + eps |x - mean|
  //   var: the mean's error cancels to first order (sum (x - mean) = 0); 2 eps from the rounded differences,
  //        squares, a sum of d terms, a division: relative (d + 3) eps; + eps, sqrt and 1 / s: relative
  //        (d / 2 + 4) eps in 1 / s
  //   z: |dz| <= d eps A / s + (d / 2 + 6) eps |z|; then z gamma (eps |z gamma|) and + beta (eps |y|).
  // The reference (fp64, one rounding): eps |y|.
  Rng rng{7};
  const std::size_t rows = 20, d = 96;
  const Tensor2 x = random_tensor(rng, rows, d, 2.0, 3.0);
  const std::vector<float> gamma = rng.normals(d, 0.5, 1.0), beta = rng.normals(d, 0.2);
  const float eps = 1e-5f;
  const Tensor2 ref = nn::layer_norm(x, gamma, beta, eps, Path::Reference);
  const Tensor2 fast = nn::layer_norm(x, gamma, beta, eps, Path::Fast);
  Budget budget, reference;
  for (std::size_t r = 0; r < rows; ++r) {
    double mean = 0, abs_mean = 0, var = 0;
    for (std::size_t c = 0; c < d; ++c) {
      mean += x(r, c);
      abs_mean += std::fabs(double(x(r, c)));
    }
    mean /= double(d);
    abs_mean /= double(d);
    for (std::size_t c = 0; c < d; ++c) var += std::pow(x(r, c) - mean, 2);
    const double s = std::sqrt(var / double(d) + eps);
    for (std::size_t c = 0; c < d; ++c) {
      const double z = (x(r, c) - mean) / s, g = gamma[c], y = z * g + beta[c];
      reference.check(ref(r, c), y, kEps * std::fabs(y) + 1e-12 * (std::fabs(z * g) + std::fabs(beta[c])));
      const double dz = double(d) * kEps * abs_mean / s + (double(d) / 2 + 6) * kEps * std::fabs(z);
      budget.check(fast(r, c), ref(r, c), 1.05 * (std::fabs(g) * dz + kEps * std::fabs(z * g) + 2 * kEps * std::fabs(y)));
    }
  }
  INFO("worst |fast - ref| / bound " << budget.worst << ", reference " << reference.worst);
  CHECK(budget.over == 0);
  CHECK(reference.over == 0);
}

// ---------------------------------------------------------------------------------------------- softmax

TEST_CASE("softmax: stable for large inputs, causal rows, and the Eigen path within its bound") {
  for (Path p : {Path::Reference, Path::Fast}) {
    Tensor2 t(3, 2, {1000.0f, 1002.0f, 0.0f, -std::numeric_limits<float>::infinity(), 5, 9});
    nn::softmax_rows(t, false, p);
    // exp(1000) would overflow: the max is subtracted first. 1 / (1 + e^2) = 0.1192029.
    CHECK(t(0, 0) == Approx(0.1192029).epsilon(1e-6));
    CHECK(t(0, 1) == Approx(0.8807971).epsilon(1e-6));
    CHECK(t(1, 0) == 1.0f);
    CHECK(t(1, 1) == 0.0f);
    Tensor2 causal(2, 2, {5, 9, 1, 1});
    nn::softmax_rows(causal, true, p);
    CHECK(causal(0, 0) == 1.0f);  // row 0 sees column 0 only
    CHECK(causal(0, 1) == 0.0f);
    CHECK(causal(1, 0) == 0.5f);
    Tensor2 dead(1, 2, -std::numeric_limits<float>::infinity());
    nn::softmax_rows(dead, false, p);
    CHECK(std::isnan(dead(0, 0)));
  }
  // Per entry, n entries in the row, R = max - min of the row: x - max rounds (eps R relative after exp),
  // exp (2 kUlps eps), the sum of n positive terms (gamma_n(n - 1) and its terms' errors), the division:
  // relative (n + 4 kUlps) eps + 2 eps R; the reference rounds once more (eps).
  Rng rng{8};
  const std::size_t rows = 50, n = 77;
  const Tensor2 x = random_tensor(rng, rows, n, 3.0);
  for (bool causal : {false, true}) {
    Tensor2 ref = x, fast = x;
    nn::softmax_rows(ref, causal, Path::Reference);
    nn::softmax_rows(fast, causal, Path::Fast);
    Budget budget;
    for (std::size_t r = 0; r < rows; ++r) {
      const std::size_t m = causal ? std::min(n, r + 1) : n;
      double hi = -1e300, lo = 1e300, sum = 0;
      for (std::size_t c = 0; c < m; ++c) hi = std::max(hi, double(x(r, c))), lo = std::min(lo, double(x(r, c)));
      for (std::size_t c = 0; c < m; ++c) sum += ref(r, c);
      CHECK(sum == Approx(1.0).epsilon(double(m) * kEps));
      for (std::size_t c = 0; c < n; ++c) {
        const double rel = (double(m) + 4 * kUlps + 1) * kEps + 2 * kEps * (hi - lo);
        budget.check(fast(r, c), ref(r, c), rel * ref(r, c) * (1 + 1e-6));
        if (c >= m) REQUIRE(fast(r, c) == 0.0f);
      }
    }
    INFO("causal " << causal << ": worst |fast - ref| / bound " << budget.worst);
    CHECK(budget.over == 0);
  }
}

// -------------------------------------------------------------------------------------------- attention

TEST_CASE("self_attention by hand: one head on two tokens, and a causal mask hiding token 1 from token 0") {
  // Identity projections: Q = K = V = x = I. Scores I / sqrt(2); row 0 weights softmax([1/sqrt 2, 0]) =
  // [e / (e + 1), 1 / (e + 1)] with e = exp(0.7071068) = 2.0281150: [0.6697615, 0.3302385].
  const std::vector<float> eye = {1, 0, 0, 1};
  nn::AttentionWeights w{Matrix::f32(eye, 2, 2, "q"), Matrix::f32(eye, 2, 2, "k"), Matrix::f32(eye, 2, 2, "v"),
                         Matrix::f32(eye, 2, 2, "o"), {}, {}, {}, {}, 1};
  const Tensor2 x(2, 2, eye);
  for (Path p : {Path::Reference, Path::Fast}) {
    const Tensor2 y = nn::self_attention(x, w, false, p);
    CHECK(y(0, 0) == Approx(0.6697615).epsilon(1e-6));
    CHECK(y(0, 1) == Approx(0.3302385).epsilon(1e-6));
    CHECK(y(1, 0) == Approx(0.3302385).epsilon(1e-6));
    CHECK(y(1, 1) == Approx(0.6697615).epsilon(1e-6));
    const Tensor2 c = nn::self_attention(x, w, true, p);
    CHECK(c(0, 0) == 1.0f);  // token 0 sees itself only
    CHECK(c(0, 1) == 0.0f);
    CHECK(c(1, 0) == Approx(0.3302385).epsilon(1e-6));  // token 1 sees both, as without the mask
    // Whatever token 1 holds, token 0's output does not move under the mask.
    const Tensor2 other(2, 2, {1, 0, 5, 3});
    const Tensor2 c2 = nn::self_attention(other, w, true, p);
    CHECK(c2(0, 0) == c(0, 0));
    CHECK(c2(0, 1) == c(0, 1));
    CHECK(nn::self_attention(other, w, false, p)(0, 0) != c(0, 0));
  }
}

TEST_CASE("self_attention: both paths against an fp64 evaluation, within the propagated bound, per storage") {
  // Stages and their first-order error bounds (e: absolute, per element; S: the sum of |terms|):
  //   Q, K, V = x W^T + b: eQ = (gamma_n(d + 31) + 4 eps) S           (as linear, q8_0 block sums included)
  //   s_ij = scale Q_i . K_j: es = scale sum (eQ |K| + |Q| eK) + gamma_n(dh + 2) scale sum |Q K| + 3 eps |s|
  //        (+2: the scale applied inside the GEMM and a split of its depth; 3 eps: scale rounding, storing S)
  //   p = softmax(s): a score error moves p_j by at most p_j 2 max_k es_k, plus the softmax's own rounding
  //        (the softmax test): p_j ((n + 4 kUlps + 1) eps + 2 eps R)
  //   O = p V: eO = sum_j (ep_j |V_j| + p_j eV_j) + gamma_n(t + 1) sum_j p_j |V_j|
  //   y = O Wo^T + bo: ey = sum eO |Wo| + (gamma_n(d + 31) + 4 eps) (sum |O Wo| + |bo|)
  // Checked with a 5% margin for second-order terms.
  Rng rng{9};
  const std::size_t t = 24, d = 64, heads = 4, dh = d / heads;
  const double scale = 1.0 / std::sqrt(double(dh));
  const double g_lin = gamma_n(double(d) + 31) + 4 * kEps;
  std::vector<Stored> mats;
  for (int i = 0; i < 4; ++i) mats.emplace_back(d, d, rng.normals(d * d, 1.0 / std::sqrt(double(d))));
  std::vector<std::vector<float>> bias;
  for (int i = 0; i < 4; ++i) bias.push_back(rng.normals(d, 0.1));
  const Tensor2 x = random_tensor(rng, t, d);
  const std::vector<double> x64 = widen(x);
  for (Storage st : kStorages) {
    const nn::AttentionWeights w{mats[0].matrix(st, "q"), mats[1].matrix(st, "k"), mats[2].matrix(st, "v"),
                                 mats[3].matrix(st, "o"), bias[0], bias[1], bias[2], bias[3], heads};
    const Dense q = dense(x64, t, mats[0].exact(st), d, d, bias[0]);
    const Dense k = dense(x64, t, mats[1].exact(st), d, d, bias[1]);
    const Dense v = dense(x64, t, mats[2].exact(st), d, d, bias[2]);
    const std::vector<double> wo = mats[3].exact(st);
    for (bool causal : {false, true}) {
      std::vector<double> o(t * d, 0.0), eo(t * d, 0.0);
      for (std::size_t h = 0; h < heads; ++h) {
        for (std::size_t i = 0; i < t; ++i) {
          const std::size_t n = causal ? i + 1 : t;
          std::vector<double> s(n), es(n), p(n);
          for (std::size_t j = 0; j < n; ++j) {
            double dot = 0, abs_dot = 0, prop = 0;
            for (std::size_t c = h * dh; c < (h + 1) * dh; ++c) {
              const double qi = q.y[i * d + c], kj = k.y[j * d + c];
              const double eq = g_lin * q.s[i * d + c], ek = g_lin * k.s[j * d + c];
              dot += qi * kj;
              abs_dot += std::fabs(qi * kj);
              prop += eq * std::fabs(kj) + std::fabs(qi) * ek + eq * ek;
            }
            s[j] = dot * scale;
            es[j] = scale * prop + gamma_n(double(dh) + 2) * scale * abs_dot + 3 * kEps * std::fabs(s[j]);
          }
          const double hi = *std::max_element(s.begin(), s.end()), lo = *std::min_element(s.begin(), s.end());
          const double es_max = *std::max_element(es.begin(), es.end());
          double sum = 0;
          for (std::size_t j = 0; j < n; ++j) sum += p[j] = std::exp(s[j] - hi);
          for (auto& pj : p) pj /= sum;
          for (std::size_t c = h * dh; c < (h + 1) * dh; ++c) {
            double oc = 0, e = 0, mag = 0;
            for (std::size_t j = 0; j < n; ++j) {
              const double ep = p[j] * (2 * es_max + (double(n) + 4 * kUlps + 1) * kEps + 2 * kEps * (hi - lo));
              const double vj = v.y[j * d + c];
              oc += p[j] * vj;
              e += ep * std::fabs(vj) + p[j] * g_lin * v.s[j * d + c];
              mag += p[j] * std::fabs(vj);
            }
            o[i * d + c] = oc;
            eo[i * d + c] = e + gamma_n(double(n) + 1) * mag;
          }
        }
      }
      const Dense y = dense(o, t, wo, d, d, bias[3]);
      for (Path p : {Path::Reference, Path::Fast}) {
        const Tensor2 got = nn::self_attention(x, w, causal, p);
        Budget budget;
        double err2 = 0, y2 = 0;
        for (std::size_t i = 0; i < t; ++i) {
          for (std::size_t r = 0; r < d; ++r) {
            double prop = 0;
            for (std::size_t c = 0; c < d; ++c) prop += eo[i * d + c] * std::fabs(wo[r * d + c]);
            const double bound = prop + g_lin * y.s[i * d + r];
            budget.check(got(i, r), y.y[i * d + r], 1.05 * bound);
            err2 += std::pow(got(i, r) - y.y[i * d + r], 2);
            y2 += y.y[i * d + r] * y.y[i * d + r];
          }
        }
        INFO(nn::storage_name(st) << (causal ? " causal" : "") << (p == Path::Fast ? " eigen" : " reference")
                                  << ": worst |err| / bound " << budget.worst << ", relative RMS "
                                  << std::sqrt(err2 / y2));
        CHECK(budget.over == 0);
        CHECK(std::sqrt(err2 / y2) < 1e-5);  // expected ~1e-7: independent roundings
      }
    }
  }
}

// --------------------------------------------------------------------------------------------- bad sizes

TEST_CASE("size mismatches throw perfcard::Error naming both shapes") {
  const Tensor2 x(2, 3, 1.0f);
  const std::vector<float> w(20, 1.0f), b(3, 0.0f);
  CHECK_THROWS_WITH(nn::linear(x, Matrix::f32(w, 4, 5, "w")),
                    Catch::Contains("linear: input [2, 3] does not match weight 'w' [4, 5] f32 (input columns must "
                                    "equal weight columns)"));
  CHECK_THROWS_WITH(nn::linear(x, Matrix::f32({w.data(), 12}, 4, 3, "w"), b, Path::Reference),
                    Catch::Contains("linear: bias has 3 values, weight 'w' [4, 3] f32 has 4 rows"));
  const Tensor2 x4(2, 4, 1.0f);
  const std::vector<float> sq(16, 0.1f), wide(32, 0.1f);
  nn::AttentionWeights aw{Matrix::f32(sq, 4, 4, "q"), Matrix::f32(sq, 4, 4, "k"), Matrix::f32(sq, 4, 4, "v"),
                          Matrix::f32(sq, 4, 4, "o"), {}, {}, {}, {}, 3};
  CHECK_THROWS_WITH(nn::self_attention(x4, aw), Catch::Contains("self_attention: input [2, 4]: its 4 columns do not split into 3 heads"));
  aw.heads = 2;
  CHECK_THROWS_WITH(nn::self_attention(x, aw), Catch::Contains("self_attention: input [2, 3]: its 3 columns do not split into 2 heads"));
  aw.wk = Matrix::f32(wide, 4, 8, "k");
  CHECK_THROWS_WITH(nn::self_attention(x4, aw),
                    Catch::Contains("self_attention: input [2, 4] needs Wk of shape [4, 4], got weight 'k' [4, 8] f32"));
  aw.wk = Matrix::f32(sq, 4, 4, "k");
  aw.bv = b;
  CHECK_THROWS_WITH(nn::self_attention(x4, aw),
                    Catch::Contains("self_attention: input [2, 4] needs bv of 4 values (or none), got 3"));
  aw.bv = {};
  CHECK(nn::self_attention(x4, aw).shape_string() == "[2, 4]");
  // Empty inputs are not errors.
  CHECK(nn::linear(Tensor2(0, 3), Matrix::f32({w.data(), 12}, 4, 3)).shape_string() == "[0, 4]");
  CHECK(nn::linear(Tensor2(2, 0), Matrix::f32({}, 4, 0), std::vector<float>{1, 2, 3, 4})(1, 3) == 4.0f);
}
