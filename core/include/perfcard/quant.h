// Quantized block types of the learned predictors and their scalar reference kernels.
//
// The blocks are the on-disk layout of the q8_0 / q4_0 tensors of a weights file (docs/weights-format.md):
// every member is a byte or an array of bytes, so the structs have no padding, alignment 1 and the exact
// sizes asserted below on every compiler (no packing pragmas), and a block can be read in place at any
// address of a loaded file. The fp16 scale is stored as two little-endian bytes.
//
// Rounding is specified, not left to the compiler, so that scripts/weights/pcwt.py produces bit-identical
// blocks: fp32 -> fp16 rounds to nearest, ties to even; the quantized value is rint(x / scale) (ties to
// even) computed in fp32 with the fp16-rounded scale.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

namespace perfcard::quant {

// Values per quantized block (q8_0 and q4_0).
inline constexpr std::size_t kBlockSize = 32;

// IEEE 754 binary16 <-> binary32. fp32_to_fp16 rounds to nearest, ties to even; values from 65520 up
// become infinity; fp32 subnormals and tiny values round to fp16 subnormals or zero; NaN stays NaN (quiet,
// top payload bits kept). fp16_to_fp32 is exact.
std::uint16_t fp32_to_fp16(float x);
float fp16_to_fp32(std::uint16_t h);
// bfloat16 (the top half of a binary32): rounds to nearest, ties to even; NaN stays NaN.
std::uint16_t fp32_to_bf16(float x);
float bf16_to_fp32(std::uint16_t h);

// 32 values as int8 in [-127, 127] times one fp16 scale d: x[i] ~ d * q[i]. 34 bytes.
struct BlockQ8_0 {
  std::uint8_t scale_fp16[2];  // little-endian binary16
  std::int8_t q[kBlockSize];

  std::uint16_t scale_bits() const { return std::uint16_t(scale_fp16[0] | (scale_fp16[1] << 8)); }
  float scale() const { return fp16_to_fp32(scale_bits()); }
  void set_scale_bits(std::uint16_t h) {
    scale_fp16[0] = std::uint8_t(h & 0xff);
    scale_fp16[1] = std::uint8_t(h >> 8);
  }
};
static_assert(sizeof(BlockQ8_0) == 34 && alignof(BlockQ8_0) == 1);
static_assert(std::is_trivially_copyable_v<BlockQ8_0> && std::is_standard_layout_v<BlockQ8_0>);

// 32 values as 4-bit integers in [-8, 7] (stored biased by +8) times one fp16 scale d. Byte j holds value
// 2j in its low nibble and value 2j+1 in its high nibble. The quantizer uses [-7, 7] (symmetric); readers
// accept -8. 18 bytes.
struct BlockQ4_0 {
  std::uint8_t scale_fp16[2];
  std::uint8_t q[kBlockSize / 2];

  std::uint16_t scale_bits() const { return std::uint16_t(scale_fp16[0] | (scale_fp16[1] << 8)); }
  float scale() const { return fp16_to_fp32(scale_bits()); }
  void set_scale_bits(std::uint16_t h) {
    scale_fp16[0] = std::uint8_t(h & 0xff);
    scale_fp16[1] = std::uint8_t(h >> 8);
  }
  int value(std::size_t i) const { return int((q[i / 2] >> (4 * (i % 2))) & 0xf) - 8; }
};
static_assert(sizeof(BlockQ4_0) == 18 && alignof(BlockQ4_0) == 1);
static_assert(std::is_trivially_copyable_v<BlockQ4_0> && std::is_standard_layout_v<BlockQ4_0>);

// Quantize a row: x.size() must be a multiple of 32 and out.size() == x.size() / 32. Per block:
// amax = max |x|, d = fp16(amax / qmax) with qmax 127 (q8_0) or 7 (q4_0); q = clamp(rint(x / d)).
// A block whose d rounds to 0 is all zeros. Throws perfcard::Error on a non-finite input or when the
// scale overflows fp16 (amax above about 8.3e6 for q8_0, 4.6e5 for q4_0), and on size mismatches.
void quantize_row_q8_0(std::span<const float> x, std::span<BlockQ8_0> out);
void dequantize_row_q8_0(std::span<const BlockQ8_0> blocks, std::span<float> out);
void quantize_row_q4_0(std::span<const float> x, std::span<BlockQ4_0> out);
void dequantize_row_q4_0(std::span<const BlockQ4_0> blocks, std::span<float> out);

// Reference dot product of one quantized row with an fp32 vector: per block the 32 products q[i] * x[i]
// are summed in fp32 in index order and scaled by d; the block results are accumulated in fp64 and the
// total is rounded to fp32. w.size() * 32 must equal x.size().
float dot_q8_0_f32(std::span<const BlockQ8_0> w, std::span<const float> x);
float dot_q4_0_f32(std::span<const BlockQ4_0> w, std::span<const float> x);

// y = W x for a row-major [rows, cols] quantized matrix (cols a multiple of 32, rows * cols / 32 blocks),
// each output the dot product above.
void matvec_q8_0_f32(std::span<const BlockQ8_0> w, std::size_t rows, std::size_t cols, std::span<const float> x,
                     std::span<float> y);
void matvec_q4_0_f32(std::span<const BlockQ4_0> w, std::size_t rows, std::size_t cols, std::span<const float> x,
                     std::span<float> y);

}  // namespace perfcard::quant
