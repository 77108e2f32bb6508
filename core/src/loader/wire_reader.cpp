#include "loader/wire_reader.h"

namespace perfcard::wire {

std::uint64_t decode_varint(std::span<const std::uint8_t> data, std::size_t& pos, bool& ok) {
  std::uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (pos >= data.size()) { ok = false; return 0; }
    std::uint8_t b = data[pos++];
    if (shift == 63 && (b & 0x7e)) { ok = false; return 0; }  // more than 64 bits
    v |= std::uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  ok = false;
  return 0;
}

void Reader::fail(const std::string& what, std::uint64_t at, ErrorCode code) const {
  Location loc = context_ ? *context_ : Location{};
  loc.byte_offset = at;
  throw Error(std::string(message_) + ": " + what, loc, code);
}

std::string Reader::field_label(std::uint32_t number) const {
  const char* name = names_ ? names_(number) : nullptr;
  return "field " + std::to_string(number) + (name ? std::string(" (") + name + ")" : std::string());
}

std::uint64_t Reader::read_varint() {
  std::size_t start = pos_;
  bool ok = true;
  std::uint64_t v = decode_varint(data_, pos_, ok);
  if (!ok) {
    fail(pos_ >= data_.size() ? "truncated varint (input ends inside a field)"
                              : "malformed varint (more than 64 bits)",
         base_ + start);
  }
  return v;
}

Field Reader::next() {
  Field f;
  f.offset = base_ + pos_;
  std::uint64_t tag = read_varint();
  f.number = static_cast<std::uint32_t>(tag >> 3);
  unsigned wt = tag & 7;
  if (f.number == 0 || tag >> 3 > 0x1fffffff)
    fail("invalid field number " + std::to_string(tag >> 3) + " (not protobuf data?)", f.offset);
  switch (wt) {
    case 0: f.type = WireType::Varint; f.varint = read_varint(); break;
    case 1:
    case 5: {
      std::size_t n = wt == 1 ? 8 : 4;
      if (data_.size() - pos_ < n) fail("truncated fixed-width " + field_label(f.number), f.offset);
      std::uint64_t v = 0;
      for (std::size_t i = 0; i < n; ++i) v |= std::uint64_t(data_[pos_ + i]) << (8 * i);
      pos_ += n;
      f.type = wt == 1 ? WireType::Fixed64 : WireType::Fixed32;
      f.varint = v;
      break;
    }
    case 2: {
      std::uint64_t len = read_varint();
      if (len > data_.size() - pos_) {
        fail(field_label(f.number) + " declares " + std::to_string(len) + " bytes but only " +
                 std::to_string(data_.size() - pos_) + " remain (truncated file?)",
             f.offset);
      }
      f.type = WireType::Len;
      f.payload_offset = base_ + pos_;
      f.bytes = data_.subspan(pos_, static_cast<std::size_t>(len));
      pos_ += static_cast<std::size_t>(len);
      break;
    }
    default:
      fail(field_label(f.number) + " has unsupported wire type " + std::to_string(wt) + " (not protobuf data?)",
           f.offset);
  }
  return f;
}

}  // namespace perfcard::wire
