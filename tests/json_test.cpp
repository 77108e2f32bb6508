// The core's JSON value (perfcard/json.h), checked against nlohmann::json as an independent reader and
// writer: the data files the core embeds and documents built from random values read and print the same;
// what is not JSON is refused with the byte offset of the problem.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "perfcard/json.h"
#include "test_util.h"

using perfcard::Json;
using perfcard::test::error_message;

namespace {

std::string nlohmann_dump(const std::string& text, int indent) {
  return nlohmann::json::parse(text).dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The byte offset of the Error that parsing `text` throws (-1: none, or none located).
long long offset_of_error(const std::string& text) {
  try {
    Json::parse(text, "test");
  } catch (const perfcard::Error& e) {
    return e.where().byte_offset ? (long long)*e.where().byte_offset : -1;
  }
  return -1;
}

}  // namespace

TEST_CASE("the data files the core reads parse and print as nlohmann::json reads and prints them") {
  for (const char* file : {"weights/devices.json", "weights/carbon_regions.json", "weights/roofline.json",
                           "weights/manifest.json"}) {
    INFO(file);
    const std::string text = perfcard::test::read_text(perfcard::test::repo_path(file));
    const Json j = Json::parse(text, file);
    for (int indent : {-1, 2}) CHECK(j.dump(indent) == nlohmann_dump(text, indent));
  }
}

TEST_CASE("numbers keep their kind: integers while they fit 64 bits, else doubles") {
  const Json j = Json::parse(R"([0, -0, 7, -9223372036854775808, 9223372036854775807, 18446744073709551615,
                                 18446744073709551616, -9223372036854775809, 1.5, 1e3, -2.5E-3, 1e-400])",
                             "test");
  const auto& v = j.items();
  CHECK(v[0].kind() == Json::Kind::Int);
  CHECK(v[3].kind() == Json::Kind::Int);
  CHECK(v[5].kind() == Json::Kind::UInt);
  CHECK(v[6].kind() == Json::Kind::Float);
  CHECK(v[7].kind() == Json::Kind::Float);
  CHECK(v[9].kind() == Json::Kind::Float);
  CHECK(v[9].as_number() == 1000);
  CHECK(v[11].as_number() == 0);  // underflows to zero, as in nlohmann
  CHECK(j.dump() == nlohmann_dump(j.dump(), -1));
  // Beyond a double's range: refused (as nlohmann refuses it), never read as infinity.
  CHECK(error_message([] { Json::parse("[1, -1e400]", "test"); }) == "test is not valid JSON: a number beyond the range of a double");
  CHECK(offset_of_error("[1, -1e400]") == 4);
  CHECK(Json(std::uint64_t(18446744073709551615ull)).dump() == "18446744073709551615");
  CHECK(Json(3.0).dump() == "3.0");
  CHECK(Json(3).dump() == "3");
}

TEST_CASE("strings: escapes, surrogate pairs and UTF-8 read as nlohmann reads them") {
  const std::string text = R"(["a\"b\\c\/d\b\f\n\r\t", "\u00e9\u2014\ud83d\ude80", "caf)" "\xC3\xA9" R"("])";
  const Json j = Json::parse(text, "test");
  CHECK(j.items()[0].as_string() == "a\"b\\c/d\b\f\n\r\t");
  CHECK(j.items()[1].as_string() == "\xC3\xA9\xE2\x80\x94\xF0\x9F\x9A\x80");
  CHECK(j.dump() == nlohmann_dump(text, -1));
}

TEST_CASE("objects keep their keys sorted, look them up, and are built as nlohmann builds them") {
  Json o;
  o["zeta"] = 1;
  o["alpha"]["inner"] = "x";
  o["list"].push_back(Json());
  o["list"].push_back(true);
  CHECK(o.dump() == R"({"alpha":{"inner":"x"},"list":[null,true],"zeta":1})");
  const Json& c = o;  // reading: a missing key is null and adds nothing
  CHECK(c["missing"].is_null());
  CHECK(c.find("zeta")->as_number() == 1);
  CHECK(c.string_or("missing", "fallback") == "fallback");
  CHECK(error_message([&] { c.string_or("zeta", ""); }) == "JSON: 'zeta' must be a string, not a number");
  CHECK(error_message([&] { c["zeta"].as_string(); }) == "JSON: expected a string, found a number");
  CHECK(error_message([&] { Json::object({{"a", 1}, {"a", 2}}); }) == "JSON: the key 'a' given twice");
  std::vector<std::string> keys;
  for (const auto& [k, v] : o.members()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"alpha", "list", "zeta"});
}

TEST_CASE("what is not JSON is refused, saying what and at which byte") {
  CHECK(error_message([] { Json::parse("{\"a\": 1,}", "the device catalog"); }) ==
        "the device catalog is not valid JSON: expected a key in quotes");
  CHECK(offset_of_error("{\"a\": 1,}") == 8);
  CHECK(offset_of_error("[1, 2") == 5);
  CHECK(offset_of_error("[01]") == 2);
  CHECK(offset_of_error("[1.]") == 3);
  CHECK(offset_of_error("[tru]") == 1);
  CHECK(offset_of_error("\"abc") == 0);
  CHECK(offset_of_error("\"a\x01\"") == 2);
  CHECK(offset_of_error("\"\\x\"") == 1);
  CHECK(offset_of_error("\"\\ud83d\"") >= 0);
  CHECK(offset_of_error("{} {}") == 3);
  // Not UTF-8 (a stray continuation byte, a cut sequence, an encoded surrogate): nothing could print it back.
  CHECK(error_message([] { Json::parse("[\"ok\", \"a\xFF\"]", "test"); }) == "test is not valid JSON: a string that is not UTF-8");
  CHECK(offset_of_error("[\"ok\", \"a\xFF\"]") == 9);
  CHECK(offset_of_error("\"\xC3\"") == 1);
  CHECK(offset_of_error("\"\xED\xA0\x80\"") == 1);
  CHECK(Json::parse("\"\xF4\x8F\xBF\xBF\"", "test").as_string() == "\xF4\x8F\xBF\xBF");
  CHECK(offset_of_error("") == 0);
  // A duplicate key would silently lose one of the two values: refused at the second.
  CHECK(error_message([] { Json::parse(R"({"a": 1, "a": 2})", "test"); }) ==
        "test is not valid JSON: the key 'a' appears twice in one object");
  CHECK(offset_of_error(R"({"a": 1, "a": 2})") == 9);
  // Nesting is bounded: deep brackets are an error, not a stack overflow.
  CHECK(error_message([] { Json::parse(std::string(100000, '['), "test"); }) ==
        "test is not valid JSON: nested deeper than 128 levels");
  CHECK(Json::parse(std::string(128, '[') + std::string(128, ']'), "test").is_array());
  // The caller's code: options are the caller's (bad_option), data files the build's (bad_data).
  try {
    Json::parse("{", "the options", perfcard::ErrorCode::BadOption);
    FAIL("no error");
  } catch (const perfcard::Error& e) {
    CHECK(e.code() == perfcard::ErrorCode::BadOption);
  }
}
