// The weights file reader (core/src/weights_file.cpp): the Python-written fixtures of tests/data/weights/
// (scripts/weights/make_test_files.py), every error message with its byte offset on files built here byte
// by byte, the accessors, and weights/manifest.json against the files of weights/.
#include <catch2/catch.hpp>

#include <array>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "perfcard/error.h"
#include "perfcard/quant.h"
#include "perfcard/sha256.h"
#include "perfcard/weights_file.h"
#include "test_util.h"

using perfcard::WDType;
using perfcard::WeightsFile;
using perfcard::read_weights;
namespace quant = perfcard::quant;

namespace {

// ------------------------------------------------------------------------------ a byte-level file builder

using Bytes = std::vector<std::uint8_t>;

template <class T>
void put(Bytes& b, T v) {
  const std::size_t at = b.size();
  b.resize(at + sizeof(T));
  std::memcpy(b.data() + at, &v, sizeof(T));
}
void put_str(Bytes& b, std::string_view s) {
  put<std::uint32_t>(b, std::uint32_t(s.size()));
  b.insert(b.end(), s.begin(), s.end());
}
Bytes str_value(std::string_view s) {
  Bytes b;
  put_str(b, s);
  return b;
}
template <class T>
Bytes scalar_value(T v) {
  Bytes b;
  put<T>(b, v);
  return b;
}
Bytes array_value(std::uint8_t elem, std::uint32_t count, const Bytes& elements) {
  Bytes b;
  put<std::uint8_t>(b, elem);
  put<std::uint32_t>(b, count);
  b.insert(b.end(), elements.begin(), elements.end());
  return b;
}

struct Meta {
  std::string key;
  std::uint8_t type;
  Bytes value;
  std::optional<std::uint32_t> value_size = {};  // default value.size()
  std::optional<std::uint32_t> key_length = {};  // default key.size()
};
struct Tensor {
  std::string name;
  std::uint32_t dtype;
  std::vector<std::uint64_t> dims;
  Bytes payload;
  std::optional<std::uint64_t> offset = {}, byte_size = {};
};

struct Builder {
  std::uint16_t major = 1, minor = 0;
  std::uint32_t alignment = 64;
  std::optional<std::uint32_t> n_meta, n_tensors;
  std::optional<std::uint64_t> data_offset, data_size;
  std::vector<Meta> meta;
  std::vector<Tensor> tensors;
  std::size_t trailing = 0;
  // Filled by bytes(): where each entry starts, and where the data section starts.
  std::vector<std::uint64_t> meta_pos, tensor_pos;
  std::uint64_t data_at = 0;

  Builder& required() {
    meta.push_back({"predictor", 1, str_value("latency")});
    meta.push_back({"predictor.version", 2, scalar_value<std::int64_t>(3)});
    meta.push_back({"feature_schema.hash", 1, str_value("sha256:feedbeef")});
    meta.push_back({"training.provenance", 1, str_value("unit test")});
    Bytes src;
    put_str(src, "mlperf");
    put_str(src, "datasheets");
    meta.push_back({"training.sources", 5, array_value(1, 2, src)});
    meta.push_back({"training.commit", 1, str_value("abc1234")});
    meta.push_back({"training.date", 1, str_value("2025-01-10")});
    meta.push_back({"created_by", 1, str_value("weights_file_test")});
    return *this;
  }
  Builder& f32(std::string name, std::vector<std::uint64_t> dims, std::vector<float> values = {}) {
    std::uint64_t n = 1;
    for (auto d : dims) n *= d;
    if (values.empty()) {
      for (std::uint64_t i = 0; i < n; ++i) values.push_back(float(i) * 0.5f);
    }
    Bytes p(values.size() * 4);
    std::memcpy(p.data(), values.data(), p.size());
    tensors.push_back({std::move(name), 1, std::move(dims), std::move(p)});
    return *this;
  }

