// Reader of PerfCard weights files ("PCWT", docs/weights-format.md): the trained predictor files under
// weights/. A file is a header, typed key/value metadata, a tensor table and an aligned data section.
//
// read_weights() validates the whole file up front (magic, major version, every bound, alignment, sizes
// against dims x dtype, duplicates, counts and lengths capped so that a hostile file cannot make the reader
// allocate more than a small multiple of its own size) and throws perfcard::Error naming what is wrong and
// where (byte offset, tensor or key name). Tensor data is never copied: a WeightsFile refers into the
// caller's bytes, which must outlive it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "perfcard/quant.h"

namespace perfcard {

// The format version this build reads and writes. Files with another major version are rejected; files
// with a newer minor version are read, ignoring what 1.0 does not know (unknown metadata value types).
inline constexpr std::uint16_t kWeightsFormatMajor = 1;
inline constexpr std::uint16_t kWeightsFormatMinor = 0;

// Limits a valid file stays far below; exceeding one is an error, not a truncation.
inline constexpr std::uint32_t kWeightsMaxMetadata = 4096;
inline constexpr std::uint32_t kWeightsMaxTensors = 65536;
inline constexpr std::uint32_t kWeightsMaxNameBytes = 256;          // metadata keys and tensor names
inline constexpr std::uint32_t kWeightsMaxStringBytes = 1u << 20;   // one string value
inline constexpr std::uint32_t kWeightsMaxArrayLength = 1u << 20;   // elements of one array value
inline constexpr std::uint32_t kWeightsMaxRank = 8;

// On-disk tensor element types (u32 codes, fixed by the format).
enum class WDType : std::uint32_t {
  F32 = 1, F16 = 2, BF16 = 3, F64 = 4, I8 = 5, U8 = 6, I32 = 7, I64 = 8,
  Q8_0 = 32,  // quant::BlockQ8_0 per 32 values along the last dimension
  Q4_0 = 33,  // quant::BlockQ4_0 per 32 values along the last dimension
};
bool wdtype_is_known(std::uint32_t code);
std::string wdtype_name(WDType t);  // "f32", "q8_0", ...; "dtype#N" for an unknown code
// Bytes for `elements` values; quantized types need elements % 32 == 0.
std::uint64_t wdtype_bytes(WDType t, std::uint64_t elements);

// Metadata value types (u8 codes). Arrays hold int64, float64, bool or string elements.
enum class MetaType : std::uint8_t { String = 1, Int64 = 2, Float64 = 3, Bool = 4, Array = 5 };

struct MetaValue {
  std::variant<std::string, std::int64_t, double, bool, std::vector<std::int64_t>, std::vector<double>,
               std::vector<bool>, std::vector<std::string>>
      value;
  std::uint64_t byte_offset = 0;  // of the entry (its key) in the file

  std::string type_name() const;  // "string", "int64", "float64", "bool", "array<int64>", ...
};

struct MetaEntry {
  std::string key;
  MetaValue value;
};

struct TensorInfo {
  std::string name;
  WDType dtype{};                     // may be a code unknown to this build in a newer-minor file
  std::vector<std::uint64_t> dims;    // row-major, outermost first; empty = scalar
  std::uint64_t offset = 0;           // relative to the data section
  std::uint64_t byte_size = 0;
  std::uint64_t entry_offset = 0;     // where its table entry starts in the file
  std::span<const std::uint8_t> bytes;  // into the caller's buffer

  std::uint64_t elements() const;
  std::string shape_string() const;  // "[3, 4]"

  // Typed views of the data. Each checks the dtype and that the data is suitably aligned in memory for
  // T (the file guarantees alignment relative to its start; the caller's buffer must be aligned too:
  // a std::vector / new / mmap buffer is). f16 and bf16 are viewed as their uint16 bits.
  std::span<const float> f32() const;
  std::span<const double> f64() const;
  std::span<const std::uint16_t> f16_bits() const;
  std::span<const std::uint16_t> bf16_bits() const;
  std::span<const std::int8_t> i8() const;
  std::span<const std::uint8_t> u8() const;
  std::span<const std::int32_t> i32() const;
  std::span<const std::int64_t> i64() const;
  std::span<const quant::BlockQ8_0> q8_0() const;
  std::span<const quant::BlockQ4_0> q4_0() const;
  // Any dtype as fp32 values (dequantizing / widening; i64 and f64 may lose precision).
  std::vector<float> to_f32() const;
};

class WeightsFile {
 public:
  std::uint16_t major = 0, minor = 0;
  std::uint32_t alignment = 0;
  std::uint64_t data_offset = 0, data_size = 0;
  std::vector<MetaEntry> metadata;  // file order; unknown-type entries of newer minors are left out
  std::vector<TensorInfo> tensors;  // file order
  std::span<const std::uint8_t> bytes;  // the whole file: the caller's buffer, as read_weights got it

  // The required keys, checked by read_weights.
  std::string_view predictor() const { return get_string("predictor"); }
  std::int64_t predictor_version() const { return get_int("predictor.version"); }

  // Metadata lookup: nullptr / throws "... has no metadata 'key'" when absent, and
  // "metadata 'key' is <type>, expected <type>" on a type mismatch.
  const MetaValue* find(std::string_view key) const;
  const MetaValue& get(std::string_view key) const;
  std::string_view get_string(std::string_view key) const;
  std::int64_t get_int(std::string_view key) const;
  double get_float(std::string_view key) const;  // float64 (an int64 value is accepted and converted)
  bool get_bool(std::string_view key) const;
  const std::vector<std::int64_t>& get_ints(std::string_view key) const;
  const std::vector<double>& get_floats(std::string_view key) const;
  const std::vector<std::string>& get_strings(std::string_view key) const;

  // Tensor lookup: throws "predictor 'p' has no tensor 'name'". The checked form also throws
  // "tensor 'name' is f16, expected q8_0" and "tensor 'name' has shape [3, 4], expected [4, -1]";
  // -1 in expected_dims matches any extent.
  const TensorInfo* find_tensor(std::string_view name) const;
  const TensorInfo& tensor(std::string_view name) const;
  const TensorInfo& tensor(std::string_view name, WDType expected, std::initializer_list<std::int64_t> dims) const;

  // Throws unless metadata `key` equals `expected` (the hash of the schema this build computes: the feature
  // row's, or "graph_schema.hash" for the operator graph's): a predictor trained on other features must not
  // be run on these.
  void require_schema_hash(std::string_view expected, std::string_view key = "feature_schema.hash") const;
  // Throws unless the file holds predictor `name` at `version`, the one this build runs.
  void require_predictor(std::string_view name, std::int64_t version) const;
};

// The metadata keys every file must carry (docs/weights-format.md), with their types.
struct RequiredKey {
  const char* key;
  MetaType type;
  MetaType element;  // for arrays
};
std::span<const RequiredKey> weights_required_keys();

// Parses and validates; see the file comment. `bytes` must outlive the result.
WeightsFile read_weights(std::span<const std::uint8_t> bytes);

}  // namespace perfcard
