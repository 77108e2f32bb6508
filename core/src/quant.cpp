#include "perfcard/quant.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <string>

#include "perfcard/error.h"

namespace perfcard::quant {

std::uint16_t fp32_to_fp16(float x) {
  const std::uint32_t f = std::bit_cast<std::uint32_t>(x);
  const auto sign = std::uint16_t((f >> 16) & 0x8000u);
  std::uint32_t a = f & 0x7fffffffu;
  if (a > 0x7f800000u) {  // NaN: quiet, keep the top payload bits
    return std::uint16_t(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  }
  if (a >= 0x477ff000u) return std::uint16_t(sign | 0x7c00u);  // >= 65520 (and inf): rounds to infinity
  if (a >= 0x38800000u) {                                       // >= 2^-14: a normal fp16
    // Round the 23-bit mantissa to 10 bits, ties to even; a carry moves into the exponent correctly.
    a += 0xfffu + ((a >> 13) & 1u);
    return std::uint16_t(sign | ((a - 0x38000000u) >> 13));
  }
  if (a <= 0x33000000u) return sign;  // <= 2^-25 (half the smallest subnormal): ties to even give 0
  // fp16 subnormal: the value in units of 2^-24 is m * 2^(e - 126), with e in [102, 112].
  const std::uint32_t e = a >> 23;
  const std::uint32_t m = (a & 0x7fffffu) | 0x800000u;
  const std::uint32_t shift = 126 - e;  // 14 .. 24
  std::uint32_t h = m >> shift;
  const std::uint32_t rem = m & ((1u << shift) - 1u);
  const std::uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (h & 1u))) ++h;  // may carry to 0x400, the smallest normal: correct
  return std::uint16_t(sign | h);
}

float fp16_to_fp32(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  const std::uint32_t e = (h >> 10) & 0x1fu;
  const std::uint32_t m = h & 0x3ffu;
  if (e == 0) {
    const float v = float(m) * 0x1p-24f;  // exact: m < 2^10
    return sign ? -v : v;
  }
  if (e == 31) return std::bit_cast<float>(sign | 0x7f800000u | (m << 13));
  return std::bit_cast<float>(sign | ((e + 112u) << 23) | (m << 13));
}

std::uint16_t fp32_to_bf16(float x) {
  const std::uint32_t f = std::bit_cast<std::uint32_t>(x);
  if ((f & 0x7fffffffu) > 0x7f800000u) return std::uint16_t((f >> 16) | 0x40u);  // NaN stays (quiet) NaN
  return std::uint16_t((f + 0x7fffu + ((f >> 16) & 1u)) >> 16);
}

float bf16_to_fp32(std::uint16_t h) { return std::bit_cast<float>(std::uint32_t(h) << 16); }

namespace {

void check_row(std::size_t values, std::size_t blocks, const char* what) {
  if (values % kBlockSize != 0) {
    throw data_error(std::string(what) + ": row length " + std::to_string(values) + " is not a multiple of 32");
  }
  if (blocks != values / kBlockSize) {
    throw data_error(std::string(what) + ": " + std::to_string(values) + " values need " +
                std::to_string(values / kBlockSize) + " blocks, got " + std::to_string(blocks));
  }
}

// Shared by both formats: the fp16 scale for one block and the quantized integers in [-qmax, qmax].
std::uint16_t quantize_block(const float* x, int qmax, const char* what, std::size_t block, int* q) {
  float amax = 0.0f;
  for (std::size_t i = 0; i < kBlockSize; ++i) {
    if (!std::isfinite(x[i])) {
      throw data_error(std::string(what) + ": value " + std::to_string(block * kBlockSize + i) +
                  " is not finite");
    }
    amax = std::max(amax, std::fabs(x[i]));
  }
  const std::uint16_t d16 = fp32_to_fp16(amax / float(qmax));
  if ((d16 & 0x7c00u) == 0x7c00u) {
    char shown[32];
    std::snprintf(shown, sizeof shown, "%g", double(amax));
    throw data_error(std::string(what) + ": block " + std::to_string(block) + " has |x| up to " + shown +
                ", too large for an fp16 scale");
  }
  const float d = fp16_to_fp32(d16);
  for (std::size_t i = 0; i < kBlockSize; ++i) {
    if (d == 0.0f) {
      q[i] = 0;
      continue;
    }
    const float r = std::nearbyint(x[i] / d);  // default rounding mode: nearest, ties to even
    q[i] = int(std::clamp(r, float(-qmax), float(qmax)));
  }
  return d16;
}

}  // namespace

