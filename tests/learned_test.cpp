// The learned predictors' machinery: sha256 and the manifest check, the feature schema, tree ensembles
// read from PCWT files (hand-made fixtures with margins known by hand, and the hostile ones), and parity
// of the committed weights/trees.pcwt with xgboost's own predictions (tests/data/trees_parity.pcwt).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <string>

#include "model_builder.h"
#include "perfcard/carbon.h"
#include "perfcard/device.h"
#include "perfcard/error.h"
#include "perfcard/features.h"
#include "perfcard/learned_trees.h"
#include "perfcard/native_learned.h"
#include "perfcard/onnx_loader.h"
#include "perfcard/predict.h"
#include "perfcard/predictor_registry.h"
#include "perfcard/sha256.h"
#include "perfcard/trees.h"
#include "perfcard/training_domain.h"
#include "perfcard/weights_file.h"
#include "test_util.h"

using perfcard::TreeEnsemble;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<std::uint8_t> fixture(const std::string& name) { return perfcard::test::read_file(perfcard::test::data_path("weights/" + name)); }

using perfcard::test::read_text;
using perfcard::test::repo_path;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const perfcard::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("sha256 of the FIPS 180-4 examples, one and two blocks, and a million bytes") {
  CHECK(perfcard::sha256_hex(std::string_view("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(perfcard::sha256_hex(std::string_view("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(perfcard::sha256_hex(std::string_view("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(perfcard::sha256_hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // 55 and 56 bytes: the length fits in the last block, or needs another one.
  CHECK(perfcard::sha256_hex(std::string(55, 'a')) == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  CHECK(perfcard::sha256_hex(std::string(56, 'a')) == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
}

TEST_CASE("a weights file is checked against the manifest: size, sha256, listed") {
  const std::string bytes = "PCWT-ish";
  const std::span<const std::uint8_t> b(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  const std::string good = perfcard::sha256_hex(bytes);
  const std::string manifest = R"({"files": [{"path": "trees.pcwt", "size": 8, "sha256": ")" + good + R"("}]})";
  CHECK_NOTHROW(perfcard::verify_weights(manifest, "trees.pcwt", b));
  CHECK(error_of([&] { perfcard::verify_weights(manifest, "gnn.pcwt", b); }) ==
        "weights file 'gnn.pcwt' is not listed in the weights manifest");
  CHECK(error_of([&] { perfcard::verify_weights(manifest, "trees.pcwt", b.first(7)); }).find("is 7 bytes; the manifest lists 8") !=
        std::string::npos);
  std::string tampered = bytes;
  tampered[0] = 'Q';
  const std::span<const std::uint8_t> t(reinterpret_cast<const std::uint8_t*>(tampered.data()), tampered.size());
  CHECK(error_of([&] { perfcard::verify_weights(manifest, "trees.pcwt", t); }).find("the file was changed") != std::string::npos);
  CHECK(error_of([&] { perfcard::verify_weights("[1, 2]", "trees.pcwt", b); }).find("not a JSON object") != std::string::npos);
}

TEST_CASE("the feature schema: unique names, one hash, rows of its width with NaN for unknown figures") {
  std::set<std::string> names;
  for (const auto& f : perfcard::feature_schema()) {
    CHECK(!f.meaning.empty());
    CHECK(names.insert(std::string(f.name)).second);
  }
  const std::string& h = perfcard::feature_schema_hash();
  CHECK(h.size() == 64);
  CHECK(h == perfcard::feature_schema_hash());

  perfcard::test::ModelBuilder mb;
  mb.input("x", 1, {"batch", 256});
  mb.initializer("w", 1, {256, 256});
  mb.node("MatMul", {"x", "w"}, {"y"});
  mb.node("Relu", {"y"}, {"z"});
  mb.output("z");
  const auto model = perfcard::load_model(mb.bytes());
  perfcard::AnalyzeOptions ao;
  ao.dims.values["batch"] = 8;
  const auto analysis = perfcard::analyze(model, ao);
  auto constants = perfcard::RooflineConstants::parse(read_text(repo_path("weights/roofline.json")));
  auto catalog = perfcard::DeviceCatalog::parse(read_text(repo_path("weights/devices.json")));
  perfcard::RooflinePredictor roofline(constants);
  auto prepared = roofline.prepare({&model, &analysis, "pytorch-eager", perfcard::Precision::FP16, 8});
  perfcard::DeviceQuery q{&catalog.get("a100-sxm4-80gb")};
  const auto row = perfcard::feature_row(*prepared, q, roofline);
  REQUIRE(row.size() == perfcard::feature_schema().size());
  auto at = [&](std::string_view name) {
    for (std::size_t i = 0; i < row.size(); ++i)
      if (perfcard::feature_schema()[i].name == name) return row[i];
    FAIL("no feature " << name);
    return 0.f;
  };
  CHECK(at("log_flops") == Approx(std::log1p(analysis.totals.flops)));
  CHECK(at("log_samples") == Approx(std::log1p(8.0)));
  CHECK(at("mix_flops_matmul") > 0.9f);
  CHECK(at("dev_is_gpu") == 1.f);
  CHECK(at("rt_pytorch_eager") == 1.f);
  CHECK(at("precision_bits") == 16.f);
  CHECK(at("log_roofline_ms") == Approx(std::log1p(roofline.predict(*prepared, q).latency_ms)));
  // No GEMM-like kernel: its GEMM shape features are unknown, not zero.
  perfcard::test::ModelBuilder eb;
  eb.input("x", 1, {4, 4});
  eb.node("Relu", {"x"}, {"y"});
  eb.output("y");
  const auto em = perfcard::load_model(eb.bytes());
  const auto ea = perfcard::analyze(em, {});
  auto ep = roofline.prepare({&em, &ea, "pytorch-eager", perfcard::Precision::FP16, 1});
  const auto erow = perfcard::feature_row(*ep, q, roofline);
  for (std::size_t i = 0; i < erow.size(); ++i)
    if (perfcard::feature_schema()[i].name == "gemm_log_min_dim") CHECK(std::isnan(erow[i]));
}

TEST_CASE("trees route rows by hand-known splits, NaN down the default branch; f16 and i8 leaves") {
  for (const char* name : {"trees_small_f16.pcwt", "trees_small_i8.pcwt"}) {
    INFO(name);
    const auto bytes = fixture(name);
    const TreeEnsemble e = TreeEnsemble::load(perfcard::read_weights(bytes), 3);
    CHECK(e.trees() == 2);
    CHECK(e.nodes() == 8);
    // The i8 leaves carry at most half a step of each tree's scale; f16 at most half an ulp.
    const double tol = e.leaf_rounding_bound();
    CHECK(tol < 0.01);
    auto m = [&](float a, float b, float c) {
      const std::vector<float> x{a, b, c};
      const double fast = e.margin(x);
      CHECK(fast == e.margin_reference(x));  // the fast layout is the reference walk, to the bit
      return fast;
    };
    CHECK(m(1.0f, -1.0f, 5.0f) == Approx(0.5 + 0.25 + 0.125).margin(tol));
    CHECK(m(1.0f, 2.0f, 50.0f) == Approx(0.5 - 0.5 + 0.75).margin(tol));
    CHECK(m(3.0f, 0.0f, 10.0f) == Approx(0.5 + 1.0 + 0.75).margin(tol));     // 10 < 10 is false: right
    CHECK(m(kNaN, -1.0f, kNaN) == Approx(0.5 + 1.0 + 0.125).margin(tol));    // x0 NaN right, x2 NaN left
    CHECK(m(0.0f, kNaN, 0.0f) == Approx(0.5 + 0.25 + 0.125).margin(tol));    // x1 NaN left
    CHECK(e.used_features() == std::vector<bool>{true, true, true});
  }
  const TreeEnsemble e = TreeEnsemble::load(perfcard::read_weights(fixture("trees_small_f16.pcwt")), 3);
  CHECK_THROWS_WITH(e.margin(std::vector<float>{1, 2}), Catch::Contains("a feature row of 2 values for trees of 3"));
}

TEST_CASE("hostile trees are refused with what and where, before any evaluation") {
  const auto back = fixture("trees_backward.pcwt");
  CHECK(error_of([&] { TreeEnsemble::load(perfcard::read_weights(back), 3); }) ==
        "split tree 0, node 0 has child 0 outside (0, 5)");
  const auto feat = fixture("trees_bad_feature.pcwt");
  CHECK(error_of([&] { TreeEnsemble::load(perfcard::read_weights(feat), 3); }) == "split tree 0, node 0 reads feature 7 of 3");
  const auto shared = fixture("trees_shared_child.pcwt");
  CHECK(error_of([&] { TreeEnsemble::load(perfcard::read_weights(shared), 3); }) ==
        "split tree 0, node 0 has a child another node already has (not a tree)");
  // A trees file is refused by the predictor when its schema is not this build's.
  auto constants = perfcard::RooflineConstants::parse(read_text(repo_path("weights/roofline.json")));
  auto roofline = std::make_shared<const perfcard::RooflinePredictor>(constants);
  const auto ok = fixture("trees_small_f16.pcwt");
  CHECK(error_of([&] { perfcard::make_learned_predictor(ok, roofline, perfcard::NativeLearned{}); })
            .find("'trees-fixture' predictor, which this build cannot run") != std::string::npos);
}

TEST_CASE("the committed trees match xgboost's predictions on the held-out rows within the leaf rounding") {
  const std::string weights = repo_path("weights/trees.pcwt");
  const auto wbytes = perfcard::test::read_file(weights);
  const auto file = perfcard::read_weights(wbytes);
  file.require_schema_hash(perfcard::feature_schema_hash());
  const TreeEnsemble e = TreeEnsemble::load(file, perfcard::feature_schema().size());
  const auto pbytes = perfcard::test::read_file(perfcard::test::data_path("trees_parity.pcwt"));
  const auto parity = perfcard::read_weights(pbytes);
  parity.require_schema_hash(perfcard::feature_schema_hash());
  const std::size_t width = perfcard::feature_schema().size();
  const auto x = parity.tensor("x", perfcard::WDType::F32, {-1, std::int64_t(width)}).f32();
  const auto margin = parity.tensor("margin", perfcard::WDType::F32, {std::int64_t(x.size() / width)}).f32();
  REQUIRE(margin.size() >= 100);
  // Bound: the stored leaf format's rounding (stated by the file's format), plus fp32 summation slack of
  // 2^-20 per tree (xgboost and the core add the same leaves in the same order; only the leaves differ).
  const double bound = e.leaf_rounding_bound() + double(e.trees()) * std::ldexp(1.0, -20);
  double worst = 0;
  for (std::size_t r = 0; r < margin.size(); ++r) {
    const double got = e.margin(x.subspan(r * width, width));
    if (got != e.margin_reference(x.subspan(r * width, width))) FAIL("row " << r << ": the fast walk differs from the reference");
    worst = std::max(worst, std::fabs(got - double(margin[r])));
  }
  // The batch walk (tree by tree over blocks of rows; a tail shorter than a block row by row) is the row
  // walk, to the bit, for every count of rows.
  for (std::size_t count : {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(8), std::size_t(19), margin.size()}) {
    INFO(count << " rows");
    std::vector<double> batch(count);
    e.margins(x.subspan(0, count * width), batch);
    for (std::size_t r = 0; r < count; ++r)
      if (batch[r] != e.margin(x.subspan(r * width, width))) FAIL("row " << r << ": the batch walk differs from the row walk");
  }
  std::vector<double> one(1);
  CHECK_THROWS_WITH(e.margins(x.subspan(0, width + 1), one), Catch::Contains("feature values for 1 rows"));
  INFO("worst |core - xgboost| = " << worst << " over " << margin.size() << " rows; bound " << bound);
  CHECK(worst <= bound);
  CHECK(bound < 0.02);  // under 2% in latency: the format costs less than any predictor's error
}

TEST_CASE("the CLI's predictor set: auto falls back to the roofline per family; unknown names are refused") {
  auto constants = perfcard::RooflineConstants::parse(read_text(repo_path("weights/roofline.json")));
  perfcard::PredictorSet set;
  set.roofline = std::make_shared<const perfcard::RooflinePredictor>(constants);
  CHECK(perfcard::select_predictor("roofline", set)->name() == "roofline");
  CHECK(perfcard::select_predictor("auto", set)->name() == "auto");
  CHECK(error_of([&] { perfcard::select_predictor("trees", set); }) == "predictor 'trees' is not available: its weights are not loaded");
  CHECK(error_of([&] { perfcard::select_predictor("gnn", set); }) == "predictor 'gnn' is not available: its weights are not loaded");
  CHECK(error_of([&] { perfcard::select_predictor("transformer", set); }) == "predictor 'transformer' is not available: its weights are not loaded");
  CHECK(error_of([&] { perfcard::select_predictor("forest", set); }).find("unknown predictor 'forest' (known: auto,") == 0);
}

TEST_CASE("auto: the committed trees where they beat the roofline for the device, flagged or not, else the roofline") {
  const std::string weights = repo_path("weights/trees.pcwt");
  auto constants = perfcard::RooflineConstants::parse(read_text(repo_path("weights/roofline.json")));
  auto catalog = perfcard::DeviceCatalog::parse(read_text(repo_path("weights/devices.json")));
  auto carbon = perfcard::CarbonTable::parse(read_text(repo_path("weights/carbon_regions.json")));
  const auto wbytes = perfcard::test::read_file(weights);
  perfcard::PredictorSet set;
  set.roofline = std::make_shared<const perfcard::RooflinePredictor>(constants);
  set.learned.push_back(perfcard::make_learned_predictor(wbytes, set.roofline, perfcard::NativeLearned{}));
  const auto model = perfcard::test::load_example("resnet50.onnx");
  perfcard::PredictOptions o;
  o.devices = {"every"};
  o.batches = {1, 64};
  o.predictor = "trees";
  const auto trees = perfcard::predict(model, catalog, *perfcard::select_predictor("trees", set), constants, carbon, o);
  o.predictor = "auto";
  const auto autos = perfcard::predict(model, catalog, *perfcard::select_predictor("auto", set), constants, carbon, o);
  o.predictor = "roofline";
  const auto roof = perfcard::predict(model, catalog, *set.roofline, constants, carbon, o);
  REQUIRE(trees.rows.size() == autos.rows.size());
  REQUIRE(roof.rows.size() == autos.rows.size());
  const perfcard::Predictor& t = *set.learned[0];
  int learned = 0, flagged = 0, seen = 0, unseen = 0;
  for (std::size_t i = 0; i < autos.rows.size(); ++i) {
    const auto& a = autos.rows[i];
    INFO(a.device_id << " batch " << a.batch);
    std::string family;
    constants.family_of(*catalog.find(a.device_id), &family);
    // Held-out model families on a device the trees trained on; leave one device out on another.
    const perfcard::FamilyAccuracy* acc = t.accuracy_for(family, a.device_id);
    const auto held = t.accuracy().find(family);
    const bool on_device = held != t.accuracy().end() && acc == &held->second;
    (on_device ? seen : unseen) += 1;
    const bool beats = acc && acc->beats_roofline;
    if (beats) {
      // The trees' row, out of distribution or not: flagged, it keeps the figure and the flag's reasons.
      CHECK(a.predictor == "trees");
      CHECK(a.latency_ms == trees.rows[i].latency_ms);
      CHECK(a.out_of_distribution == trees.rows[i].out_of_distribution);
      CHECK(a.ood_reasons == trees.rows[i].ood_reasons);
      CHECK(a.out_of_distribution == !a.ood_reasons.empty());  // a flag always has its reasons
      CHECK(a.uncertainty == trees.rows[i].uncertainty);
      ++(trees.rows[i].out_of_distribution ? flagged : learned);
    } else {
      CHECK(a.predictor == "roofline");
      CHECK(a.latency_ms == roof.rows[i].latency_ms);
    }
  }
  // The committed file has both kinds of rows on the catalog's devices (else this test checks half), devices
  // it trained on and devices it never saw. Whether some family is served on the first and not the second
  // depends on the file; the next test checks that choice on a domain made for it.
  CHECK(learned > 0);
  CHECK(flagged > 0);
  CHECK(seen > 0);
  CHECK(unseen > 0);
}

TEST_CASE("a training domain answers for a device it trained on with held-out families, for another with leave one device out") {
  // A file's metadata as the training scripts write it: family "ampere" beats the roofline on held-out
  // models (on the devices trained on) but not on a device left out; "turing" on both; "cpu" on neither.
  const std::vector<float> range = {0.0f, 1.0f};
  perfcard::WeightsFile w;
  auto meta = [&w](std::string key, auto value) { w.metadata.push_back({std::move(key), {std::move(value)}}); };
  meta("target.min", -2.0);
  meta("target.max", 2.0);
  meta("training.families", std::vector<std::string>{"resnet"});
  meta("training.runtimes", std::vector<std::string>{"pytorch-eager"});
  meta("training.devices", std::vector<std::string>{"rtx3090", "t4"});
  const std::vector<std::string> families = {"ampere", "cpu", "turing"};
  meta("accuracy.families", families);
  meta("accuracy.mape", std::vector<double>{0.06, 0.3, 0.04});
  meta("accuracy.rows", std::vector<std::int64_t>{40, 30, 50});
  meta("accuracy.beats_roofline", std::vector<std::int64_t>{1, 0, 1});
  meta("accuracy.unseen.families", families);
  meta("accuracy.unseen.mape", std::vector<double>{0.12, 0.35, 0.05});
  meta("accuracy.unseen.rows", std::vector<std::int64_t>{200, 90, 300});
  meta("accuracy.unseen.beats_roofline", std::vector<std::int64_t>{0, 0, 1});
  for (const char* name : {"train.min", "train.max"}) {
    perfcard::TensorInfo t;
    t.name = name;
    t.dtype = perfcard::WDType::F32;
    t.dims = {1};
    t.byte_size = sizeof(float);
    t.bytes = {reinterpret_cast<const std::uint8_t*>(&range[name == std::string("train.max")]), sizeof(float)};
    w.tensors.push_back(t);
  }
  const perfcard::TrainingDomain d(w, 1);
  CHECK(d.trained_on("t4"));
  CHECK_FALSE(d.trained_on("a100-sxm4-80gb"));
  // ampere: served on the device trained on, not on one left out.
  REQUIRE(d.accuracy_for("ampere", "rtx3090"));
  CHECK(d.accuracy_for("ampere", "rtx3090")->beats_roofline);
  CHECK(d.accuracy_for("ampere", "rtx3090")->mape == Approx(0.06));
  REQUIRE(d.accuracy_for("ampere", "a100-sxm4-80gb"));
  CHECK_FALSE(d.accuracy_for("ampere", "a100-sxm4-80gb")->beats_roofline);
  CHECK(d.accuracy_for("ampere", "a100-sxm4-80gb")->mape == Approx(0.12));
  CHECK(d.accuracy_for("turing", "t4")->beats_roofline);
  CHECK(d.accuracy_for("turing", "t4-unseen")->beats_roofline);
  CHECK_FALSE(d.accuracy_for("cpu", "t4")->beats_roofline);
  CHECK(d.accuracy_for("hopper", "h100-sxm5-80gb") == nullptr);
  CHECK(d.training_accuracy().beats_roofline_somewhere());
  // Without training.devices no device counts as trained on: every answer is leave one device out.
  std::erase_if(w.metadata, [](const perfcard::MetaEntry& e) { return e.key == "training.devices"; });
  const perfcard::TrainingDomain old(w, 1);
  CHECK_FALSE(old.trained_on("t4"));
  CHECK_FALSE(old.accuracy_for("ampere", "rtx3090")->beats_roofline);
}

namespace {
// The committed data files and every committed learned predictor, as the CLI loads them.
struct Committed {
  perfcard::RooflineConstants constants = perfcard::RooflineConstants::parse(read_text(repo_path("weights/roofline.json")));
  perfcard::DeviceCatalog catalog = perfcard::DeviceCatalog::parse(read_text(repo_path("weights/devices.json")));
  perfcard::CarbonTable carbon = perfcard::CarbonTable::parse(read_text(repo_path("weights/carbon_regions.json")));
  perfcard::PredictorSet set;
  Committed() {
    set.roofline = std::make_shared<const perfcard::RooflinePredictor>(constants);
    for (const char* name : {"trees", "gnn", "transformer", "ensemble"})
      set.learned.push_back(perfcard::make_learned_predictor(
          perfcard::test::read_file(repo_path(std::string("weights/") + name + ".pcwt")), set.roofline,
          perfcard::NativeLearned{}, set.learned));
  }
};
}  // namespace

TEST_CASE("a runtime no training row ran on gets the roofline's row from every learned predictor, flagged, and auto says why") {
  const Committed c;
  const auto& constants = c.constants;
  const auto& catalog = c.catalog;
  const auto& carbon = c.carbon;
  const auto& set = c.set;
  const auto model = perfcard::test::load_example("resnet50.onnx");
  perfcard::PredictOptions o;
  o.devices = {"rtx4090", "t4", "a100-sxm4-80gb"};
  o.batches = {1, 32};
  for (const char* runtime : {"pytorch-cuda-graphs", "kernel"}) {
    o.gpu_runtime = runtime;
    o.predictor = "roofline";
    const auto roof = perfcard::predict(model, catalog, *set.roofline, constants, carbon, o);
    for (const char* name : {"trees", "gnn", "transformer", "ensemble", "auto"}) {
      o.predictor = name;
      const auto got = perfcard::predict(model, catalog, *perfcard::select_predictor(name, set), constants, carbon, o);
      REQUIRE(got.rows.size() == roof.rows.size());
      for (std::size_t i = 0; i < got.rows.size(); ++i) {
        const auto& r = got.rows[i];
        INFO(name << " on " << runtime << ", " << r.device_id << " batch " << r.batch);
        CHECK(r.predictor == "roofline");
        CHECK(r.latency_ms == roof.rows[i].latency_ms);
        std::string said;
        for (const auto& w : r.warnings) said += w + "\n";
        if (std::string(name) == "auto") {
          CHECK(!r.out_of_distribution);
          CHECK(r.ood_reasons.empty());
          CHECK(said.find(std::string("never trained on runtime '") + runtime + "', so the roofline predicts") != std::string::npos);
        } else {
          CHECK(r.out_of_distribution);
          CHECK(r.ood_reasons == std::vector{perfcard::OodReason::UntrainedRuntime});
          // (each file names the runtimes its rows ran on: eager PyTorch among them, this one not)
          CHECK(said.find("training rows ran on ") != std::string::npos);
          CHECK(said.find("pytorch-eager") != std::string::npos);
          CHECK(said.find(std::string(", not on runtime '") + runtime + "', so the roofline predicts") != std::string::npos);
        }
      }
    }
  }
  // Eager, the runtime they trained on, is still corrected.
  o.gpu_runtime = "pytorch-eager";
  o.predictor = "trees";
  const auto eager = perfcard::predict(model, catalog, *perfcard::select_predictor("trees", set), constants, carbon, o);
  for (const auto& r : eager.rows) CHECK(r.predictor == "trees");
}

TEST_CASE("a host-bound row carries the host-bound error whichever predictor made it; a device-bound row its own") {
  const Committed c;
  REQUIRE(c.constants.host_bound_accuracy.count("pytorch-eager"));
  const double hb = c.constants.host_bound_accuracy.at("pytorch-eager").mape;
  const auto model = perfcard::test::load_example("resnet50.onnx");
  perfcard::PredictOptions o;
  o.devices = {"rtx4090", "a100-sxm4-80gb", "t4"};
  o.batches = {1, 256};
  int bound = 0, free = 0;
  for (const char* name : {"trees", "gnn", "transformer", "ensemble", "auto"}) {
    o.predictor = name;
    for (const auto& r : perfcard::predict(model, c.catalog, *perfcard::select_predictor(name, c.set), c.constants, c.carbon, o).rows) {
      INFO(name << ", " << r.device_id << " batch " << r.batch << " by " << r.predictor);
      if (perfcard::host_bound(r.busy_ms, r.latency_ms)) {
        ++bound;
        CHECK(r.uncertainty >= hb);
        CHECK(r.band_low_ms <= r.latency_ms / (1 + hb) * (1 + 1e-12));
        CHECK(r.band_high_ms >= r.latency_ms * (1 + hb) * (1 - 1e-12));
      } else {
        ++free;
        CHECK(r.uncertainty < hb);  // the learned files' own figures on these families are smaller
      }
    }
  }
  CHECK(bound > 0);
  CHECK(free > 0);
}

TEST_CASE("a host time per kernel the caller gives is the roofline's to use: every learned predictor declines it") {
  const Committed c;
  const auto model = perfcard::test::load_example("resnet50.onnx");
  perfcard::PredictOptions o;
  o.devices = {"rtx4090", "a100-sxm4-80gb"};
  o.batches = {1, 32};
  o.host_us = 20;
  o.predictor = "roofline";
  const auto roof = perfcard::predict(model, c.catalog, *c.set.roofline, c.constants, c.carbon, o);
  for (const char* name : {"trees", "gnn", "transformer", "ensemble", "auto"}) {
    o.predictor = name;
    const auto got = perfcard::predict(model, c.catalog, *perfcard::select_predictor(name, c.set), c.constants, c.carbon, o);
    REQUIRE(got.rows.size() == roof.rows.size());
    for (std::size_t i = 0; i < got.rows.size(); ++i) {
      const auto& r = got.rows[i];
      INFO(name << ", " << r.device_id << " batch " << r.batch);
      CHECK(r.predictor == "roofline");
      CHECK(r.latency_ms == roof.rows[i].latency_ms);
      CHECK(*r.host_us == 20);
      std::string said;
      for (const auto& w : r.warnings) said += w + "\n";
      CHECK(said.find("with the host's time per kernel given (host_us), the roofline predicts") != std::string::npos);
    }
  }
}

TEST_CASE("a training step is the roofline's: every learned predictor declines it, flagged, and auto says why") {
  const Committed c;
  const auto& constants = c.constants;
  const auto& catalog = c.catalog;
  const auto& carbon = c.carbon;
  const auto& set = c.set;
  const auto model = perfcard::test::load_example("resnet50.onnx");
  perfcard::PredictOptions o;
  o.devices = {"rtx4090", "a100-sxm4-80gb"};
  o.batches = {32};
  o.mode = perfcard::Mode::Training;
  const auto roof = perfcard::predict(model, catalog, *set.roofline, constants, carbon, o);
  // resnet50.onnx is an eval-mode export: its BatchNorms were folded, and the step says what that leaves out.
  std::string top;
  for (const auto& w : roof.warnings) top += w + "\n";
  CHECK(top.find("convolutions and no normalization") != std::string::npos);
  for (const char* name : {"trees", "gnn", "transformer", "ensemble", "auto"}) {
    const auto got = perfcard::predict(model, catalog, *perfcard::select_predictor(name, set), constants, carbon, o);
    REQUIRE(got.rows.size() == roof.rows.size());
    for (std::size_t i = 0; i < got.rows.size(); ++i) {
      const auto& r = got.rows[i];
      INFO(name << " on " << r.device_id);
      CHECK(r.predictor == "roofline");
      CHECK(r.latency_ms == roof.rows[i].latency_ms);
      std::string said;
      for (const auto& w : r.warnings) said += w + "\n";
      CHECK(r.out_of_distribution == (std::string(name) != "auto"));
      CHECK(r.ood_reasons == (std::string(name) != "auto" ? std::vector{perfcard::OodReason::TrainingStep}
                                                          : std::vector<perfcard::OodReason>{}));
      if (std::string(name) != "auto") CHECK(said.find("training rows are inference runs, not training steps") != std::string::npos);
    }
    // Said once for the prediction, not on every row.
    std::string all;
    for (const auto& w : got.warnings) all += w + "\n";
    CHECK(all.find("training steps are timed by the roofline: the learned predictors trained on inference runs") !=
          std::string::npos);
  }
}

TEST_CASE("a MIG slice is the roofline's slice carrying the learned correction of its whole GPU") {
  const Committed c;
  const auto model = perfcard::test::load_example("resnet50.onnx");
  perfcard::PredictOptions o;
  o.devices = {"a100-sxm4-80gb", "h100-sxm5-80gb"};
  o.batches = {1, 64};
  const auto roof = perfcard::predict(model, c.catalog, *c.set.roofline, c.constants, c.carbon, o);
  for (const char* name : {"trees", "ensemble", "auto"}) {
    const auto got = perfcard::predict(model, c.catalog, *perfcard::select_predictor(name, c.set), c.constants, c.carbon, o);
    REQUIRE(got.rows.size() == roof.rows.size());
    for (std::size_t i = 0; i < got.rows.size(); ++i) {
      const auto& r = got.rows[i];
      INFO(name << " on " << r.device_id << " batch " << r.batch);
      REQUIRE(r.mig.size() == roof.rows[i].mig.size());
      REQUIRE_FALSE(r.mig.empty());
      const double correction = r.latency_ms / roof.rows[i].latency_ms;
      for (std::size_t k = 0; k < r.mig.size(); ++k)
        CHECK(r.mig[k].latency_ms == Approx(roof.rows[i].mig[k].latency_ms * correction).epsilon(1e-9));
    }
  }
}

TEST_CASE("a feature outside the training range is named in words, with which side it lies on") {
  const Committed c;
  const auto model = perfcard::test::load_example("resnet50.onnx");
  perfcard::PredictOptions o;
  o.devices = {"b200-sxm-180gb"};  // peak TFLOP/s and TDP beyond every GPU the trees trained on
  o.batches = {1};
  o.predictor = "trees";
  const auto got = perfcard::predict(model, c.catalog, *perfcard::select_predictor("trees", c.set), c.constants, c.carbon, o);
  REQUIRE(got.rows.size() == 1);
  const auto& r = got.rows[0];
  REQUIRE(std::find(r.ood_reasons.begin(), r.ood_reasons.end(), perfcard::OodReason::FeatureRange) != r.ood_reasons.end());
  std::string said;
  for (const auto& w : r.warnings) said += w + "\n";
  INFO(said);
  CHECK(said.find("outside the training rows' range: ") != std::string::npos);
  CHECK(said.find("dense peak TFLOP/s at the precision used (dev_log_peak_tflops) higher than in every training row") != std::string::npos);
  CHECK(said.find("log1p") == std::string::npos);
}
