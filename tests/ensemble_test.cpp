// The ensemble from the committed files: its latency is the weighted geometric mean of its members' (the
// file's weights, the members as loaded), its band holds the latency and is the file's calibrated one, a
// device family without held-out rows gets the roofline, flagged; and it needs its members loaded first.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <string>
#include <tuple>

#include "perfcard/device.h"
#include "perfcard/learned_ensemble.h"
#include "perfcard/learned_predictor.h"
#include "perfcard/native_learned.h"
#include "perfcard/error.h"
#include "perfcard/native_networks.h"
#include "perfcard/onnx_loader.h"
#include "perfcard/predictor_registry.h"
#include "test_util.h"

namespace {

using perfcard::test::read_file;
using perfcard::test::read_text;
using perfcard::test::repo_path;

struct Loaded {
  perfcard::DeviceCatalog catalog;
  perfcard::PredictorSet set;
  std::vector<std::uint8_t> ensemble_bytes;
};

Loaded load_all() {
  auto constants = perfcard::RooflineConstants::parse(read_text(repo_path("weights/roofline.json")));
  Loaded l{perfcard::DeviceCatalog::parse(read_text(repo_path("weights/devices.json"))), {}, {}};
  l.set.roofline = std::make_shared<const perfcard::RooflinePredictor>(constants);
  const std::string manifest = read_text(repo_path("weights/manifest.json"));
  for (auto name : perfcard::learned_predictor_names()) {
    const std::string file = std::string(name) + ".pcwt";
    const auto bytes = read_file(repo_path("weights/" + file));
    l.set.learned.push_back(perfcard::load_learned_predictor(manifest, file, bytes, l.set.roofline, perfcard::NativeLearned{}, l.set.learned));
    if (name == "ensemble") l.ensemble_bytes = bytes;
  }
  return l;
}

// The loaded ensemble's model.
std::shared_ptr<const perfcard::LearnedEnsemble> ensemble_of(const Loaded& l) {
  const auto p = std::dynamic_pointer_cast<const perfcard::LearnedPredictor>(perfcard::select_predictor("ensemble", l.set));
  return p ? std::dynamic_pointer_cast<const perfcard::LearnedEnsemble>(p->model()) : nullptr;
}

}  // namespace

TEST_CASE("the ensemble is its members' weighted geometric mean, with its calibrated band") {
  const Loaded l = load_all();
  const auto ensemble = perfcard::select_predictor("ensemble", l.set);
  const auto file = perfcard::read_weights(l.ensemble_bytes);
  const auto members = file.get_strings("ensemble.members");  // the roofline, then learned ones
  const std::size_t M = members.size();
  std::vector<std::shared_ptr<const perfcard::Predictor>> by_member;
  for (const auto& m : members) by_member.push_back(perfcard::select_predictor(m, l.set));
  const auto groups = file.get_strings("ensemble.groups");
  const auto w = file.tensor("group.weights").f32();
  // The device family's own group where the file has one, else its kind's.
  auto weights_of = [&](const perfcard::Device& d) {
    std::string family;
    l.set.roofline->constants().family_of(d, &family);
    for (const std::string& group : {family, std::string(d.is_gpu() ? "gpu" : "cpu")})
      for (std::size_t g = 0; g < groups.size(); ++g)
        if (groups[g] == group) return std::vector<double>(w.begin() + std::ptrdiff_t(M * g), w.begin() + std::ptrdiff_t(M * g + M));
    FAIL("no group for " << d.id);
    return std::vector<double>{};
  };

  const auto model = perfcard::test::load_example("resnet50.onnx");
  for (const char* id : {"rtx4090", "titanxp", "rtx3090", "cpu-build-vm-amd-epyc-zen4"}) {
    const perfcard::Device& d = l.catalog.get(id);
    const std::int64_t batch = d.is_gpu() ? 8 : 1;
    perfcard::AnalyzeOptions ao;
    ao.dims.values["batch"] = batch;
    const auto analysis = perfcard::analyze(model, ao);
    const perfcard::PredictorSubject s{&model, &analysis, d.is_gpu() ? "pytorch-eager" : "onnxruntime",
                                       d.is_gpu() ? perfcard::Precision::FP16 : perfcard::Precision::FP32, batch};
    const auto p = ensemble->prepare(s);
    const perfcard::DeviceQuery q{&d};
    const auto out = ensemble->predict(*p, q);
    INFO(id << ": " << out.latency_ms << " ms");
    REQUIRE(out.predictor == "ensemble");
    const auto wt = weights_of(d);
    double mixed = 0;
    for (std::size_t i = 0; i < M; ++i) mixed += wt[i] * std::log(by_member[i]->predict(*by_member[i]->prepare(s), q).latency_ms);
    CHECK(std::log(out.latency_ms) == Approx(mixed).epsilon(1e-9).margin(1e-9));
    CHECK(out.band_coverage == Approx(file.get_float("band.coverage")));
    CHECK(out.band_low_ms < out.latency_ms);
    CHECK(out.band_high_ms > out.latency_ms);
    CHECK(std::log(out.band_high_ms / out.latency_ms) == Approx(std::log(out.latency_ms / out.band_low_ms)));
    CHECK(out.uncertainty > 0);
  }
}