void quantize_row_q8_0(std::span<const float> x, std::span<BlockQ8_0> out) {
  check_row(x.size(), out.size(), "q8_0 quantize");
  int q[kBlockSize];
  for (std::size_t b = 0; b < out.size(); ++b) {
    out[b].set_scale_bits(quantize_block(x.data() + b * kBlockSize, 127, "q8_0 quantize", b, q));
    for (std::size_t i = 0; i < kBlockSize; ++i) out[b].q[i] = std::int8_t(q[i]);
  }
}

void dequantize_row_q8_0(std::span<const BlockQ8_0> blocks, std::span<float> out) {
  check_row(out.size(), blocks.size(), "q8_0 dequantize");
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const float d = blocks[b].scale();
    for (std::size_t i = 0; i < kBlockSize; ++i) out[b * kBlockSize + i] = d * float(blocks[b].q[i]);
  }
}

void quantize_row_q4_0(std::span<const float> x, std::span<BlockQ4_0> out) {
  check_row(x.size(), out.size(), "q4_0 quantize");
  int q[kBlockSize];
  for (std::size_t b = 0; b < out.size(); ++b) {
    out[b].set_scale_bits(quantize_block(x.data() + b * kBlockSize, 7, "q4_0 quantize", b, q));
    for (std::size_t j = 0; j < kBlockSize / 2; ++j) {
      out[b].q[j] = std::uint8_t((q[2 * j] + 8) | ((q[2 * j + 1] + 8) << 4));
    }
  }
}

void dequantize_row_q4_0(std::span<const BlockQ4_0> blocks, std::span<float> out) {
  check_row(out.size(), blocks.size(), "q4_0 dequantize");
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const float d = blocks[b].scale();
    for (std::size_t i = 0; i < kBlockSize; ++i) out[b * kBlockSize + i] = d * float(blocks[b].value(i));
  }
}

float dot_q8_0_f32(std::span<const BlockQ8_0> w, std::span<const float> x) {
  check_row(x.size(), w.size(), "q8_0 dot");
  double acc = 0.0;
  for (std::size_t b = 0; b < w.size(); ++b) {
    const float* xb = x.data() + b * kBlockSize;
    float s = 0.0f;
    for (std::size_t i = 0; i < kBlockSize; ++i) s += float(w[b].q[i]) * xb[i];
    acc += double(w[b].scale()) * double(s);
  }
  return float(acc);
}

float dot_q4_0_f32(std::span<const BlockQ4_0> w, std::span<const float> x) {
  check_row(x.size(), w.size(), "q4_0 dot");
  double acc = 0.0;
  for (std::size_t b = 0; b < w.size(); ++b) {
    const float* xb = x.data() + b * kBlockSize;
    float s = 0.0f;
    for (std::size_t i = 0; i < kBlockSize; ++i) s += float(w[b].value(i)) * xb[i];
    acc += double(w[b].scale()) * double(s);
  }
  return float(acc);
}

namespace {

template <class Block, class Dot>
void matvec(std::span<const Block> w, std::size_t rows, std::size_t cols, std::span<const float> x,
            std::span<float> y, const char* what, Dot dot) {
  if (cols % kBlockSize != 0) {
    throw data_error(std::string(what) + ": " + std::to_string(cols) + " columns is not a multiple of 32");
  }
  const std::size_t per_row = cols / kBlockSize;
  if (rows != 0 && per_row > w.size() / rows) {
    throw data_error(std::string(what) + ": [" + std::to_string(rows) + ", " + std::to_string(cols) + "] needs " +
                "more than the " + std::to_string(w.size()) + " blocks given");
  }
  if (w.size() != rows * per_row || x.size() != cols || y.size() != rows) {
    throw data_error(std::string(what) + ": sizes do not match [" + std::to_string(rows) + ", " +
                std::to_string(cols) + "] (blocks " + std::to_string(w.size()) + ", x " +
                std::to_string(x.size()) + ", y " + std::to_string(y.size()) + ")");
  }
  for (std::size_t r = 0; r < rows; ++r) y[r] = dot(w.subspan(r * per_row, per_row), x);
}

}  // namespace

void matvec_q8_0_f32(std::span<const BlockQ8_0> w, std::size_t rows, std::size_t cols, std::span<const float> x,
                     std::span<float> y) {
  matvec(w, rows, cols, x, y, "q8_0 matvec", dot_q8_0_f32);
}

void matvec_q4_0_f32(std::span<const BlockQ4_0> w, std::size_t rows, std::size_t cols, std::span<const float> x,
                     std::span<float> y) {
  matvec(w, rows, cols, x, y, "q4_0 matvec", dot_q4_0_f32);
}

}  // namespace perfcard::quant