  Bytes bytes() {
    Bytes table;
    const std::uint64_t header = 40;
    const std::uint64_t al = std::max<std::uint32_t>(alignment, 1);  // layout even for a bad alignment
    meta_pos.clear();
    tensor_pos.clear();
    for (const auto& m : meta) {
      meta_pos.push_back(header + table.size());
      put<std::uint32_t>(table, m.key_length.value_or(std::uint32_t(m.key.size())));
      table.insert(table.end(), m.key.begin(), m.key.end());
      put<std::uint8_t>(table, m.type);
      put<std::uint32_t>(table, m.value_size.value_or(std::uint32_t(m.value.size())));
      table.insert(table.end(), m.value.begin(), m.value.end());
    }
    Bytes data;
    for (const auto& t : tensors) {
      tensor_pos.push_back(header + table.size());
      put_str(table, t.name);
      put<std::uint32_t>(table, t.dtype);
      put<std::uint32_t>(table, std::uint32_t(t.dims.size()));
      for (auto d : t.dims) put<std::uint64_t>(table, d);
      const std::uint64_t off = t.offset ? *t.offset : (data.size() + al - 1) / al * al;
      put<std::uint64_t>(table, off);
      put<std::uint64_t>(table, t.byte_size.value_or(t.payload.size()));
      if (!t.payload.empty() && data.size() < off + t.payload.size()) data.resize(std::size_t(off + t.payload.size()));
      std::copy(t.payload.begin(), t.payload.end(), data.begin() + std::ptrdiff_t(off));
    }
    data_at = data_offset ? *data_offset : (header + table.size() + al - 1) / al * al;
    Bytes out = {'P', 'C', 'W', 'T'};
    put<std::uint16_t>(out, major);
    put<std::uint16_t>(out, minor);
    put<std::uint32_t>(out, alignment);
    put<std::uint32_t>(out, n_meta.value_or(std::uint32_t(meta.size())));
    put<std::uint32_t>(out, n_tensors.value_or(std::uint32_t(tensors.size())));
    put<std::uint32_t>(out, 0);
    put<std::uint64_t>(out, data_at);
    put<std::uint64_t>(out, data_size.value_or(data.size()));
    out.insert(out.end(), table.begin(), table.end());
    if (data_at >= header && out.size() > data_at) out.resize(std::size_t(data_at));  // offset inside the table
    if (out.size() < data_at) out.resize(std::size_t(data_at), 0);
    out.insert(out.end(), data.begin(), data.end());
    out.resize(out.size() + trailing, 0xee);
    return out;
  }
};

// Reads `bytes` expecting perfcard::Error with exactly `message` (without the location suffix) and, when
// given, the byte offset.
void expect_error(const Bytes& bytes, const std::string& message, std::optional<std::uint64_t> offset) {
  try {
    read_weights(bytes);
    FAIL("no error, expected: " << message);
  } catch (const perfcard::Error& e) {
    CHECK(e.message() == message);
    if (offset) {
      CHECK(e.where().byte_offset == offset);
    } else {
      CHECK_FALSE(e.where().byte_offset.has_value());
    }
  }
}

using perfcard::test::error_message;

// An aligned copy of a file's bytes (std::vector<uint8_t> storage comes from operator new: aligned for
// every fundamental type).
Bytes fixture(const std::string& name) { return perfcard::test::read_file(perfcard::test::data_path("weights/" + name)); }

}  // namespace

// ------------------------------------------------------------------------------ the Python-written files

TEST_CASE("a 1.0 file written by scripts/weights/pcwt.py reads with every dtype and metadata type") {
  const Bytes bytes = fixture("example_v1.pcwt");
  const WeightsFile w = read_weights(bytes);
  CHECK(w.major == 1);
  CHECK(w.minor == 0);
  CHECK(w.alignment == 64);
  CHECK(w.data_offset % 64 == 0);
  CHECK(w.predictor() == "example");
  CHECK(w.predictor_version() == 7);
  CHECK(w.get_string("training.date") == "2025-01-01");
  CHECK(w.get_strings("training.sources") == std::vector<std::string>{"synthetic"});
  CHECK(w.get_float("example.learning_rate") == 0.125);
  CHECK(w.get_float("predictor.version") == 7.0);  // int64 accepted where a float is asked for
  CHECK(w.get_bool("example.quantized"));
  CHECK(w.get_ints("example.layers") == std::vector<std::int64_t>{64, 32, 1});
  CHECK(w.get_floats("example.loss_curve") == std::vector<double>{0.5, 0.25, -1.5e-3});
  CHECK(std::get<std::vector<bool>>(w.get("example.flags").value) == std::vector<bool>{true, false, true});
  CHECK(w.get_strings("example.empty").empty());
  CHECK(w.get_string("example.unicode") == "d\xc3\xa9j\xc3\xa0 vu \xe2\x9c\x93");
  CHECK(w.metadata.size() == 15);
  CHECK(w.metadata[0].key == "predictor");  // file order kept
  w.require_schema_hash("sha256:0123456789abcdef");

  REQUIRE(w.tensors.size() == 12);
  const auto& x = w.tensor("x", WDType::F32, {4, 64});
  CHECK(x.dims == std::vector<std::uint64_t>{4, 64});
  // No copy: tensor data points into the caller's bytes, at an aligned offset.
  CHECK(x.bytes.data() == bytes.data() + w.data_offset + x.offset);
  CHECK(x.offset % 64 == 0);
  const auto xs = x.f32();
  REQUIRE(xs.size() == 256);
  CHECK(xs[0] == 1.0f + 0x1p-11f);
  CHECK(xs[8] == 65504.0f);

  CHECK(w.tensor("bias", WDType::F64, {3}).f64()[2] == 1e300);
  const auto i32 = w.tensor("ids_i32", WDType::I32, {5}).i32();
  CHECK(std::vector<std::int32_t>(i32.begin(), i32.end()) ==
        std::vector<std::int32_t>{1, -2, 2147483647, -2147483647 - 1, 0});
  const auto i64 = w.tensor("ids_i64", WDType::I64, {2, 2}).i64();
  CHECK(i64[2] == (std::int64_t(1) << 62));
  CHECK(i64[3] == std::numeric_limits<std::int64_t>::min());
  CHECK(w.tensor("mask_u8", WDType::U8, {7}).u8()[6] == 222);
  CHECK(w.tensor("small_i8", WDType::I8, {3}).i8()[0] == -128);
  const auto& scalar = w.tensor("scalar", WDType::F32, {});
  CHECK(scalar.elements() == 1);
  CHECK(scalar.f32()[0] == 2.5f);
  CHECK(w.tensor("empty", WDType::F32, {0, 3}).f32().empty());
  CHECK(w.tensor("x_q8_0", WDType::Q8_0, {-1, 64}).q8_0().size() == 8);
}