TEST_CASE("the ensemble gives a device family without held-out rows to the roofline, and says so") {
  const Loaded l = load_all();
  const auto ensemble = perfcard::select_predictor("ensemble", l.set);
  const auto model = perfcard::test::load_example("resnet50.onnx");
  const auto analysis = perfcard::analyze(model, {});
  const auto p = ensemble->prepare({&model, &analysis, "pytorch-eager", perfcard::Precision::FP16, 1});
  // A catalog GPU whose family has no held-out rows in the file (volta in the 2026-11-27 file: DLE's V100
  // rows are ResNet-50, a training family); the hopper family had none until our H100/H200 rows.
  const perfcard::Device* found = nullptr;
  for (const perfcard::Device& c : l.catalog.devices()) {
    std::string family;
    l.set.roofline->constants().family_of(c, &family);
    if (c.is_gpu() && !ensemble->accuracy().count(family)) {
      found = &c;
      break;
    }
  }
  REQUIRE(found);
  const perfcard::Device& d = *found;
  INFO(d.id);
  const auto out = ensemble->predict(*p, {&d});
  CHECK(out.predictor == "roofline");
  CHECK(out.out_of_distribution);
  CHECK(out.ood_reasons == std::vector{perfcard::OodReason::NoHeldOutRows});
  CHECK(out.declined());
  CHECK(out.latency_ms == Approx(l.set.roofline->predict(*p, {&d}).latency_ms));
  bool said = false;
  for (const auto& w : out.warnings) said |= w.find("so the roofline predicts") != std::string::npos;
  CHECK(said);
}

TEST_CASE("the ensemble's file needs its members loaded first, and names them") {
  auto constants = perfcard::RooflineConstants::parse(read_text(repo_path("weights/roofline.json")));
  auto roofline = std::make_shared<const perfcard::RooflinePredictor>(constants);
  const auto bytes = read_file(repo_path("weights/ensemble.pcwt"));
  CHECK(perfcard::test::error_message([&] { perfcard::make_learned_predictor(bytes, roofline, perfcard::NativeLearned{}); }) ==
        "the ensemble combines the roofline with trees; load trees.pcwt before ensemble.pcwt");
}

TEST_CASE("the ensemble's out-of-distribution distance: zero at a centroid, growing away from it") {
  const Loaded l = load_all();
  const auto e = ensemble_of(l);
  REQUIRE(e);
  const auto file = perfcard::read_weights(l.ensemble_bytes);
  const auto c = file.tensor("ood.centroids").f32();
  const auto dims = std::size_t(file.tensor("ood.centroids").dims[1]);
  std::vector<float> at(c.begin(), c.begin() + std::ptrdiff_t(dims));
  CHECK(e->embedding_distance(at) == Approx(0).margin(1e-6));
  const auto scale = file.tensor("ood.scale").f32();
  std::vector<float> far = at;
  for (std::size_t j = 0; j < dims; ++j) far[j] += 100 * scale[j];
  CHECK(e->embedding_distance(far) > e->distance_threshold());
  CHECK(perfcard::test::error_message([&] { e->embedding_distance(std::vector<float>(dims + 1)); })
            .find("model embedding of") != std::string::npos);
}

