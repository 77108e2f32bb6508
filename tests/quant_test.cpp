// fp16 / bf16 conversion and the q8_0 / q4_0 reference kernels (core/src/quant.cpp), with an explicit
// error budget against fp32.
//
// Error budget of q8_0 (derived in docs/weights-format.md, "Quantization"): per block of 32 weights with
// largest magnitude amax, d = fp16(amax / 127) is within a relative 2^-11 of amax / 127, so |w / d| stays
// below 127.07 (no clamping) and every dequantized weight d * q is within d / 2 of w, i.e. within
// amax * (1 + 2^-11) / 254 ~ 0.394% of its block's largest magnitude. A dot product with x therefore errs
// by at most sum_blocks (d_b / 2) * sum_{i in b} |x_i|, plus fp32 rounding of the 32-term block sums
// (at most 33 * 2^-24 relative to sum |d q x|). For gaussian weights the weight errors are close to
// uniform on [-d/2, d/2] and independent, so the relative RMS error of W x is sqrt(mean(d^2) / 12) / rms(w):
// about 0.57% for q8_0 (RMS amax of 32 standard normals ~ 2.5) and 10% for q4_0 (step amax / 7). The
// budgets tested: the hard bound per output, and 0.75% (q8_0) / 12% (q4_0) relative RMS.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "perfcard/error.h"
#include "perfcard/quant.h"
#include "test_util.h"

using namespace perfcard::quant;

namespace {

using perfcard::test::Rng;

std::vector<float> normals(Rng& r, std::size_t n, double scale = 1.0) { return r.normals(n, scale); }

bool is_nan16(std::uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0; }

}  // namespace

TEST_CASE("fp16 -> fp32 -> fp16 is the identity on every fp16 value") {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const auto h16 = std::uint16_t(h);
    const float f = fp16_to_fp32(h16);
    if (is_nan16(h16)) {
      REQUIRE(std::isnan(f));
      REQUIRE(is_nan16(fp32_to_fp16(f)));
      if (h16 & 0x200) REQUIRE(fp32_to_fp16(f) == h16);  // quiet NaNs keep their payload
      continue;
    }
    REQUIRE(fp32_to_fp16(f) == h16);
  }
  CHECK(fp16_to_fp32(0x3c00) == 1.0f);
  CHECK(fp16_to_fp32(0x7bff) == 65504.0f);
  CHECK(fp16_to_fp32(0x0001) == 0x1p-24f);
  CHECK(fp16_to_fp32(0x0400) == 0x1p-14f);
  CHECK(fp16_to_fp32(0xfc00) == -std::numeric_limits<float>::infinity());
  CHECK(std::signbit(fp16_to_fp32(0x8000)));
}

TEST_CASE("fp32 -> fp16 rounds to nearest, ties to even, in every binade and between subnormals") {
  // For each pair of neighbours (h, h+1) the midpoint is exact in fp32: it must go to the even one, and
  // the fp32 values just below / above it to h / h+1. 0x7bff's upper neighbour is 65536 (-> infinity).
  for (std::uint32_t h = 0; h < 0x7c00; ++h) {
    const float lo = fp16_to_fp32(std::uint16_t(h));
    const float hi = h == 0x7bff ? 65536.0f : fp16_to_fp32(std::uint16_t(h + 1));
    const float mid = (lo + hi) / 2;
    const auto even = std::uint16_t(h % 2 == 0 ? h : h + 1);
    REQUIRE(fp32_to_fp16(mid) == even);
    REQUIRE(fp32_to_fp16(-mid) == (even | 0x8000));
    REQUIRE(fp32_to_fp16(std::nextafter(mid, 0.0f)) == h);
    REQUIRE(fp32_to_fp16(std::nextafter(mid, 1e30f)) == h + 1);
  }
  CHECK(fp32_to_fp16(65519.0f) == 0x7bff);
  CHECK(fp32_to_fp16(65520.0f) == 0x7c00);
  CHECK(fp32_to_fp16(1e30f) == 0x7c00);
  CHECK(fp32_to_fp16(-std::numeric_limits<float>::infinity()) == 0xfc00);
  CHECK(fp32_to_fp16(1e-30f) == 0x0000);
  CHECK(fp32_to_fp16(-1e-30f) == 0x8000);
  CHECK(fp32_to_fp16(std::numeric_limits<float>::denorm_min()) == 0x0000);
  CHECK(is_nan16(fp32_to_fp16(std::numeric_limits<float>::quiet_NaN())));
  CHECK(is_nan16(fp32_to_fp16(std::bit_cast<float>(0x7f800001u))));  // signalling NaN, low payload only
}

