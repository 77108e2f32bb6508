// The JSON the core reads (the embedded device catalog, carbon table and roofline constants, the options
// the JS API and the CLI pass, the weights manifest, extra device entries) and the documents it builds as
// a tree (the catalog, analyze). One small value type of the core's own: nlohmann::json's templates were
// a sixth of the page's wasm module, and its first download has a budget (docs/benchmarks.md).
//
// Objects keep their keys sorted (as nlohmann::json does), so dump() prints what nlohmann's dump printed
// for the same document, byte for byte (JsonWriter). parse() is strict JSON (RFC 8259): UTF-8 strings,
// numbers within a double's range, a nesting limit, and a duplicate key refused rather than silently
// overwritten; a failure is an Error that names the input and the byte offset of the problem.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "perfcard/error.h"

namespace perfcard {

class JsonWriter;  // core/src/json_writer.h

class Json {
 public:
  enum class Kind : std::uint8_t { Null, Bool, Int, UInt, Float, String, Array, Object };

  Json() = default;
  Json(std::nullptr_t) {}
  Json(bool b) : kind_(Kind::Bool) { num_.b = b; }
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Json(T v) {
    if constexpr (std::is_signed_v<T>) {
      kind_ = Kind::Int;
      num_.i = std::int64_t(v);
    } else {
      kind_ = Kind::UInt;
      num_.u = std::uint64_t(v);
    }
  }
  Json(double v) : kind_(Kind::Float) { num_.f = v; }
  Json(std::string s) : kind_(Kind::String), string_(std::move(s)) {}
  Json(std::string_view s) : kind_(Kind::String), string_(s) {}
  Json(const char* s) : kind_(Kind::String), string_(s) {}

  static Json array() { return Json(Kind::Array); }
  static Json object() { return Json(Kind::Object); }
  // An object from (key, value) pairs; a key given twice is an internal error.
  static Json object(std::initializer_list<std::pair<std::string_view, Json>> members);

  // `what` names the input in the error ("device catalog"); `code` is the error's code (a data file's
  // BadData, the caller's options BadOption).
  static Json parse(std::string_view text, std::string_view what, ErrorCode code = ErrorCode::BadData);

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::Null; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_number() const { return kind_ == Kind::Int || kind_ == Kind::UInt || kind_ == Kind::Float; }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_array() const { return kind_ == Kind::Array; }
  bool is_object() const { return kind_ == Kind::Object; }

  // The value of a kind the caller has checked; another kind is an Error(BadData) naming both kinds.
  bool as_bool() const;
  double as_number() const;
  const std::string& as_string() const;
  const std::vector<Json>& items() const;  // an array's elements

  // Arrays and objects: their element count; other kinds 0.
  std::size_t size() const { return values_.size(); }
  bool empty() const { return values_.empty(); }

  // Objects. find() is nullptr for a missing key (and on any other kind); operator[] const gives null.
  const Json* find(std::string_view key) const;
  bool contains(std::string_view key) const { return find(key) != nullptr; }
  const Json& operator[](std::string_view key) const;
  // A member's value if present and not null, else `fallback`; present with another kind: Error(BadData).
  std::string string_or(std::string_view key, std::string_view fallback) const;
  double number_or(std::string_view key, double fallback) const;
  bool bool_or(std::string_view key, bool fallback) const;

  struct Member {
    const std::string& key;
    const Json& value;
  };
  class MemberIterator {
   public:
    MemberIterator(const Json* j, std::size_t i) : j_(j), i_(i) {}
    Member operator*() const { return {j_->keys_[i_], j_->values_[i_]}; }
    MemberIterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator!=(const MemberIterator& o) const { return i_ != o.i_; }

   private:
    const Json* j_;
    std::size_t i_;
  };
  struct Members {
    const Json* j;
    MemberIterator begin() const { return {j, 0}; }
    MemberIterator end() const { return {j, j->kind_ == Kind::Object ? j->keys_.size() : 0}; }
  };
  // An object's members in key order: for (const auto& [key, value] : j.members()).
  Members members() const { return {this}; }

  // Building: operator[] turns null into an object and adds a missing key; push_back turns null into an
  // array. On another kind both are internal errors.
  Json& operator[](std::string_view key);
  void push_back(Json v);

  // The text, as nlohmann::json's dump(indent) printed it (invalid UTF-8 in strings replaced by U+FFFD).
  std::string dump(int indent = -1) const;
  // The same into a document being written (as one value).
  void write_to(JsonWriter& w) const;

 private:
  explicit Json(Kind k) : kind_(k) {}
  // Where `key` is or would go in keys_ (sorted), and whether it is there.
  std::size_t key_slot(std::string_view key) const;
  bool has_key_at(std::size_t slot, std::string_view key) const { return slot < keys_.size() && keys_[slot] == key; }
  Json& insert_member(std::size_t slot, std::string_view key, Json value);
  // The member `key` when present and not null (nullptr otherwise); present with another kind: Error(BadData).
  const Json* present(std::string_view key, bool (Json::*is)() const, std::string_view want) const;
  Kind kind_ = Kind::Null;
  union {
    bool b;
    std::int64_t i;
    std::uint64_t u;
    double f;
  } num_{};
  std::string string_;
  std::vector<std::string> keys_;  // objects: sorted
  std::vector<Json> values_;       // arrays: the elements; objects: the values, in keys_' order

  friend class JsonParser;
};

}  // namespace perfcard