TEST_CASE("Python and C++ agree bit for bit on fp16, bf16, q8_0 and q4_0 of the same fp32 values") {
  const Bytes bytes = fixture("example_v1.pcwt");
  const WeightsFile w = read_weights(bytes);
  const auto x = w.tensor("x").f32();
  const auto f16 = w.tensor("x_f16", WDType::F16, {4, 64}).f16_bits();
  const auto bf16 = w.tensor("x_bf16", WDType::BF16, {4, 64}).bf16_bits();
  for (std::size_t i = 0; i < x.size(); ++i) {
    INFO("value " << i << " = " << x[i]);
    CHECK(quant::fp32_to_fp16(x[i]) == f16[i]);  // numpy's astype(float16)
    CHECK(quant::fp32_to_bf16(x[i]) == bf16[i]);
  }
  CHECK(f16[10] == 0x7c00);  // 65520 -> inf
  CHECK(f16[5] == 0x0000);   // 2^-25 -> 0 (tie to even)

  std::vector<quant::BlockQ8_0> q8(x.size() / 32);
  std::vector<quant::BlockQ4_0> q4(x.size() / 32);
  quant::quantize_row_q8_0(x, q8);
  quant::quantize_row_q4_0(x, q4);
  const auto& t8 = w.tensor("x_q8_0", WDType::Q8_0, {4, 64});
  const auto& t4 = w.tensor("x_q4_0", WDType::Q4_0, {4, 64});
  REQUIRE(t8.bytes.size() == q8.size() * sizeof(quant::BlockQ8_0));
  REQUIRE(t4.bytes.size() == q4.size() * sizeof(quant::BlockQ4_0));
  CHECK(std::memcmp(t8.bytes.data(), q8.data(), t8.bytes.size()) == 0);
  CHECK(std::memcmp(t4.bytes.data(), q4.data(), t4.bytes.size()) == 0);
  CHECK(t8.q8_0()[7].scale_bits() == 0);  // the all-zero block

  // Dequantized values are within half a step of the source.
  const std::vector<float> back = t8.to_f32();
  REQUIRE(back.size() == x.size());
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(std::fabs(back[i] - x[i]) <= t8.q8_0()[i / 32].scale() / 2);
  const std::vector<float> halves = w.tensor("x_f16").to_f32();
  CHECK(halves[0] == 1.0f);
  CHECK(w.tensor("ids_i32").to_f32()[1] == -2.0f);
}

TEST_CASE("a newer minor version is read, skipping what this build does not know") {
  const Bytes bytes = fixture("example_v1_1.pcwt");
  const WeightsFile w = read_weights(bytes);
  CHECK(w.major == 1);
  CHECK(w.minor == 1);
  CHECK(w.find("example.future") == nullptr);  // a value type from 1.1: skipped by its size
  CHECK(w.find("example.unicode") != nullptr);
  const auto& future = w.tensor("future");
  CHECK(std::uint32_t(future.dtype) == 77);
  CHECK(future.bytes.size() == 10);
  CHECK(error_message([&] { future.to_f32(); }) ==
        "tensor 'future' has dtype code 77 unknown to this build (file format minor version newer than 0)");
  CHECK(w.tensor("x").f32().size() == 256);
}

