// The streaming JSON writer (core/src/json_writer.h) against the tree it replaces on the hot path: the same
// document written both ways must be the same bytes, compact and indented, whatever the strings and numbers.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "json_writer.h"
#include "test_util.h"

using nlohmann::json;
using perfcard::JsonWriter;

namespace {

std::string dumped(const json& j, int indent) { return j.dump(indent, ' ', false, json::error_handler_t::replace); }

// Writes `j` with the writer (objects in the tree's key order, which is sorted).
void write(JsonWriter& w, const json& j) {
  switch (j.type()) {
    case json::value_t::object:
      w.begin_object();
      for (auto it = j.begin(); it != j.end(); ++it) {
        w.key(it.key());
        write(w, it.value());
      }
      w.end();
      break;
    case json::value_t::array:
      w.begin_array();
      for (const auto& v : j) write(w, v);
      w.end();
      break;
    case json::value_t::string: w.value(j.get_ref<const std::string&>()); break;
    case json::value_t::boolean: w.value(j.get<bool>()); break;
    case json::value_t::number_integer: w.value(j.get<std::int64_t>()); break;
    case json::value_t::number_float: w.value(j.get<double>()); break;
    case json::value_t::null: w.null(); break;
    default: FAIL("a type the writer has no value for");
  }
}

}  // namespace

TEST_CASE("the writer prints what nlohmann::json's dump prints, compact and indented") {
  const double inf = std::numeric_limits<double>::infinity();
  json doc = {
      {"plain", "device h100-sxm5-80gb"},
      {"escapes", "quote \" backslash \\ tab \t newline \n bell \x07 del \x7f"},
      {"utf8", "caf\xC3\xA9 \xE2\x80\x94 \xF0\x9F\x9A\x80"},
      {"invalid_utf8_and_nul", std::string("cut \xC3 and \xFF\xFE bytes\x80\0", 20)},
      {"numbers", {0.0, -0.0, 1.0, 0.1, 1e-5, 1e20, 123456789.125, 5e-324, 1.7976931348623157e308, -2.5e-7}},
      {"not_finite", {std::nan(""), inf, -inf}},
      {"integers", {0, -1, std::int64_t(1) << 53, std::numeric_limits<std::int64_t>::min()}},
      {"flags", {true, false, nullptr}},
      {"empty_object", json::object()},
      {"empty_array", json::array()},
      {"nested", {{"a", {{"b", json::array({json::object(), json::array({1})})}}}}},
      {"zeta", "last"},
  };
  doc["keys"] = {{"A", 1}, {"B", 2}, {"_", 3}, {"a", 4}, {"a_b", 5}, {"ab", 6}, {"\xC3\xA9", 7}};
  std::mt19937_64 rng(20261126);
  std::vector<double> random;
  for (int i = 0; i < 2000; ++i) {
    std::uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    random.push_back(d);
    random.push_back(std::ldexp(double(rng() % 100000), int(rng() % 40) - 20));
  }
  doc["random"] = random;
  for (int indent : {-1, 0, 2}) {
    JsonWriter w(indent);
    write(w, doc);
    INFO("indent " << indent);
    CHECK(w.take() == dumped(doc, indent));
  }
  JsonWriter w;
  w.begin_array().value(std::vector<std::string>{"x", "y"}).value("z").end();
  CHECK(w.take() == R"([["x","y"],"z"])");
}

TEST_CASE("the writer refuses what a tree could not have printed") {
  using perfcard::test::error_message;
  CHECK(error_message([] { JsonWriter().begin_object().key("b").value(1).key("a"); }) ==
        "JSON writer: key 'a' after 'b' (keys are written sorted, as nlohmann::json sorts them)");
  CHECK(error_message([] { JsonWriter().begin_object().key("a").value(1).key("a"); }) ==
        "JSON writer: key 'a' after 'a' (keys are written sorted, as nlohmann::json sorts them)");
  CHECK(error_message([] { JsonWriter().begin_object().value(1); }) == "JSON writer: a value without a key inside an object");
  CHECK(error_message([] { JsonWriter().begin_array().key("a"); }) == "JSON writer: a key outside an object");
  CHECK(error_message([] { JsonWriter().value(1).value(2); }) == "JSON writer: a second top-level value");
  CHECK(error_message([] { JsonWriter().end(); }) == "JSON writer: end() without an open object or array");
  CHECK(error_message([] { JsonWriter w; w.begin_object(); w.take(); }) == "JSON writer: the document is not closed");
}

TEST_CASE("strings of arbitrary bytes are escaped and replaced as nlohmann::json replaces them") {
  // Model names are arbitrary bytes: every ill-formed UTF-8 sequence (cut, overlong, surrogate, beyond
  // U+10FFFF, stray continuation) must come out as nlohmann's dump(replace) printed it.
  perfcard::test::Rng rng{20261127};
  const unsigned char edges[] = {0x00, 0x1f, 0x22, 0x5c, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf,
                                 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0,
                                 0xf1, 0xf3, 0xf4, 0xf5, 0xff, 'a'};
  for (int i = 0; i < 20000; ++i) {
    std::string s(rng.next() % 9, '\0');
    for (char& c : s) c = char(rng.next() % 3 ? edges[rng.next() % sizeof edges] : rng.next() % 256);
    JsonWriter w;
    w.value(s);
    const std::string got = w.take();
    const std::string want = dumped(json(s), -1);
    if (got != want) {
      std::string hex;
      for (unsigned char c : s) hex += "0123456789abcdef"[c >> 4], hex += "0123456789abcdef"[c & 15], hex += ' ';
      INFO("bytes " << hex);
      CHECK(got == want);
      break;
    }
  }
}
