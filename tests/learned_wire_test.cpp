// The page's two modules exchange a learned model's description, a row's query and the model's verdict as
// texts (wasm/learned_wire.h). A row must come out of the page as it comes out of the CLI: every field
// crosses exactly, and a text that is not one of these is refused, never half read.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "learned_wire.h"
#include "perfcard/analysis.h"
#include "perfcard/device.h"
#include "perfcard/learned_predictor.h"
#include "perfcard/native_learned.h"
#include "perfcard/predictor_registry.h"
#include "test_util.h"

namespace {

using perfcard::test::read_file;
using perfcard::test::read_text;
using perfcard::test::repo_path;

void check_same(const perfcard::Verdict& a, const perfcard::Verdict& b) {
  CHECK(a.roofline == b.roofline);
  CHECK(a.correction == b.correction);  // exactly: a double crosses as its bits
  CHECK(a.uncertainty == b.uncertainty);
  CHECK(a.band_half == b.band_half);
  CHECK(a.band_coverage == b.band_coverage);
  REQUIRE(a.notes.size() == b.notes.size());
  for (std::size_t i = 0; i < a.notes.size(); ++i) {
    CHECK(a.notes[i].reason == b.notes[i].reason);
    CHECK(a.notes[i].words == b.notes[i].words);
  }
}

}  // namespace

TEST_CASE("a verdict and a query cross the wire unchanged, separators and all") {
  perfcard::Verdict v;
  v.correction = -0.1234567890123456789;
  v.uncertainty = 1.0 / 3.0;
  v.band_half = 5e-300;
  v.band_coverage = 0.8;
  v.warn("a warning with a\ttab, a\nnewline and a \\ backslash");
  v.flag(perfcard::OodReason::EmbeddingDistance, "far (distance 3.1)");
  v.flag(perfcard::OodReason::TrainingStep, "");
  check_same(perfcard::wasm::parse_verdict(perfcard::wasm::verdict_text(v)), v);

  perfcard::RowQuery q;
  q.host_given = true;
  q.runtime = "pytorch-eager";
  q.family = "ampere";
  q.device_id = "a100\tsxm";
  q.gpu = true;
  q.roofline_ms = 6.123456789012345;
  q.fallback = std::numeric_limits<double>::denorm_min();
  const perfcard::RowQuery r = perfcard::wasm::parse_query(perfcard::wasm::query_text(q));
  CHECK(r.training_step == q.training_step);
  CHECK(r.host_given == q.host_given);
  CHECK(r.runtime == q.runtime);
  CHECK(r.family == q.family);
  CHECK(r.device_id == q.device_id);
  CHECK(r.gpu == q.gpu);
  CHECK(r.roofline_ms == q.roofline_ms);
  CHECK(r.fallback == q.fallback);

  const perfcard::CoreSchemas c{"roofline-3.2026-11-20", "ab\tc", "", "0123"};
  const perfcard::CoreSchemas back = perfcard::wasm::parse_schemas(perfcard::wasm::schemas_text(c));
  CHECK(back.roofline == c.roofline);
  CHECK(back.features == c.features);
  CHECK(back.graph == c.graph);
  CHECK(back.sequence == c.sequence);
}

TEST_CASE("texts that are not a verdict, a query or a description are refused") {
  for (const char* bad : {"", "1\t0\t0\t0\n", "2\t0\t0\t0\t0\n", "0\t0\tx\t0\t0\n", "0\t0\t0\t0\t0\n",
                          "0\t3ff0000000000000\t3ff000000000000g\t0000000000000000\t0000000000000000\n"}) {
    INFO("'" << bad << "'");
    CHECK_THROWS_WITH(perfcard::wasm::parse_verdict(bad), Catch::Contains("malformed verdict"));
  }
  // A note's reason must be one of the reasons, by number: 7 is past the last, 1.5 is none.
  perfcard::Verdict v;
  v.flag(perfcard::OodReason::UnknownOps, "x");
  std::string text = perfcard::wasm::verdict_text(v);
  const std::size_t at = text.find('\n') + 1;
  for (const char* reason : {"401c000000000000", "3ff8000000000000", "bff0000000000000"}) {
    INFO(reason);
    CHECK_THROWS_WITH(perfcard::wasm::parse_verdict(text.substr(0, at) + reason + "\tx\n"), Catch::Contains("malformed verdict"));
  }
  CHECK_THROWS_WITH(perfcard::wasm::parse_verdict(text + "only one field\n"), Catch::Contains("malformed verdict"));
  CHECK_THROWS_WITH(perfcard::wasm::parse_query("0\t0\tort\n"), Catch::Contains("malformed row query"));
  CHECK_THROWS_WITH(perfcard::wasm::parse_schemas("a\tb\n"), Catch::Contains("malformed schema list"));
  CHECK_THROWS_WITH(perfcard::wasm::parse_description("name\ttrees\n"), Catch::Contains("malformed model description"));
  CHECK_THROWS_WITH(perfcard::wasm::parse_description("name\ttrees\nversion\tv\nsize\t3\n"),
                    Catch::Contains("malformed model description"));
}