TEST_CASE("a major version 2 file is rejected with a clear message") {
  expect_error(fixture("example_v2.pcwt"),
               "weights file format 2.x is newer than this build reads (1.x); update PerfCard", 4);
}

TEST_CASE("a truncated file is rejected") {
  expect_error(fixture("example_truncated.pcwt"),
               "truncated file: the header declares 4224 bytes (data section at 1280, 2944 bytes), the file has 1000",
               1000);
}

// ------------------------------------------------------------------------------ round trip and messages

TEST_CASE("a file built here reads back") {
  Builder b;
  b.required().f32("w", {2, 3}).f32("b", {3});
  const Bytes bytes = b.bytes();
  const WeightsFile w = read_weights(bytes);
  CHECK(w.predictor() == "latency");
  CHECK(w.predictor_version() == 3);
  CHECK(w.tensor("w", WDType::F32, {2, -1}).f32()[5] == 2.5f);
  CHECK(w.tensor("b").offset == 64);
  CHECK(w.data_offset == b.data_at);
}

TEST_CASE("header errors") {
  expect_error({'P', 'C', 'W'}, "not a PerfCard weights file (3 bytes, shorter than the magic \"PCWT\")", 0);
  expect_error({'G', 'G', 'U', 'F', 3, 0, 0, 0}, "not a PerfCard weights file (magic \"GGUF\", expected \"PCWT\")", 0);
  expect_error({0x89, 'P', 'N', 'G', 13, 10, 26, 10},
               "not a PerfCard weights file (magic bytes 89 50 4e 47, expected \"PCWT\")", 0);
  expect_error({'P', 'C', 'W', 'T', 1, 0}, "truncated header: 40 bytes needed, the file has 6", 6);
  Builder b;
  b.required();
  Bytes ok = b.bytes();
  expect_error(Bytes(ok.begin(), ok.begin() + 20), "truncated header: 40 bytes needed, the file has 20", 20);
  // The version is checked before the rest of the header: a 2.x header may have another layout.
  expect_error({'P', 'C', 'W', 'T', 2, 0, 5, 0}, "weights file format 2.x is newer than this build reads (1.x); update PerfCard", 4);

  auto with = [](auto edit) {
    Builder f;
    f.required().f32("w", {4});
    edit(f);
    return f.bytes();
  };
  expect_error(with([](Builder& f) { f.major = 0; }),
               "weights file format 0.x is older than this build reads (1.x); regenerate the file", 4);
  expect_error(with([](Builder& f) { f.major = 7; f.minor = 9; }),
               "weights file format 7.x is newer than this build reads (1.x); update PerfCard", 4);
  for (std::uint32_t a : {0u, 4u, 48u, 131072u}) {
    expect_error(with([a](Builder& f) { f.alignment = a; f.data_offset = 64; }),
                 "alignment " + std::to_string(a) + " is not a power of two between 8 and 65536", 8);
  }
  expect_error(with([](Builder& f) { f.n_meta = 5000; }), "metadata count 5000 exceeds the limit of 4096", 12);
  expect_error(with([](Builder& f) { f.n_tensors = 0xffffffffu; }),
               "tensor count 4294967295 exceeds the limit of 65536", 16);
  expect_error(with([](Builder& f) { f.data_offset = 32; f.alignment = 8; }),
               "data section offset 32 lies inside the 40-byte header", 24);
  expect_error(with([](Builder& f) { f.data_offset = 1000; }),
               "data section offset 1000 is not a multiple of the alignment 64", 24);
  {
    Builder t;
    t.required().f32("w", {4});
    Bytes full = t.bytes();
    const std::uint64_t size = full.size();
    full.resize(full.size() - 3);
    expect_error(full, "truncated file: the header declares " + std::to_string(size) + " bytes (data section at " +
                           std::to_string(t.data_at) + ", 16 bytes), the file has " + std::to_string(size - 3),
                 size - 3);
  }
  {
    Builder t;
    t.required();
    t.data_size = ~std::uint64_t(0);
    const Bytes bytes = t.bytes();
    expect_error(bytes, "truncated file: the header declares more than 2^64 bytes (data section at " +
                            std::to_string(t.data_at) + ", 18446744073709551615 bytes), the file has " +
                            std::to_string(bytes.size()),
                 bytes.size());
  }
  {
    Builder t;
    t.required().f32("w", {4});
    t.trailing = 3;
    const Bytes bytes = t.bytes();
    expect_error(bytes, "3 unexpected bytes after the data section", bytes.size() - 3);
  }
}

