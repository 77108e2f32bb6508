// A bounds-checked reader of the protobuf wire format over a byte span. Used to walk the ONNX
// container messages so that large payload fields can be skipped without being copied.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "perfcard/error.h"

namespace perfcard::wire {

enum class WireType : std::uint8_t { Varint = 0, Fixed64 = 1, Len = 2, StartGroup = 3, EndGroup = 4, Fixed32 = 5 };

struct Field {
  std::uint32_t number = 0;
  WireType type = WireType::Varint;
  std::uint64_t varint = 0;               // Varint, Fixed32, Fixed64
  std::span<const std::uint8_t> bytes;    // Len
  std::uint64_t offset = 0;               // absolute offset of the tag
  std::uint64_t payload_offset = 0;       // absolute offset of the payload (Len)

  std::string_view str() const { return {reinterpret_cast<const char*>(bytes.data()), bytes.size()}; }
};

// Names the fields of one message type for error messages; nullptr for numbers it does not know.
using FieldNames = const char* (*)(std::uint32_t number);

class Reader {
 public:
  // base_offset: absolute offset of data[0] in the original input, for messages. `message` names what is
  // being read ("ModelProto", "initializer 'w'") and prefixes every error; it is copied.
  Reader(std::span<const std::uint8_t> data, std::uint64_t base_offset, std::string message,
         FieldNames names = nullptr)
      : data_(data), base_(base_offset), message_(std::move(message)), names_(names) {}

  // Node, op and graph that errors of this reader name besides the byte offset. Held by reference (a
  // node's context can carry a megabyte name, and a reader is made per attribute): it must outlive the
  // reader.
  void set_context(const Location& where) { context_ = &where; }
  void set_context(Location&&) = delete;

  bool done() const { return pos_ >= data_.size(); }
  Field next();
  std::uint64_t offset() const { return base_ + pos_; }

  [[noreturn]] void fail(const std::string& what, std::uint64_t at, ErrorCode code = ErrorCode::Malformed) const;
  // "field 7 (graph)", or "field 7" when the number has no name here.
  std::string field_label(std::uint32_t number) const;

  // Reads a repeated scalar field that may be packed or not, appending to out while it holds fewer than
  // `cap` values. Returns how many values the field holds, stored or not, so that a caller can refuse an
  // absurd count by its real size without ever allocating it.
  template <class T, class Conv>
  std::uint64_t read_repeated(const Field& f, std::vector<T>& out, Conv conv, std::size_t cap = SIZE_MAX) const;

 private:
  std::uint64_t read_varint();
  std::span<const std::uint8_t> data_;
  std::uint64_t base_;
  std::string message_;  // owned: callers build it from temporaries
  FieldNames names_;
  const Location* context_ = nullptr;
  std::size_t pos_ = 0;
};

// Decodes packed varints of a Len field.
std::uint64_t decode_varint(std::span<const std::uint8_t> data, std::size_t& pos, bool& ok);

template <class T, class Conv>
std::uint64_t Reader::read_repeated(const Field& f, std::vector<T>& out, Conv conv, std::size_t cap) const {
  if (f.type == WireType::Len) {
    std::size_t pos = 0;
    std::uint64_t count = 0;
    while (pos < f.bytes.size()) {
      bool ok = true;
      std::uint64_t v = decode_varint(f.bytes, pos, ok);
      if (!ok) fail("malformed packed varint in " + field_label(f.number), f.payload_offset + pos);
      if (out.size() < cap) out.push_back(conv(v));
      ++count;
    }
    return count;
  } else if (f.type == WireType::Varint) {
    if (out.size() < cap) out.push_back(conv(f.varint));
    return 1;
  } else {
    fail(field_label(f.number) + " has wire type " + std::to_string(int(f.type)) + ", expected varint or packed",
         f.offset);
  }
}

}  // namespace perfcard::wire