TEST_CASE("the committed models' descriptions and verdicts cross the wire as the CLI has them") {
  auto constants = perfcard::RooflineConstants::parse(read_text(repo_path("weights/roofline.json")));
  auto roofline = std::make_shared<const perfcard::RooflinePredictor>(constants);
  const auto catalog = perfcard::DeviceCatalog::parse(read_text(repo_path("weights/devices.json")));
  std::vector<std::shared_ptr<const perfcard::Predictor>> loaded;
  for (auto name : perfcard::learned_predictor_names())
    loaded.push_back(perfcard::make_learned_predictor(read_file(repo_path("weights/" + std::string(name) + ".pcwt")),
                                                      roofline, perfcard::NativeLearned{}, loaded));
  const auto model = perfcard::test::load_example("resnet50.onnx");
  const auto analysis = perfcard::analyze(model, {});
  int rows = 0, declined = 0, flagged = 0;
  for (const auto& p : loaded) {
    const auto& m = *dynamic_cast<const perfcard::LearnedPredictor&>(*p).model();
    INFO(m.name());
    const auto d = perfcard::wasm::parse_description(perfcard::wasm::description_text(m));
    CHECK(d.name == m.name());
    CHECK(d.version == m.version());
    CHECK(d.reads_graph == m.reads_graph());
    CHECK(d.reads_sequence == m.reads_sequence());
    CHECK(d.accuracy.devices == m.training_accuracy().devices);
    for (const auto& [mine, theirs] : {std::pair{&d.accuracy.families, &m.training_accuracy().families},
                                       std::pair{&d.accuracy.unseen, &m.training_accuracy().unseen}}) {
      REQUIRE(mine->size() == theirs->size());
      for (const auto& [family, f] : *theirs) {
        CHECK(mine->at(family).mape == f.mape);
        CHECK(mine->at(family).rows == f.rows);
        CHECK(mine->at(family).beats_roofline == f.beats_roofline);
      }
    }
    // Runtimes the models trained on and one they did not (declined rows), each on its kind of device.
    for (const char* runtime : {"pytorch-eager", "pytorch-cuda-graphs", "onnxruntime", "onnxruntime-web"}) {
      const bool gpu_runtime = std::string(runtime).rfind("pytorch", 0) == 0;
      const auto prepared = p->prepare({&model, &analysis, runtime, perfcard::Precision::FP16, 1});
      const auto& lp = dynamic_cast<const perfcard::LearnedPrepared&>(*prepared);
      for (const perfcard::Device& dev : catalog.devices()) {
        if (dev.is_gpu() != gpu_runtime || dev.id == "this-device") continue;
        perfcard::RowQuery q;
        q.runtime = runtime;
        roofline->constants().family_of(dev, &q.family);
        q.device_id = dev.id;
        q.gpu = dev.is_gpu();
        q.roofline_ms = 1;
        perfcard::DeviceQuery dq{&dev};
        const auto row = perfcard::feature_row(*prepared, dq, *roofline);
        const perfcard::Verdict v = m.decide(lp.state_of(m), q, row);
        check_same(perfcard::wasm::parse_verdict(perfcard::wasm::verdict_text(v)), v);
        ++rows;
        declined += v.roofline;
        flagged += v.flagged();
      }
    }
  }
  // Both kinds of verdict, and flags, were sent across.
  CHECK(rows > declined);
  CHECK(declined > 0);
  CHECK(flagged > 0);
}