TEST_CASE("metadata errors") {
  auto file = [](Meta m, bool before_required = false) {
    Builder b;
    if (!before_required) b.required();
    b.meta.push_back(std::move(m));
    if (before_required) b.required();
    const Bytes bytes = b.bytes();
    const std::uint64_t pos = before_required ? b.meta_pos.front() : b.meta_pos.back();
    return std::make_pair(bytes, pos);
  };
  {
    auto [bytes, pos] = file({"", 1, str_value("x")}, true);
    expect_error(bytes, "metadata entry 0 has an empty key", pos);
  }
  {
    auto [bytes, pos] = file({"k", 1, str_value("x"), std::nullopt, 300}, true);
    expect_error(bytes, "metadata entry 0 key length 300 exceeds the limit of 256 bytes", pos);
  }
  {
    auto [bytes, pos] = file({"predictor", 1, str_value("again")});
    expect_error(bytes, "duplicate metadata key 'predictor'", pos);
  }
  {
    auto [bytes, pos] = file({"k", 9, {1, 2, 3}});
    expect_error(bytes, "metadata 'k' has unknown value type 9", pos + 5);
  }
  {
    Bytes v;
    put<std::uint32_t>(v, 2000000);
    auto [bytes, pos] = file({"k", 1, v});
    expect_error(bytes, "metadata 'k' string length 2000000 exceeds the limit of 1048576 bytes", pos + 10);
  }
  {
    auto [bytes, pos] = file({"k", 1, str_value("0123456789"), 6});
    expect_error(bytes, "metadata 'k' string needs 10 bytes, only 2 remain of its 6-byte value", pos + 14);
  }
  {
    auto [bytes, pos] = file({"k", 2, scalar_value<std::int64_t>(5), 12});
    // The value claims 12 bytes, holds an int64 (8) and 4 more bytes (the next entry's start).
    expect_error(bytes, "metadata 'k' value takes 8 bytes but its size field says 12", pos + 6);
  }
  {
    auto [bytes, pos] = file({"k", 4, scalar_value<std::uint8_t>(7)});
    expect_error(bytes, "metadata 'k': bool value 7 is neither 0 nor 1", pos + 10);
  }
  {
    auto [bytes, pos] = file({"k", 5, array_value(5, 0, {})});
    expect_error(bytes, "metadata 'k' has unknown array element type 5", pos + 10);
  }
  {
    auto [bytes, pos] = file({"k", 5, array_value(2, 2000000, {})});
    expect_error(bytes, "metadata 'k' array length 2000000 exceeds the limit of 1048576", pos + 11);
  }
  {
    auto [bytes, pos] = file({"k", 5, array_value(2, 1000, Bytes(8, 0))});
    expect_error(bytes, "metadata 'k' array length 1000 does not fit its 13-byte value", pos + 11);
  }
  {
    // A value size running past the table: the header's data offset cuts the table short.
    Builder b;
    b.required();
    b.meta.push_back({"k", 1, str_value(std::string(100, 'x'))});
    b.bytes();
    const std::uint64_t pos = b.meta_pos.back();
    b.data_offset = ((pos + 10) / 64 + 1) * 64;  // inside the value
    b.bytes();
    const std::uint64_t avail = b.data_at - (pos + 10);
    expect_error(b.bytes(),
                 "truncated metadata: metadata 'k' value needs 104 bytes, only " + std::to_string(avail) +
                     " remain before the data section at byte offset " + std::to_string(b.data_at),
                 pos + 10);
  }
  {
    // More entries announced than present, the table ending exactly at the data section.
    // Pad the last string so that the table ends on an 8-byte boundary, then rebuild.
    Builder c;
    c.required();
    c.alignment = 8;
    c.n_meta = 9;
    Bytes probe = c.bytes();
    std::uint64_t table_end = 40;
    for (const auto& m : c.meta) table_end += 4 + m.key.size() + 5 + m.value.size();
    const std::size_t pad = std::size_t((8 - table_end % 8) % 8);
    c.meta.back().value = str_value(std::string("weights_file_test") + std::string(pad, '!'));
    probe = c.bytes();
    REQUIRE(c.data_at == table_end + pad);
    expect_error(probe,
                 "truncated metadata: metadata entry 8 key length needs 4 bytes, only 0 remain before the data "
                 "section at byte offset " + std::to_string(c.data_at),
                 c.data_at);
  }
}

