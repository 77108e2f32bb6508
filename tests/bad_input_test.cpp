// The bad-input corpus (tests/data/bad/, made by scripts/fixtures/make_bad_corpus.py): every file must be rejected
// with a perfcard::Error whose what() is exactly the message in expected.json, naming what is wrong and
// where (byte offset, node, op, subgraph). Entries with "unknown_ops" instead must analyze, listing those
// ops. "dims" binds symbolic dims for the analysis. See docs/robustness.md.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "model_builder.h"
#include "perfcard/analysis.h"
#include "perfcard/error.h"
#include "perfcard/onnx_loader.h"
#include "test_util.h"

#if !defined(__EMSCRIPTEN__)
#include <sys/mman.h>
#endif

namespace {

nlohmann::json expected_corpus() {
  std::ifstream f(perfcard::test::data_path("bad/expected.json"));
  REQUIRE(f.good());
  return nlohmann::json::parse(f);
}

perfcard::Analysis load_and_analyze(const std::string& file, const nlohmann::json& entry) {
  auto bytes = perfcard::test::read_file(perfcard::test::data_path("bad/" + file));
  perfcard::Model m = perfcard::load_model(bytes);
  perfcard::AnalyzeOptions options;
  if (entry.contains("dims"))
    for (const auto& [name, value] : entry["dims"].items()) options.dims.values[name] = value.get<std::int64_t>();
  return perfcard::analyze(m, options);
}

}  // namespace

TEST_CASE("every bad-input file has an expectation, and every expectation a file") {
  auto expected = expected_corpus();
  std::set<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(perfcard::test::data_path("bad")))
    if (e.path().extension() == ".onnx") files.insert(e.path().filename().string());
  std::set<std::string> listed;
  for (const auto& [name, entry] : expected.items()) listed.insert(name);
  CHECK(files == listed);
  CHECK(files.size() >= 70);
}

TEST_CASE("bad input is rejected with the exact message naming what and where") {
  auto expected = expected_corpus();
  for (const auto& [file, entry] : expected.items()) {
    if (!entry.contains("error")) continue;
    const std::string want = entry["error"].get<std::string>();
    SECTION(file) {
      INFO("file: " << file);
      std::string got;
      try {
        load_and_analyze(file, entry);
        got = "(no error)";
      } catch (const perfcard::Error& e) {
        got = e.what();
      }
      CHECK(got == want);
    }
  }
}

TEST_CASE("inputs that are odd but valid analyze, listing the ops without a rule") {
  auto expected = expected_corpus();
  for (const auto& [file, entry] : expected.items()) {
    if (!entry.contains("unknown_ops")) continue;
    SECTION(file) {
      INFO("file: " << file);
      perfcard::Analysis a;
      REQUIRE_NOTHROW(a = load_and_analyze(file, entry));
      CHECK(a.shapes.unknown_ops == entry["unknown_ops"].get<std::vector<std::string>>());
    }
  }
}

TEST_CASE("errors carry their location as data, not only in the text") {
  auto bytes = perfcard::test::read_file(perfcard::test::data_path("bad/missing_producer.onnx"));
  try {
    perfcard::load_model(bytes);
    FAIL("no error");
  } catch (const perfcard::Error& e) {
    CHECK(e.where().node == "'add'");
    CHECK(e.where().op_type == "Add");
    CHECK(e.where().byte_offset.has_value());
    CHECK(e.message().find("'ghost'") != std::string::npos);
  }
}

