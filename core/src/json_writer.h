// A streaming JSON writer whose text is byte for byte what nlohmann::json's dump(indent, ' ', false,
// error_handler_t::replace) prints for the same document: the documents the page asks for on every setting
// change are written straight to text, without building a tree of maps first (that was more than half of
// a sweep's time in the CLI's benchmark). nlohmann::json sorts an object's keys; so must the caller, and
// the writer throws Error(internal) on a key that does not sort after the one before it. Doubles go
// through nlohmann's own shortest round-trip conversion (NaN and infinities print null, as there); strings
// are escaped as its dump escapes them, invalid UTF-8 replaced by U+FFFD.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace perfcard {

class JsonWriter {
 public:
  explicit JsonWriter(int indent = -1) : indent_(indent) {}

  JsonWriter& begin_object();
  JsonWriter& begin_array();
  JsonWriter& end();  // closes the innermost object or array
  JsonWriter& key(std::string_view k);

  JsonWriter& value(double v);
  JsonWriter& value(std::int64_t v);
  JsonWriter& value(std::uint64_t v);
  JsonWriter& value(int v) { return value(std::int64_t(v)); }
  JsonWriter& value(bool v);
  JsonWriter& value(std::string_view v);
  JsonWriter& value(const char* v) { return value(std::string_view(v)); }
  JsonWriter& value(const std::string& v) { return value(std::string_view(v)); }
  JsonWriter& null();
  // An array of strings.
  JsonWriter& value(const std::vector<std::string>& v);

  template <class T>
  JsonWriter& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }

  // The text; the writer is empty afterwards. Throws Error(internal) while an object or array is open.
  std::string take();

 private:
  struct Level {
    bool array = false;
    bool empty = true;
    std::string last_key;
  };
  void before_value();
  void newline_indent(std::size_t depth);
  void quoted(std::string_view s);  // a key or a string value, in quotes, escaped as nlohmann escapes it

  int indent_;
  std::string out_;
  std::vector<Level> stack_;
  bool after_key_ = false;
};

}  // namespace perfcard