TEST_CASE("tensor table errors") {
  auto file = [](Tensor t) {
    Builder b;
    b.required().f32("a", {4});
    b.tensors.push_back(std::move(t));
    const Bytes bytes = b.bytes();
    return std::make_pair(bytes, b.tensor_pos.back());
  };
  const Bytes f16(8, 0);
  {
    auto [bytes, pos] = file({"", 1, {2}, f16});
    expect_error(bytes, "tensor entry 1 has an empty name", pos);
  }
  {
    auto [bytes, pos] = file({std::string(257, 'n'), 1, {2}, f16});
    expect_error(bytes, "tensor entry 1 name length 257 exceeds the limit of 256 bytes", pos);
  }
  {
    auto [bytes, pos] = file({"a", 1, {2}, f16});
    expect_error(bytes, "duplicate tensor name 'a'", pos);
  }
  {
    auto [bytes, pos] = file({"w\n", 1, {1, 1, 1, 1, 1, 1, 1, 1, 2}, f16});
    expect_error(bytes, "tensor 'w\\x0a': rank 9 exceeds the limit of 8", pos + 6 + 4);
  }
  {
    auto [bytes, pos] = file({"w", 99, {2}, f16});
    expect_error(bytes, "tensor 'w' has unknown dtype code 99", pos + 5);
  }
  {
    auto [bytes, pos] = file({"w", 1, {std::uint64_t(1) << 40, std::uint64_t(1) << 40}, f16});
    expect_error(bytes, "tensor 'w': shape [1099511627776, 1099511627776] has too many elements", pos + 13);
  }
  {
    auto [bytes, pos] = file({"w", 32, {2, 33}, Bytes(68, 0)});
    expect_error(bytes, "tensor 'w': q8_0 needs a last dimension that is a multiple of 32, shape [2, 33]", pos + 13);
  }
  {
    auto [bytes, pos] = file({"w", 33, {}, Bytes(18, 0)});
    expect_error(bytes, "tensor 'w': q4_0 needs a last dimension that is a multiple of 32, shape []", pos + 13);
  }
  {
    auto [bytes, pos] = file({"w", 2, {3, 4}, Bytes(20, 0)});
    expect_error(bytes, "tensor 'w': byte size 20 does not match [3, 4] x f16 = 24 bytes", pos + 13 + 16 + 8);
  }
  {
    auto [bytes, pos] = file({"w", 32, {2, 64}, Bytes(100, 0)});
    expect_error(bytes, "tensor 'w': byte size 100 does not match [2, 64] x q8_0 = 136 bytes", pos + 13 + 16 + 8);
  }
  {
    auto [bytes, pos] = file({"w", 1, {2}, f16, 72});
    expect_error(bytes, "tensor 'w': data offset 72 is not a multiple of the alignment 64", pos + 13 + 8);
  }
  {
    Builder b;
    b.required().f32("a", {4});
    b.tensors.push_back({"w", 1, {4}, {}, 64, 16});  // no payload: the data section ends at 16
    const Bytes bytes = b.bytes();
    expect_error(bytes, "tensor 'w': data [64, +16) lies outside the 16-byte data section", b.tensor_pos.back() + 13 + 8);
  }
  {
    Builder b;
    b.required().f32("a", {4});
    b.tensors.push_back({"w", 1, {1}, {}, ~std::uint64_t(0) / 64 * 64, 4});  // offset + size overflows
    const Bytes bytes = b.bytes();
    expect_error(bytes, "tensor 'w': data [18446744073709551552, +4) lies outside the 16-byte data section",
                 b.tensor_pos.back() + 13 + 8);
  }
  {
    Builder b;
    b.required().f32("a", {32}).f32("b", {4});
    b.f32("c", {8});
    b.tensors.back().offset = 0;  // inside "a" [0, +128)
    const Bytes bytes = b.bytes();
    expect_error(bytes, "tensor 'c': data [0, +32) overlaps tensor 'a' [0, +128)", b.tensor_pos.back());
  }
  {
    // Zero-size tensors may share an offset with anything.
    Builder b;
    b.required().f32("a", {4});
    b.tensors.push_back({"e", 1, {0}, {}, 0});
    read_weights(b.bytes());
  }
  {
    // The tensor table overruns the data section: entry "b" is cut in its dims or its data offset.
    Builder b;
    b.alignment = 8;
    b.required().f32("a", {4}).f32("b", {4});
    b.bytes();
    const std::uint64_t pos = b.tensor_pos.back();
    b.data_offset = ((pos + 13) / 8 + 1) * 8;
    const Bytes bytes = b.bytes();
    const std::uint64_t avail = b.data_at - (pos + 13);
    const std::string tail = " remain before the data section at byte offset " + std::to_string(b.data_at);
    if (avail < 8) {
      expect_error(bytes, "truncated tensor table: tensor 'b' dims needs 8 bytes, only " + std::to_string(avail) + tail,
                   pos + 13);
    } else {
      expect_error(bytes, "truncated tensor table: tensor 'b' data offset needs 8 bytes, only 0" + tail, pos + 21);
    }
  }
}

