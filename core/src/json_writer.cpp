#include "json_writer.h"

#include <cmath>

// nlohmann::json's shortest round-trip double formatting alone (one function, not the json type).
#include <nlohmann/detail/conversions/to_chars.hpp>

#include "perfcard/error.h"
#include "utf8.h"

namespace perfcard {
namespace {

bool plain(std::string_view s) {
  for (unsigned char c : s)
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return false;
  return true;
}

}  // namespace

void JsonWriter::quoted(std::string_view s) {
  out_ += '"';
  if (plain(s)) {
    out_ += s;
    out_ += '"';
    return;
  }
  // As nlohmann::json's dump(ensure_ascii = false, replace) escapes: the short escapes, other control
  // characters as \u00xx, UTF-8 as it is, and U+FFFD for each ill-formed part.
  static const char hex[] = "0123456789abcdef";
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out_ += "\\\""; break;
        case '\\': out_ += "\\\\"; break;
        case '\b': out_ += "\\b"; break;
        case '\t': out_ += "\\t"; break;
        case '\n': out_ += "\\n"; break;
        case '\f': out_ += "\\f"; break;
        case '\r': out_ += "\\r"; break;
        default:
          if (c < 0x20) {
            out_ += "\\u00";
            out_ += hex[c >> 4];
            out_ += hex[c & 15];
          } else {
            out_ += char(c);
          }
      }
      ++i;
      continue;
    }
    std::size_t prefix = 1;
    const std::size_t len = utf8_sequence(s, i, &prefix);
    if (len) {
      out_.append(s.substr(i, len));
      i += len;
    } else {
      out_ += "\xEF\xBF\xBD";
      i += prefix;
    }
  }
  out_ += '"';
}

void JsonWriter::newline_indent(std::size_t depth) {
  if (indent_ < 0) return;
  out_ += '\n';
  out_.append(depth * std::size_t(indent_), ' ');
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (stack_.empty()) {
    if (!out_.empty()) throw internal_error("JSON writer: a second top-level value");
    return;
  }
  Level& l = stack_.back();
  if (!l.array) throw internal_error("JSON writer: a value without a key inside an object");
  if (!l.empty) out_ += ',';
  l.empty = false;
  newline_indent(stack_.size());
}

JsonWriter& JsonWriter::key(std::string_view k) {
  if (stack_.empty() || stack_.back().array || after_key_) throw internal_error("JSON writer: a key outside an object");
  Level& l = stack_.back();
  if (!l.empty && !(std::string_view(l.last_key) < k))
    throw internal_error("JSON writer: key '" + std::string(k) + "' after '" + std::string(l.last_key) +
                         "' (keys are written sorted, as nlohmann::json sorts them)");
  if (!l.empty) out_ += ',';
  l.empty = false;
  l.last_key = k;
  newline_indent(stack_.size());
  quoted(k);
  out_ += indent_ < 0 ? ":" : ": ";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_ += '{';
  stack_.push_back({false, true, {}});
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  out_ += '[';
  stack_.push_back({true, true, {}});
  return *this;
}

JsonWriter& JsonWriter::end() {
  if (stack_.empty() || after_key_) throw internal_error("JSON writer: end() without an open object or array");
  const Level l = stack_.back();
  stack_.pop_back();
  if (!l.empty) newline_indent(stack_.size());
  out_ += l.array ? ']' : '}';
  return *this;
}

JsonWriter& JsonWriter::value(double v) {
  before_value();
  if (!std::isfinite(v)) {
    out_ += "null";
    return *this;
  }
  char buf[64];
  char* end = nlohmann::detail::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, std::size_t(end - buf));
  return *this;
}

JsonWriter& JsonWriter::value(std::int64_t v) {
  before_value();
  out_ += std::to_string(v);
  return *this;
}

JsonWriter& JsonWriter::value(std::uint64_t v) {
  before_value();
  out_ += std::to_string(v);
  return *this;
}

JsonWriter& JsonWriter::value(bool v) {
  before_value();
  out_ += v ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view v) {
  before_value();
  quoted(v);
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::value(const std::vector<std::string>& v) {
  begin_array();
  for (const auto& s : v) value(std::string_view(s));
  return end();
}

std::string JsonWriter::take() {
  if (!stack_.empty() || after_key_) throw internal_error("JSON writer: the document is not closed");
  std::string s = std::move(out_);
  out_.clear();
  return s;
}

}  // namespace perfcard