#if defined(__FLT16_MAX__) && !defined(__EMSCRIPTEN__)
TEST_CASE("fp32 -> fp16 agrees with the compiler's _Float16 conversion on a sweep of fp32 values") {
  for (std::uint64_t b = 0; b <= 0xffffffffull; b += 4093) {
    const float f = std::bit_cast<float>(std::uint32_t(b));
    const std::uint16_t mine = fp32_to_fp16(f);
    const std::uint16_t ref = std::bit_cast<std::uint16_t>(static_cast<_Float16>(f));
    if (std::isnan(f)) {
      REQUIRE(is_nan16(mine));
    } else {
      REQUIRE(mine == ref);
    }
  }
}
#endif

TEST_CASE("bf16 round trip and rounding") {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const float f = bf16_to_fp32(std::uint16_t(h));
    if (std::isnan(f)) {
      REQUIRE(std::isnan(bf16_to_fp32(fp32_to_bf16(f))));
    } else {
      REQUIRE(fp32_to_bf16(f) == h);
    }
  }
  CHECK(fp32_to_bf16(1.0f + 0x1p-8f) == 0x3f80);      // tie -> even (1.0)
  CHECK(fp32_to_bf16(1.0f + 3 * 0x1p-8f) == 0x3f82);  // tie -> even (1 + 2^-6)
  CHECK(fp32_to_bf16(1.0f + 0x1p-8f + 0x1p-20f) == 0x3f81);
  CHECK(fp32_to_bf16(std::numeric_limits<float>::max()) == 0x7f80);  // rounds up to infinity
}

TEST_CASE("q8_0 and q4_0 blocks: layout and a worked example") {
  static_assert(sizeof(BlockQ8_0) == 34 && sizeof(BlockQ4_0) == 18);
  std::vector<float> x(32);
  for (int i = 0; i < 32; ++i) x[std::size_t(i)] = float(i - 16) * 0.5f;  // -8 .. 7.5
  BlockQ8_0 b8{};
  quantize_row_q8_0(x, {&b8, 1});
  // amax 8 -> d = fp16(8 / 127 = 0.0629921) = 0x2c08 (0.0629883), q = rint(x / d).
  CHECK(b8.scale_fp16[0] == 0x08);
  CHECK(b8.scale_fp16[1] == 0x2c);
  CHECK(b8.scale() == fp16_to_fp32(0x2c08));
  CHECK(b8.q[0] == -127);
  CHECK(b8.q[16] == 0);
  CHECK(b8.q[17] == 8);     // 0.5 / 0.0629883 = 7.94
  CHECK(b8.q[31] == 119);   // 7.5 / 0.0629883 = 119.07
  std::vector<float> back(32);
  dequantize_row_q8_0({&b8, 1}, back);
  for (int i = 0; i < 32; ++i) CHECK(std::fabs(back[std::size_t(i)] - x[std::size_t(i)]) <= b8.scale() / 2);

  BlockQ4_0 b4{};
  quantize_row_q4_0(x, {&b4, 1});
  const float d4 = b4.scale();
  CHECK(d4 == fp16_to_fp32(fp32_to_fp16(8.0f / 7.0f)));
  CHECK(b4.value(0) == -7);
  CHECK(b4.value(31) == 7);  // 7.5 / 1.1426 = 6.56
  CHECK((b4.q[0] & 0xf) == 1);  // value 0 (-7) biased by 8, low nibble
  CHECK((b4.q[0] >> 4) == 1);   // value 1 (-7.5 / 1.1426 = -6.56 -> -7), high nibble
  dequantize_row_q4_0({&b4, 1}, back);
  for (int i = 0; i < 32; ++i) CHECK(std::fabs(back[std::size_t(i)] - x[std::size_t(i)]) <= d4 / 2);
}

