#include "perfcard/dtype.h"

namespace perfcard {

bool dtype_is_known(std::int64_t code) { return code >= 1 && code <= 22; }

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::Float: return "float32";
    case DType::UInt8: return "uint8";
    case DType::Int8: return "int8";
    case DType::UInt16: return "uint16";
    case DType::Int16: return "int16";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::String: return "string";
    case DType::Bool: return "bool";
    case DType::Float16: return "float16";
    case DType::Double: return "float64";
    case DType::UInt32: return "uint32";
    case DType::UInt64: return "uint64";
    case DType::Complex64: return "complex64";
    case DType::Complex128: return "complex128";
    case DType::BFloat16: return "bfloat16";
    case DType::Float8E4M3FN: return "float8e4m3fn";
    case DType::Float8E4M3FNUZ: return "float8e4m3fnuz";
    case DType::Float8E5M2: return "float8e5m2";
    case DType::Float8E5M2FNUZ: return "float8e5m2fnuz";
    case DType::UInt4: return "uint4";
    case DType::Int4: return "int4";
    case DType::Undefined: break;
  }
  return "undefined";
}

int dtype_bits(DType t) {
  switch (t) {
    case DType::Bool: case DType::UInt8: case DType::Int8: case DType::Float8E4M3FN:
    case DType::Float8E4M3FNUZ: case DType::Float8E5M2: case DType::Float8E5M2FNUZ: return 8;
    case DType::UInt16: case DType::Int16: case DType::Float16: case DType::BFloat16: return 16;
    case DType::Float: case DType::Int32: case DType::UInt32: return 32;
    case DType::Double: case DType::Int64: case DType::UInt64: case DType::Complex64: return 64;
    case DType::Complex128: return 128;
    case DType::UInt4: case DType::Int4: return 4;
    case DType::String: return 64;
    case DType::Undefined: break;
  }
  return 0;
}

bool dtype_is_float(DType t) {
  switch (t) {
    case DType::Float: case DType::Float16: case DType::BFloat16: case DType::Double:
    case DType::Float8E4M3FN: case DType::Float8E4M3FNUZ: case DType::Float8E5M2: case DType::Float8E5M2FNUZ:
      return true;
    default: return false;
  }
}

}  // namespace perfcard