TEST_CASE("auto with every learned predictor loaded: per device, the one with the lowest error measured where it stands") {
  const Loaded l = load_all();
  const auto autos = perfcard::select_predictor("auto", l.set);
  const auto model = perfcard::test::load_example("resnet50.onnx");
  const auto analysis = perfcard::analyze(model, {});
  const auto p = autos->prepare({&model, &analysis, "pytorch-eager", perfcard::Precision::FP16, 1});
  int learned = 0;
  for (const perfcard::Device& d : l.catalog.devices()) {
    if (!d.is_gpu()) continue;
    std::string family;
    l.set.roofline->constants().family_of(d, &family);
    // Held-out model families on a device the predictor trained on, leave one device out on another.
    const perfcard::Predictor* best = nullptr;
    double best_mape = 0;
    for (const auto& c : l.set.learned) {
      const perfcard::FamilyAccuracy* acc = c->accuracy_for(family, d.id);
      if (acc && acc->beats_roofline && (!best || acc->mape < best_mape)) best = c.get(), best_mape = acc->mape;
    }
    const auto out = autos->predict(*p, {&d});
    INFO(d.id << " (" << family << "): " << out.predictor);
    if (!best) {
      CHECK(out.predictor == "roofline");
      continue;
    }
    // Its row, out of distribution or not (flagged rows keep the learned figure: on held-out rows it was
    // nearer than the roofline's for every reason of the flag).
    const auto own = best->predict(*p, {&d});
    CHECK(out.predictor == best->name());
    CHECK(out.latency_ms == own.latency_ms);
    CHECK(out.out_of_distribution == own.out_of_distribution);
    CHECK(out.uncertainty == own.uncertainty);
    ++learned;
  }
  CHECK(learned > 0);
}

TEST_CASE("a model far from every model trained on is flagged, and the row says how far") {
  const Loaded l = load_all();
  const auto ensemble = perfcard::select_predictor("ensemble", l.set);
  const auto e = ensemble_of(l);
  REQUIRE(e);
  // Toy models at a batch no training row had: which of them the learned embedding places farthest is the
  // training's doing (a retrain moved the toy convolution inside), but a working embedding places one of
  // them beyond what it saw; the farthest is the model this test flags.
  // The prepared states point at their model and analysis: both stay where they were made.
  std::deque<perfcard::Model> models;
  std::deque<perfcard::Analysis> analyses;
  std::unique_ptr<perfcard::Prepared> p;
  double d = -1;
  for (const char* name : {"models/tiny_conv.onnx", "models/bert_tiny.onnx", "models/vit_tiny.onnx"}) {
    const auto& m = models.emplace_back(perfcard::load_model(read_file(perfcard::test::data_path(name))));
    perfcard::AnalyzeOptions ao;
    ao.dims.values["batch"] = 4096;
    const auto& a = analyses.emplace_back(perfcard::analyze(m, ao));
    auto prepared = ensemble->prepare({&m, &a, "pytorch-eager", perfcard::Precision::FP16, 4096});
    const auto& g = dynamic_cast<const perfcard::LearnedPrepared&>(*prepared);
    const double dist = e->embedding_distance(e->ood_embedding(g.state_of(*e)));
    if (dist > d) {
      d = dist;
      p = std::move(prepared);
    }
  }
  REQUIRE(d > e->distance_threshold());
  const auto out = ensemble->predict(*p, {&l.catalog.get("rtx4090")});
  CHECK(out.out_of_distribution);
  CHECK(std::find(out.ood_reasons.begin(), out.ood_reasons.end(), perfcard::OodReason::EmbeddingDistance) !=
        out.ood_reasons.end());
  CHECK(!out.declined());  // the ensemble's own figure, flagged
  const std::string want = "out of distribution: the graph is far from every graph trained on (distance " +
                           perfcard::three_digits(d) + "; the training graphs lie within " +
                           perfcard::three_digits(e->distance_threshold()) + ")";
  CHECK(std::find(out.warnings.begin(), out.warnings.end(), want) != out.warnings.end());
}

TEST_CASE("the band a row shows: the calibrated one where there is one, else latency / (1 + u) .. x (1 + u)") {
  perfcard::PredictorOutput out;
  out.latency_ms = 10;
  out.uncertainty = 0.25;
  auto [low, high] = out.shown_band();
  CHECK(low == Approx(8));
  CHECK(high == Approx(12.5));
  out.band_low_ms = 9;
  out.band_high_ms = 11.5;
  out.band_coverage = 0.8;
  std::tie(low, high) = out.shown_band();
  CHECK(low == 9);
  CHECK(high == 11.5);
}