TEST_CASE("quantization edge cases: zero blocks, ties, bad input") {
  std::vector<float> zeros(64, 0.0f);
  std::vector<BlockQ8_0> b(2);
  quantize_row_q8_0(zeros, b);
  CHECK(b[0].scale_bits() == 0);
  for (auto q : b[1].q) CHECK(q == 0);
  CHECK(dot_q8_0_f32(b, zeros) == 0.0f);

  // amax 127 -> d = 1 exactly; 2.5 and 3.5 are ties: rint gives the even 2 and 4.
  std::vector<float> ties(32, 0.0f);
  ties[0] = 127.0f;
  ties[1] = 2.5f;
  ties[2] = 3.5f;
  ties[3] = -2.5f;
  quantize_row_q8_0(ties, {b.data(), 1});
  CHECK(b[0].scale() == 1.0f);
  CHECK(b[0].q[1] == 2);
  CHECK(b[0].q[2] == 4);
  CHECK(b[0].q[3] == -2);

  std::vector<float> bad(32, 1.0f);
  bad[5] = std::numeric_limits<float>::quiet_NaN();
  try {
    quantize_row_q8_0(bad, {b.data(), 1});
    FAIL("no error");
  } catch (const perfcard::Error& e) {
    CHECK(e.message() == "q8_0 quantize: value 5 is not finite");
  }
  std::vector<float> huge(32, 1e7f);
  try {
    quantize_row_q8_0(huge, {b.data(), 1});
    FAIL("no error");
  } catch (const perfcard::Error& e) {
    CHECK(e.message() == "q8_0 quantize: block 0 has |x| up to 1e+07, too large for an fp16 scale");
  }
  std::vector<float> odd(33, 1.0f);
  CHECK_THROWS_WITH(quantize_row_q8_0(odd, b), "q8_0 quantize: row length 33 is not a multiple of 32");
  CHECK_THROWS_WITH(quantize_row_q8_0(zeros, {b.data(), 1}), "q8_0 quantize: 64 values need 2 blocks, got 1");
  std::vector<float> y(3);
  CHECK_THROWS_WITH(matvec_q8_0_f32(b, 2, 32, zeros, y),
                    "q8_0 matvec: sizes do not match [2, 32] (blocks 2, x 64, y 3)");
  CHECK_THROWS_WITH(matvec_q8_0_f32(b, 3, 32, zeros, y),
                    "q8_0 matvec: [3, 32] needs more than the 2 blocks given");
}