TEST_CASE("required metadata is checked on read") {
  for (const auto& req : perfcard::weights_required_keys()) {
    Builder b;
    b.required();
    std::erase_if(b.meta, [&](const Meta& m) { return m.key == req.key; });
    expect_error(b.bytes(), std::string("weights file lacks required metadata '") + req.key + "'", std::nullopt);
  }
  Builder b;
  b.required();
  b.meta[1] = {"predictor.version", 1, str_value("3")};
  const Bytes bytes = b.bytes();
  expect_error(bytes, "metadata 'predictor.version' is string, expected int64", b.meta_pos[1]);
  Builder c;
  c.required();
  c.meta[4] = {"training.sources", 5, array_value(2, 0, {})};
  const Bytes cb = c.bytes();
  expect_error(cb, "metadata 'training.sources' is array<int64>, expected array<string>", c.meta_pos[4]);
}

TEST_CASE("accessor errors name the predictor, the key or tensor, and what was expected") {
  Builder b;
  b.required().f32("w", {2, 3});
  b.meta.push_back({"lr", 3, scalar_value<double>(0.5)});
  b.tensors.push_back({"q", 32, {1, 32}, Bytes(34, 0)});
  const Bytes bytes = b.bytes();
  const WeightsFile w = read_weights(bytes);
  CHECK(error_message([&] { w.get("nope"); }) == "predictor 'latency' has no metadata 'nope'");
  CHECK(error_message([&] { w.get_string("lr"); }) == "metadata 'lr' is float64, expected string");
  CHECK(error_message([&] { w.get_int("lr"); }) == "metadata 'lr' is float64, expected int64");
  CHECK(error_message([&] { w.get_bool("predictor"); }) == "metadata 'predictor' is string, expected bool");
  CHECK(error_message([&] { w.get_floats("training.sources"); }) == "metadata 'training.sources' is array<string>, expected array<float64>");
  CHECK(w.get_float("lr") == 0.5);
  CHECK(error_message([&] { w.tensor("nope"); }) == "predictor 'latency' has no tensor 'nope'");
  CHECK(error_message([&] { w.tensor("w", WDType::Q8_0, {2, 3}); }) == "tensor 'w' is f32, expected q8_0");
  CHECK(error_message([&] { w.tensor("w", WDType::F32, {3, 2}); }) == "tensor 'w' has shape [2, 3], expected [3, 2]");
  CHECK(error_message([&] { w.tensor("w", WDType::F32, {-1}); }) == "tensor 'w' has shape [2, 3], expected [-1]");
  CHECK(w.tensor("w", WDType::F32, {-1, 3}).elements() == 6);
  CHECK(error_message([&] { w.tensor("w").q8_0(); }) == "tensor 'w' is f32, not q8_0");
  CHECK(error_message([&] { w.tensor("q").f32(); }) == "tensor 'q' is q8_0, not f32");
  CHECK(w.tensor("q").q8_0().size() == 1);
  try {
    w.require_schema_hash("sha256:0ther");
    FAIL("no error");
  } catch (const perfcard::Error& e) {
    CHECK(e.message() ==
          "predictor 'latency' (version 3) was trained on feature schema 'sha256:feedbeef', but this build computes "
          "'sha256:0ther'; retrain the predictor or use the PerfCard version it was trained for");
    CHECK(e.where().byte_offset == b.meta_pos[2]);
  }
  w.require_schema_hash("sha256:feedbeef");

  // Data at an odd address (a file read into a buffer at an offset): typed views refuse, bytes still work.
  Bytes shifted(bytes.size() + 1);
  std::copy(bytes.begin(), bytes.end(), shifted.begin() + 1);
  const WeightsFile s = read_weights(std::span(shifted).subspan(1));
  CHECK(error_message([&] { s.tensor("w").f32(); }) == "tensor 'w': data is not 4-byte aligned in memory; load the file into an aligned buffer");
  CHECK(s.tensor("q").q8_0().size() == 1);  // blocks have alignment 1
}

