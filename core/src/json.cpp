#include "perfcard/json.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "json_writer.h"
#include "utf8.h"

namespace perfcard {

namespace {

std::string_view json_kind_name(Json::Kind k) {
  switch (k) {
    case Json::Kind::Null: return "null";
    case Json::Kind::Bool: return "a boolean";
    case Json::Kind::Int: case Json::Kind::UInt: case Json::Kind::Float: return "a number";
    case Json::Kind::String: return "a string";
    case Json::Kind::Array: return "an array";
    case Json::Kind::Object: return "an object";
  }
  return "a value";
}

Error wrong_kind(Json::Kind have, std::string_view want) {
  return data_error("JSON: expected " + std::string(want) + ", found " + std::string(json_kind_name(have)));
}

}  // namespace

// Recursive descent over the text. Nesting is limited so that a hostile document ([[[[...) is an error
// rather than a stack overflow.
class JsonParser {
 public:
  JsonParser(std::string_view text, std::string_view what, ErrorCode code) : text_(text), what_(what), code_(code) {}

  Json document() {
    skip_space();
    Json v = value(0);
    skip_space();
    if (pos_ != text_.size()) fail("text after the end of the document");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 128;

  [[noreturn]] void fail(const std::string& problem) const { fail_at(problem, pos_); }
  [[noreturn]] void fail_at(const std::string& problem, std::size_t at) const {
    throw Error(std::string(what_) + " is not valid JSON: " + problem, Location(std::uint64_t(at)), code_);
  }

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }

  void skip_space() {
    while (!at_end() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) ++pos_;
  }

  void expect_word(std::string_view w) {
    if (text_.substr(pos_, w.size()) != w) fail("unexpected character");
    pos_ += w.size();
  }

  Json value(int depth) {
    if (at_end()) fail("the text ends where a value was expected");
    switch (text_[pos_]) {
      case '{': return object(depth + 1);
      case '[': return array(depth + 1);
      case '"': return Json(string());
      case 't': expect_word("true"); return Json(true);
      case 'f': expect_word("false"); return Json(false);
      case 'n': expect_word("null"); return Json();
      default:
        if (text_[pos_] == '-' || (text_[pos_] >= '0' && text_[pos_] <= '9')) return number();
        fail("unexpected character");
    }
  }

  // Past an opening bracket at `depth`: true when the object or array closes at once (`close`).
  bool open(int depth, char close) {
    if (depth > kMaxDepth) fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
    ++pos_;
    skip_space();
    return consume(close);
  }
  bool consume(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  // After a member or element: true for another (a comma), false at `close`; anything else is an error.
  bool more(char close, const char* expected) {
    skip_space();
    if (consume(',')) return true;
    if (consume(close)) return false;
    fail(expected);
  }

  Json object(int depth) {
    Json o = Json::object();
    if (open(depth, '}')) return o;
    do {
      skip_space();
      if (peek() != '"') fail("expected a key in quotes");
      const std::size_t key_at = pos_;
      std::string key = string();
      skip_space();
      if (!consume(':')) fail("expected ':' after a key");
      skip_space();
      Json v = value(depth);
      const std::size_t slot = o.key_slot(key);
      if (o.has_key_at(slot, key)) fail_at("the key '" + key + "' appears twice in one object", key_at);
      o.insert_member(slot, key, std::move(v));
    } while (more('}', "expected ',' or '}' in an object"));
    return o;
  }

  Json array(int depth) {
    Json a = Json::array();
    if (open(depth, ']')) return a;
    do {
      skip_space();
      a.values_.push_back(value(depth));
    } while (more(']', "expected ',' or ']' in an array"));
    return a;
  }

  unsigned hex4() {
    if (pos_ + 4 > text_.size()) fail("the text ends inside a \\u escape");
    unsigned v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= unsigned(c - '0');
      else if (c >= 'a' && c <= 'f') v |= unsigned(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= unsigned(c - 'A' + 10);
      else fail_at("a \\u escape needs four hex digits", pos_ - 1);
    }
    return v;
  }

  static void append_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  // JSON text is UTF-8 (RFC 8259), and so is every string read: what reads, prints as it was read.
  std::string string() {
    const std::size_t start = pos_++;
    std::string out;
    for (;;) {
      if (at_end()) fail_at("a string that never ends", start);
      const char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20) fail("a control character inside a string (escape it)");
      if (c != '\\') {
        const std::size_t n = utf8_sequence(text_, pos_);
        if (!n) fail("a string that is not UTF-8");
        out.append(text_.substr(pos_, n));
        pos_ += n;
        continue;
      }
      if (++pos_ >= text_.size()) fail("the text ends inside an escape");
      const char e = text_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (text_.substr(pos_, 2) != "\\u") fail("a high surrogate without its low surrogate");
            pos_ += 2;
            const unsigned lo = hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) fail("a high surrogate without its low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail("a low surrogate without a high surrogate before it");
          }
          append_utf8(out, cp);
          break;
        }
        default: fail_at("an unknown escape", pos_ - 2);
      }
    }
  }

  static bool digit(char c) { return c >= '0' && c <= '9'; }

  Json number() {
    const std::size_t start = pos_;
    bool integral = true;
    if (peek() == '-') ++pos_;
    if (peek() == '0') {
      ++pos_;
    } else if (digit(peek())) {
      while (digit(peek())) ++pos_;
    } else {
      fail("a number needs digits");
    }
    if (peek() == '.') {
      integral = false;
      ++pos_;
      if (!digit(peek())) fail("a number needs digits after '.'");
      while (digit(peek())) ++pos_;
    }
    if (peek() == 'e' || peek() == 'E') {
      integral = false;
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (!digit(peek())) fail("a number needs digits in its exponent");
      while (digit(peek())) ++pos_;
    }
    const std::string token(text_.substr(start, pos_ - start));
    if (integral) {
      // As nlohmann::json reads them: a whole number is an integer while it fits 64 bits (signed, or
      // unsigned when positive), else a double.
      errno = 0;
      if (token[0] == '-') {
        const long long v = std::strtoll(token.c_str(), nullptr, 10);
        if (errno == 0) return Json(std::int64_t(v));
      } else {
        const unsigned long long v = std::strtoull(token.c_str(), nullptr, 10);
        if (errno == 0) {
          if (v <= std::uint64_t(std::numeric_limits<std::int64_t>::max())) return Json(std::int64_t(v));
          return Json(std::uint64_t(v));
        }
      }
    }
    const double d = std::strtod(token.c_str(), nullptr);
    if (!std::isfinite(d)) fail_at("a number beyond the range of a double", start);
    return Json(d);
  }

  std::string_view text_;
  std::string_view what_;
  ErrorCode code_;
  std::size_t pos_ = 0;
};

