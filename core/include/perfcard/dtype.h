// ONNX tensor element types (TensorProto.DataType numbering) and their storage sizes.
#pragma once

#include <cstdint>
#include <string_view>

namespace perfcard {

enum class DType : std::int32_t {
  Undefined = 0, Float = 1, UInt8 = 2, Int8 = 3, UInt16 = 4, Int16 = 5, Int32 = 6, Int64 = 7,
  String = 8, Bool = 9, Float16 = 10, Double = 11, UInt32 = 12, UInt64 = 13, Complex64 = 14,
  Complex128 = 15, BFloat16 = 16, Float8E4M3FN = 17, Float8E4M3FNUZ = 18, Float8E5M2 = 19,
  Float8E5M2FNUZ = 20, UInt4 = 21, Int4 = 22,
};

bool dtype_is_known(std::int64_t code);
std::string_view dtype_name(DType t);
// Storage size in bits (4-bit types are packed). Strings count as pointer-sized: their payload is unknown.
int dtype_bits(DType t);
bool dtype_is_float(DType t);

}  // namespace perfcard