// Limits that need big files to reach at their defaults, reached here with small ones (the generated worst
// cases of scripts/bench_worst_cases.sh reach them at the defaults).
#if !defined(__EMSCRIPTEN__)  // wasm's memory ends at 4 GiB: no such input exists there
TEST_CASE("an input past 4 GiB is refused before a byte of it is read (nodes keep 32-bit offsets)") {
  const std::size_t n = std::size_t(perfcard::kMaxModelBytes) + 1;
  // Address space only: refused before any page is touched.
  void* p = mmap(nullptr, n, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  REQUIRE(p != MAP_FAILED);
  try {
    perfcard::load_model({static_cast<const std::uint8_t*>(p), n});
    FAIL("loaded");
  } catch (const perfcard::Error& e) {
    CHECK(e.code() == perfcard::ErrorCode::Limit);
    CHECK(std::string(e.what()) == "the input is 4294967297 bytes; PerfCard reads ONNX files up to 4 GiB (protobuf's own "
                                   "limit is 2 GiB: larger models keep their weights in external data files)");
  }
  munmap(p, n);
}
#endif

TEST_CASE("attribute values and typed-data fields are refused past their limits, before they are stored") {
  perfcard::LoadLimits small;
  small.max_attribute_values = 8;
  small.max_const_elements = 4;
  {
    perfcard::test::ModelBuilder b;
    b.input("x", 1, {std::int64_t(2)});
    auto& n = b.node("Transpose", {"x"}, {"y"}, "tr");
    perfcard::test::ModelBuilder::attr(n, "perm", std::vector<std::int64_t>(9, 0));
    b.output("y");
    auto bytes = b.bytes();
    try {
      perfcard::load_model(bytes, small);
      FAIL("no error");
    } catch (const perfcard::Error& e) {
      CHECK(std::string(e.what()).find("attribute 'perm': holds more than 8 values (9 so far)") != std::string::npos);
      CHECK(e.code() == perfcard::ErrorCode::Limit);
    }
    CHECK_NOTHROW(perfcard::load_model(bytes));  // within the default limit
  }
  {
    // A [2] int64 initializer written as 6 unpacked int64_data fields (protobuf writers pack them, so the
    // bytes are put together here): the loader keeps at most max_const_elements of them.
    auto varint = [](std::string& out, std::uint64_t v) {
      do {
        out += char((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
      } while (v);
    };
    auto field = [&](int number, const std::string& payload) {
      std::string out;
      varint(out, std::uint64_t(number) << 3 | 2);
      varint(out, payload.size());
      return out + payload;
    };
    std::string tensor = field(8, "c") + "\x08\x02" + "\x10\x07";  // name, dims 2, data_type INT64
    for (int i = 0; i < 6; ++i) tensor += std::string("\x38") + char(i + 1);  // int64_data, unpacked
    std::string node = field(1, "c") + field(2, "y") + field(4, "Identity");
    std::string graph = field(1, node) + field(5, tensor) + field(12, field(1, "y"));
    std::string model = std::string("\x08\x08") + field(8, field(1, "") + "\x10\x11") + field(7, graph);
    std::vector<std::uint8_t> bytes(model.begin(), model.end());
    // At the default limit the 6 fields are decoded, and 6 values for 2 elements refused; past the small
    // limit they are refused by count, never stored.
    CHECK_THROWS_WITH(perfcard::load_model(bytes), Catch::Contains("holds 6 elements but its dims need 2"));
    CHECK_THROWS_WITH(perfcard::load_model(bytes, small), Catch::Contains("holds 6 typed-data fields but its dims need 2"));
  }
}

TEST_CASE("errors carry a stable code and escape what would cut their text") {
  auto code_of = [](const std::string& file) {
    auto bytes = perfcard::test::read_file(perfcard::test::data_path("bad/" + file));
    try {
      perfcard::Model m = perfcard::load_model(bytes);
      perfcard::analyze(m, {});
    } catch (const perfcard::Error& e) {
      return std::string(perfcard::error_code_name(e.code()));
    }
    return std::string("none");
  };
  CHECK(code_of("empty.onnx") == "malformed");
  CHECK(code_of("truncated_half.onnx") == "malformed");
  CHECK(code_of("rank_100.onnx") == "limit");
  CHECK(code_of("deep_subgraph_nesting.onnx") == "limit");
  CHECK(code_of("cycle.onnx") == "invalid_model");
  CHECK(code_of("attribute_wrong_type.onnx") == "invalid_model");
  CHECK(code_of("opset_99.onnx") == "limit");

  perfcard::Error e(std::string("bad \0 byte and \xff", 16), perfcard::Location{{}, std::string("n\0x", 3), "Op", {}});
  CHECK(std::string(e.what()) == "bad \\x00 byte and \\xff [node n\\x00x (Op)]");
  CHECK(perfcard::escape_text("caf\xc3\xa9 \xe2\x82\xac ok") == "caf\xc3\xa9 \xe2\x82\xac ok");  // UTF-8 stays
  CHECK(perfcard::escape_text("\xc0\xaf") == "\\xc0\\xaf");  // an overlong form is not UTF-8
  CHECK(perfcard::option_error("x").code() == perfcard::ErrorCode::BadOption);
  // A code crosses the wasm modules' boundary as its name, and comes back as the same code.
  for (const auto c : {perfcard::ErrorCode::InvalidModel, perfcard::ErrorCode::Malformed, perfcard::ErrorCode::Limit,
                       perfcard::ErrorCode::BadOption, perfcard::ErrorCode::BadData, perfcard::ErrorCode::Internal})
    CHECK(perfcard::error_code_from_name(perfcard::error_code_name(c)) == c);
  CHECK_FALSE(perfcard::error_code_from_name("bad-data").has_value());
}

TEST_CASE("a bound dim that meets a size the graph fixes is named, with the size the model takes") {
  perfcard::test::ModelBuilder b;
  b.input("x", 1, {"batch", "sequence", 8});
  b.initializer("positions", 1, {4, 8});
  b.node("Add", {"x", "positions"}, {"y"}, "/embeddings/Add");
  b.output("y");
  const auto model = perfcard::load_model(b.bytes());
  auto at = [&](std::int64_t sequence) {
    perfcard::AnalyzeOptions o;
    o.dims.values = {{"batch", 2}, {"sequence", sequence}};
    return perfcard::test::error_message([&] { perfcard::analyze(model, o); });
  };
  CHECK(at(4) == "(no error)");
  CHECK(at(6) == "cannot broadcast dims 6 and 4: dim 'sequence' = 6 exceeds the 4 the graph fixes here (a table of 4 "
                 "learned positions, say): the model takes 'sequence' up to 4");
  CHECK(at(3) == "cannot broadcast dims 3 and 4: dim 'sequence' = 3 meets a size the graph fixes at 4 here: the model "
                 "takes 'sequence' = 4");
  // Two names bound to the same number are both named; a clash of two fixed sizes says only that.
  perfcard::AnalyzeOptions both;
  both.dims.values = {{"batch", 6}, {"sequence", 6}};
  CHECK(perfcard::test::error_message([&] { perfcard::analyze(model, both); }).find("dim 'batch' or 'sequence' = 6 exceeds") !=
        std::string::npos);
  perfcard::test::ModelBuilder f;
  f.input("x", 1, {3, 8});
  f.initializer("w", 1, {4, 8});
  f.node("Add", {"x", "w"}, {"y"});
  f.output("y");
  const auto fixed = perfcard::load_model(f.bytes());
  CHECK(perfcard::test::error_message([&] { perfcard::analyze(fixed, {}); }) == "cannot broadcast dims 3 and 4");
}
