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

#include "perfcard/analysis.h"
#include "perfcard/error.h"
#include "perfcard/onnx_loader.h"
#include "test_util.h"

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