TEST_CASE("hostile counts and lengths do not allocate beyond the file") {
  // 4096 metadata entries announced in a file of a few hundred bytes: fails at the first missing one.
  Builder b;
  b.required();
  b.n_meta = 4096;
  CHECK_THROWS_AS(read_weights(b.bytes()), perfcard::Error);
  // An array of 1M strings in a 9-byte value: rejected before reserving.
  Builder c;
  c.required();
  c.meta.push_back({"k", 5, array_value(1, 1u << 20, {})});
  const Bytes cb = c.bytes();
  expect_error(cb, "metadata 'k' array length 1048576 does not fit its 5-byte value", c.meta_pos.back() + 11);
  // Every single-byte corruption of a valid file either reads or throws perfcard::Error.
  Builder d;
  d.required().f32("w", {2, 32});
  d.tensors.push_back({"q", 32, {1, 32}, Bytes(34, 1)});
  const Bytes good = d.bytes();
  std::size_t errors = 0;
  for (std::size_t i = 0; i < good.size(); ++i) {
    for (std::uint8_t v : {std::uint8_t(0), std::uint8_t(0xff), std::uint8_t(good[i] ^ 0x80), std::uint8_t(good[i] + 1)}) {
      Bytes bad = good;
      bad[i] = v;
      try {
        read_weights(bad);
      } catch (const perfcard::Error&) {
        ++errors;
      }
    }
  }
  CHECK(errors > 0);
  for (std::size_t n = 0; n < good.size(); ++n) {
    CHECK_THROWS_AS(read_weights(std::span(good).first(n)), perfcard::Error);
  }
}

// ------------------------------------------------------------------------------ weights/manifest.json

namespace {

std::string sha256_hex(const Bytes& msg) { return perfcard::sha256_hex(std::span<const std::uint8_t>(msg)); }

}  // namespace

TEST_CASE("weights/manifest.json lists every weights file with its sha256 and size") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(perfcard::test::data_path("")) / ".." / ".." / "weights";
  const Bytes raw = perfcard::test::read_file((dir / "manifest.json").string());
  const auto manifest = nlohmann::json::parse(raw.begin(), raw.end());
  REQUIRE(manifest.at("format") == "perfcard-weights-manifest");
  REQUIRE(manifest.at("version") == 1);
  std::map<std::string, nlohmann::json> listed;
  for (const auto& f : manifest.at("files")) listed[f.at("path").get<std::string>()] = f;

  std::set<std::string> present;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    const std::string name = entry.path().filename().string();
    const std::string ext = entry.path().extension().string();
    if (name == "manifest.json" || (ext != ".pcwt" && ext != ".json")) continue;
    present.insert(name);
  }
  // Every problem is collected, then reported at once with the fix.
  std::vector<std::string> problems;
  for (const auto& name : present) {
    if (!listed.count(name)) {
      problems.push_back("weights/" + name + " is not listed");
      continue;
    }
    const Bytes bytes = perfcard::test::read_file((dir / name).string());
    const auto& f = listed[name];
    if (f.at("size").get<std::uint64_t>() != bytes.size() || f.at("sha256").get<std::string>() != sha256_hex(bytes)) {
      problems.push_back("weights/" + name + " differs from its size / sha256 in the manifest");
      continue;
    }
    if (name.size() > 5 && name.substr(name.size() - 5) == ".pcwt") {
      const WeightsFile w = read_weights(bytes);  // every committed predictor file is valid
      if (f.at("predictor").get<std::string>() != w.predictor()) problems.push_back("weights/" + name + ": predictor differs");
    }
  }
  for (const auto& [name, f] : listed) {
    if (!present.count(name)) problems.push_back("weights/" + name + " is listed but does not exist");
  }
  std::string report;
  for (const auto& p : problems) report += p + "\n";
  INFO(report << "fix: /usr/bin/python3 -m scripts.weights.update_manifest, and commit weights/manifest.json");
  CHECK(problems.empty());
}

TEST_CASE("require_predictor: the file's predictor and version, or what it is instead") {
  const auto bytes = perfcard::test::read_file(perfcard::test::repo_path("weights/trees.pcwt"));
  const WeightsFile w = read_weights(bytes);
  w.require_predictor("trees", 1);
  CHECK(error_message([&] { w.require_predictor("gnn", 1); }) == "the file is a 'trees' predictor, not 'gnn'");
  CHECK(error_message([&] { w.require_predictor("trees", 2); }) ==
        "trees predictor version 1 is not the version this build runs (2)");
}