TEST_CASE("q8_0 matvec stays within its derived error budget against fp32") {
  Rng rng{42};
  const std::size_t rows = 256, cols = 1024, per_row = cols / kBlockSize;
  const std::vector<float> w = normals(rng, rows * cols);
  std::vector<float> x = normals(rng, cols);
  x[7] = 25.0f;  // an outlier input
  std::vector<BlockQ8_0> wq(rows * per_row);
  for (std::size_t r = 0; r < rows; ++r) {
    quantize_row_q8_0(std::span(w).subspan(r * cols, cols), std::span(wq).subspan(r * per_row, per_row));
  }
  std::vector<float> y(rows);
  matvec_q8_0_f32(wq, rows, cols, x, y);

  double err2 = 0, ref2 = 0, predicted2 = 0, worst_ratio = 0, max_elem_rel = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    double ref = 0, bound = 0;
    for (std::size_t b = 0; b < per_row; ++b) {
      const BlockQ8_0& blk = wq[r * per_row + b];
      const double d = blk.scale();
      double amax = 0, sum_abs_x = 0, sum_abs_qx = 0;
      for (std::size_t i = 0; i < kBlockSize; ++i) amax = std::max(amax, std::fabs(double(w[r * cols + b * kBlockSize + i])));
      for (std::size_t i = 0; i < kBlockSize; ++i) {
        const std::size_t c = b * kBlockSize + i;
        const double wi = w[r * cols + c];
        ref += wi * double(x[c]);
        sum_abs_x += std::fabs(double(x[c]));
        sum_abs_qx += std::fabs(double(blk.q[i]) * double(x[c]));
        predicted2 += double(x[c]) * double(x[c]) * d * d / 12.0;
        // Element budget: within d / 2, and d / 2 within amax * (1 + 2^-11) / 254.
        const double e = std::fabs(d * double(blk.q[i]) - wi);
        REQUIRE(e <= d / 2 * (1 + 0x1p-16));
        REQUIRE(e <= amax * (1 + 0x1p-11) / 254 * (1 + 0x1p-16));
        if (amax > 0) max_elem_rel = std::max(max_elem_rel, e / amax);
      }
      bound += d / 2 * (1 + 0x1p-16) * sum_abs_x + 33 * 0x1p-24 * d * sum_abs_qx;
    }
    bound += std::fabs(double(y[r])) * 0x1p-24;
    const double err = std::fabs(double(y[r]) - ref);
    REQUIRE(err <= bound);
    worst_ratio = std::max(worst_ratio, err / bound);
    err2 += err * err;
    ref2 += ref * ref;
  }
  const double rel = std::sqrt(err2 / ref2);
  const double predicted = std::sqrt(predicted2 / ref2);
  INFO("q8_0 matvec relative RMS error " << rel << " (predicted " << predicted << "), worst |err| / bound "
                                         << worst_ratio << ", max element error / amax " << max_elem_rel);
  CHECK(max_elem_rel <= 1.0 / 254 * (1 + 0x1p-11) * (1 + 0x1p-16));
  CHECK(rel < 0.0075);             // the stated budget: 0.75% relative RMS (expected ~0.5%)
  CHECK(rel == Approx(predicted).epsilon(0.25));
  CHECK(worst_ratio < 0.5);        // the hard bound is a worst case: random errors cancel
  // The same through the dot product API.
  CHECK(dot_q8_0_f32(std::span(wq).subspan(0, per_row), x) == y[0]);
}

TEST_CASE("q4_0 matvec stays within its derived error budget against fp32") {
  Rng rng{7};
  const std::size_t rows = 128, cols = 512, per_row = cols / kBlockSize;
  const std::vector<float> w = normals(rng, rows * cols, 0.02);
  const std::vector<float> x = normals(rng, cols);
  std::vector<BlockQ4_0> wq(rows * per_row);
  for (std::size_t r = 0; r < rows; ++r) {
    quantize_row_q4_0(std::span(w).subspan(r * cols, cols), std::span(wq).subspan(r * per_row, per_row));
  }
  std::vector<float> y(rows);
  matvec_q4_0_f32(wq, rows, cols, x, y);
  double err2 = 0, ref2 = 0, predicted2 = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    double ref = 0, bound = 0;
    for (std::size_t b = 0; b < per_row; ++b) {
      const BlockQ4_0& blk = wq[r * per_row + b];
      const double d = blk.scale();
      double sum_abs_x = 0, sum_abs_qx = 0;
      for (std::size_t i = 0; i < kBlockSize; ++i) {
        const std::size_t c = b * kBlockSize + i;
        ref += double(w[r * cols + c]) * double(x[c]);
        sum_abs_x += std::fabs(double(x[c]));
        sum_abs_qx += std::fabs(double(blk.value(i)) * double(x[c]));
        predicted2 += double(x[c]) * double(x[c]) * d * d / 12.0;
        REQUIRE(std::fabs(d * blk.value(i) - double(w[r * cols + c])) <= d / 2 * (1 + 0x1p-16));
      }
      bound += d / 2 * (1 + 0x1p-16) * sum_abs_x + 33 * 0x1p-24 * d * sum_abs_qx;
    }
    bound += std::fabs(double(y[r])) * 0x1p-24;
    const double err = std::fabs(double(y[r]) - ref);
    REQUIRE(err <= bound);
    err2 += err * err;
    ref2 += ref * ref;
  }
  const double rel = std::sqrt(err2 / ref2), predicted = std::sqrt(predicted2 / ref2);
  INFO("q4_0 matvec relative RMS error " << rel << " (predicted " << predicted << ")");
  CHECK(rel < 0.12);  // the stated budget: 12% relative RMS (expected ~9%)
  CHECK(rel == Approx(predicted).epsilon(0.25));
}