Json Json::parse(std::string_view text, std::string_view what, ErrorCode code) {
  return JsonParser(text, what, code).document();
}

Json Json::object(std::initializer_list<std::pair<std::string_view, Json>> members) {
  Json o = object();
  for (const auto& [k, v] : members) {
    const std::size_t slot = o.key_slot(k);
    if (o.has_key_at(slot, k)) throw internal_error("JSON: the key '" + std::string(k) + "' given twice");
    o.insert_member(slot, k, v);
  }
  return o;
}

std::size_t Json::key_slot(std::string_view key) const {
  return std::size_t(std::lower_bound(keys_.begin(), keys_.end(), key,
                                      [](const std::string& a, std::string_view b) { return std::string_view(a) < b; }) -
                     keys_.begin());
}

Json& Json::insert_member(std::size_t slot, std::string_view key, Json value) {
  keys_.insert(keys_.begin() + std::ptrdiff_t(slot), std::string(key));
  return *values_.insert(values_.begin() + std::ptrdiff_t(slot), std::move(value));
}

bool Json::as_bool() const {
  if (kind_ != Kind::Bool) throw wrong_kind(kind_, "a boolean");
  return num_.b;
}

double Json::as_number() const {
  switch (kind_) {
    case Kind::Int: return double(num_.i);
    case Kind::UInt: return double(num_.u);
    case Kind::Float: return num_.f;
    default: throw wrong_kind(kind_, "a number");
  }
}

const std::string& Json::as_string() const {
  if (kind_ != Kind::String) throw wrong_kind(kind_, "a string");
  return string_;
}

const std::vector<Json>& Json::items() const {
  if (kind_ != Kind::Array) throw wrong_kind(kind_, "an array");
  return values_;
}

const Json* Json::find(std::string_view key) const {
  if (kind_ != Kind::Object) return nullptr;
  const std::size_t slot = key_slot(key);
  return has_key_at(slot, key) ? &values_[slot] : nullptr;
}

const Json& Json::operator[](std::string_view key) const {
  static const Json null_value;
  const Json* v = find(key);
  return v ? *v : null_value;
}

const Json* Json::present(std::string_view key, bool (Json::*is)() const, std::string_view want) const {
  const Json* v = find(key);
  if (!v || v->is_null()) return nullptr;
  if (!(v->*is)())
    throw data_error("JSON: '" + std::string(key) + "' must be " + std::string(want) + ", not " +
                     std::string(json_kind_name(v->kind_)));
  return v;
}

std::string Json::string_or(std::string_view key, std::string_view fallback) const {
  const Json* v = present(key, &Json::is_string, "a string");
  return v ? v->string_ : std::string(fallback);
}

double Json::number_or(std::string_view key, double fallback) const {
  const Json* v = present(key, &Json::is_number, "a number");
  return v ? v->as_number() : fallback;
}

bool Json::bool_or(std::string_view key, bool fallback) const {
  const Json* v = present(key, &Json::is_bool, "a boolean");
  return v ? v->num_.b : fallback;
}

Json& Json::operator[](std::string_view key) {
  if (kind_ == Kind::Null) kind_ = Kind::Object;
  if (kind_ != Kind::Object) throw internal_error("JSON: a key set on " + std::string(json_kind_name(kind_)));
  const std::size_t slot = key_slot(key);
  return has_key_at(slot, key) ? values_[slot] : insert_member(slot, key, Json());
}

void Json::push_back(Json v) {
  if (kind_ == Kind::Null) kind_ = Kind::Array;
  if (kind_ != Kind::Array) throw internal_error("JSON: an element added to " + std::string(json_kind_name(kind_)));
  values_.push_back(std::move(v));
}

void Json::write_to(JsonWriter& w) const {
  switch (kind_) {
    case Kind::Null: w.null(); break;
    case Kind::Bool: w.value(num_.b); break;
    case Kind::Int: w.value(num_.i); break;
    case Kind::UInt: w.value(num_.u); break;
    case Kind::Float: w.value(num_.f); break;
    case Kind::String: w.value(std::string_view(string_)); break;
    case Kind::Array:
      w.begin_array();
      for (const Json& v : values_) v.write_to(w);
      w.end();
      break;
    case Kind::Object:
      w.begin_object();
      for (std::size_t i = 0; i < keys_.size(); ++i) {
        w.key(keys_[i]);
        values_[i].write_to(w);
      }
      w.end();
      break;
  }
}

std::string Json::dump(int indent) const {
  JsonWriter w(indent);
  write_to(w);
  return w.take();
}

}  // namespace perfcard
