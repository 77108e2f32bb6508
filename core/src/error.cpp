#include "perfcard/error.h"

#include "utf8.h"

namespace perfcard {

const char* error_code_name(ErrorCode c) {
  switch (c) {
    case ErrorCode::InvalidModel: return "invalid_model";
    case ErrorCode::Malformed: return "malformed";
    case ErrorCode::Limit: return "limit";
    case ErrorCode::BadOption: return "bad_option";
    case ErrorCode::BadData: return "bad_data";
    case ErrorCode::Internal: return "internal";
  }
  return "internal";
}

std::optional<ErrorCode> error_code_from_name(std::string_view name) {
  for (int c = 0; c <= int(ErrorCode::Internal); ++c)
    if (name == error_code_name(ErrorCode(c))) return ErrorCode(c);
  return std::nullopt;
}

std::string escape_text(std::string_view t) {
  // Fast path: most messages are plain ASCII.
  bool plain = true;
  for (unsigned char ch : t) plain = plain && ch >= 0x20 && ch < 0x7f;
  if (plain) return std::string(t);
  std::string out;
  out.reserve(t.size() + 16);
  auto hex = [&out](unsigned char b) {
    static const char digits[] = "0123456789abcdef";
    out += "\\x";
    out += digits[b >> 4];
    out += digits[b & 15];
  };
  for (std::size_t i = 0; i < t.size();) {
    const unsigned char b = static_cast<unsigned char>(t[i]);
    if (b < 0x80) {
      if (b < 0x20 || b == 0x7f) hex(b);
      else out += char(b);
      ++i;
      continue;
    }
    const std::size_t n = utf8_sequence(t, i);
    if (!n) {
      hex(b);
      ++i;
      continue;
    }
    out.append(t.substr(i, n));
    i += n;
  }
  return out;
}

std::string Location::to_string() const {
  std::string s;
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : ", ") + part; };
  if (!node.empty()) add("node " + node + (op_type.empty() ? "" : " (" + op_type + ")"));
  else if (!op_type.empty()) add("op " + op_type);
  if (!graph.empty()) add("in subgraph " + graph);
  if (byte_offset) add("byte offset " + std::to_string(*byte_offset));
  return s;
}

namespace {

Location escaped(Location w) {
  w.node = escape_text(w.node);
  w.op_type = escape_text(w.op_type);
  w.graph = escape_text(w.graph);
  return w;
}

}  // namespace

Error::Error(const std::string& message, Location where, ErrorCode code)
    : Error(escape_text(message), escaped(std::move(where)), code, 0) {}

Error::Error(std::string message, Location where, ErrorCode code, int)
    : std::runtime_error(where.empty() ? message : message + " [" + where.to_string() + "]"),
      message_(std::move(message)),
      where_(std::move(where)),
      code_(code) {}

}  // namespace perfcard
