// The page's two modules exchange a learned model's description, the device rows' queries and the model's
// verdicts as texts (wasm/learned_wire.h). A row must come out of the page as it comes out of the CLI: every
// field crosses exactly, and a text that is not one of these is refused, never half read.
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

TEST_CASE("verdicts and queries cross the wire unchanged, separators and all") {
  std::vector<perfcard::Verdict> vs(3);
  vs[0].correction = -0.1234567890123456789;
  vs[0].uncertainty = 1.0 / 3.0;
  vs[0].band_half = 5e-300;
  vs[0].band_coverage = 0.8;
  vs[0].warn("a warning with a\ttab, a\nnewline and a \\ backslash");
  vs[0].flag(perfcard::OodReason::EmbeddingDistance, "far (distance 3.1)");
  vs[0].flag(perfcard::OodReason::TrainingStep, "");
  vs[1].roofline = true;  // no notes: the next record begins the third verdict
  vs[1].uncertainty = 2;
  vs[2].flag(perfcard::OodReason::UnknownOps, "3 nodes");
  const auto verdicts = perfcard::wasm::parse_verdicts(perfcard::wasm::verdicts_text(vs), vs.size());
  REQUIRE(verdicts.size() == vs.size());
  for (std::size_t i = 0; i < vs.size(); ++i) check_same(verdicts[i], vs[i]);
  CHECK(perfcard::wasm::parse_verdicts(perfcard::wasm::verdicts_text({}), 0).empty());

  std::vector<perfcard::RowQuery> qs(2);
  qs[0].host_given = true;
  qs[0].runtime = "pytorch-eager";
  qs[0].family = "ampere";
  qs[0].device_id = "a100\tsxm";
  qs[0].gpu = true;
  qs[0].roofline_ms = 6.123456789012345;
  qs[0].fallback = std::numeric_limits<double>::denorm_min();
  qs[1].training_step = true;
  qs[1].runtime = "onnxruntime";
  qs[1].device_id = "epyc\n";
  const auto rs = perfcard::wasm::parse_queries(perfcard::wasm::queries_text(qs));
  REQUIRE(rs.size() == qs.size());
  for (std::size_t i = 0; i < qs.size(); ++i) {
    const perfcard::RowQuery &q = qs[i], &r = rs[i];
    CHECK(r.training_step == q.training_step);
    CHECK(r.host_given == q.host_given);
    CHECK(r.runtime == q.runtime);
    CHECK(r.family == q.family);
    CHECK(r.device_id == q.device_id);
    CHECK(r.gpu == q.gpu);
    CHECK(r.roofline_ms == q.roofline_ms);
    CHECK(r.fallback == q.fallback);
  }

  const perfcard::CoreSchemas c{"roofline-3.2026-11-20", "ab\tc", "", "0123"};
  const perfcard::CoreSchemas back = perfcard::wasm::parse_schemas(perfcard::wasm::schemas_text(c));
  CHECK(back.roofline == c.roofline);
  CHECK(back.features == c.features);
  CHECK(back.graph == c.graph);
  CHECK(back.sequence == c.sequence);
}

TEST_CASE("texts that are not verdicts, queries or a description are refused") {
  for (const char* bad : {"1\t0\t0\t0\n", "2\t0\t0\t0\t0\n", "0\t0\tx\t0\t0\n", "0\t0\t0\t0\t0\n",
                          "0\t3ff0000000000000\t3ff000000000000g\t0000000000000000\t0000000000000000\n",
                          "-\ta note before any verdict\n"}) {
    INFO("'" << bad << "'");
    CHECK_THROWS_WITH(perfcard::wasm::parse_verdicts(bad, 1), Catch::Contains("malformed verdict"));
  }
  // A note's reason must be one of the reasons, by number: 7 is past the last, 1.5 is none.
  perfcard::Verdict v;
  v.flag(perfcard::OodReason::UnknownOps, "x");
  const std::string text = perfcard::wasm::verdicts_text({&v, 1});
  const std::size_t at = text.find('\n') + 1;
  for (const char* reason : {"401c000000000000", "3ff8000000000000", "bff0000000000000"}) {
    INFO(reason);
    CHECK_THROWS_WITH(perfcard::wasm::parse_verdicts(text.substr(0, at) + reason + "\tx\n", 1),
                      Catch::Contains("malformed verdict"));
  }
  CHECK_THROWS_WITH(perfcard::wasm::parse_verdicts(text + "only one field\n", 1), Catch::Contains("malformed verdict"));
  // Fewer or more verdicts than rows asked about.
  CHECK_THROWS_WITH(perfcard::wasm::parse_verdicts("", 1), Catch::Contains("sent 0 verdicts for 1 device rows"));
  CHECK_THROWS_WITH(perfcard::wasm::parse_verdicts(text + text, 1), Catch::Contains("sent 2 verdicts for 1 device rows"));
  CHECK_THROWS_WITH(perfcard::wasm::parse_queries("0\t0\tort\n"), Catch::Contains("malformed row query"));
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
      std::vector<perfcard::RowQuery> qs;
      std::vector<float> values;
      std::size_t width = 0;
      for (const perfcard::Device& dev : catalog.devices()) {
        if (dev.is_gpu() != gpu_runtime || dev.id == "this-device") continue;
        perfcard::RowQuery& q = qs.emplace_back();
        q.runtime = runtime;
        roofline->constants().family_of(dev, &q.family);
        q.device_id = dev.id;
        q.gpu = dev.is_gpu();
        q.roofline_ms = 1;
        perfcard::DeviceQuery dq{&dev};
        const auto row = perfcard::feature_row(*prepared, dq, *roofline);
        width = row.size();
        values.insert(values.end(), row.begin(), row.end());
      }
      const perfcard::FeatureRows all{values, width};
      const auto vs = m.decide(lp.state_of(m), qs, all);
      REQUIRE(vs.size() == qs.size());
      const auto back = perfcard::wasm::parse_verdicts(perfcard::wasm::verdicts_text(vs), vs.size());
      for (std::size_t i = 0; i < vs.size(); ++i) {
        check_same(back[i], vs[i]);
        // A batch decides each row as that row alone would be decided.
        const auto alone = m.decide(lp.state_of(m), {&qs[i], 1}, perfcard::FeatureRows{all[i], width});
        check_same(alone.at(0), vs[i]);
        ++rows;
        declined += vs[i].roofline;
        flagged += vs[i].flagged();
      }
    }
  }
  // Both kinds of verdict, and flags, were sent across.
  CHECK(rows > declined);
  CHECK(declined > 0);
  CHECK(flagged > 0);
}
