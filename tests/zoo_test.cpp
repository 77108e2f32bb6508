// Model zoo fixtures: real exported graphs (weights stripped to external data that is not there) must
// give the totals published for their architectures and the totals counted independently in PyTorch.
// Expected figures: tests/data/models/expected.json, made by scripts/zoo/make_fixtures.py from
// torchvision's/timm's published figures and a PyTorch-side count, never from PerfCard's own output.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "perfcard/analysis.h"
#include "perfcard/onnx_loader.h"
#include "test_util.h"

using nlohmann::json;
using perfcard::test::data_path;
using perfcard::test::read_file;

namespace {

const json& expected() {
  static const json doc = [] {
    std::ifstream f(data_path("models/expected.json"));
    if (!f) throw std::runtime_error("missing tests/data/models/expected.json");
    return json::parse(f);
  }();
  return doc;
}

double tol(const char* key) { return expected().at("tolerance").at(key).get<double>(); }

const json& model(const std::string& name) { return expected().at("models").at(name); }

perfcard::Analysis analyze_fixture(const std::string& name, std::map<std::string, std::int64_t> dims) {
  auto bytes = read_file(data_path(model(name).at("file").get<std::string>()));
  perfcard::Model m = perfcard::load_model(bytes);
  perfcard::AnalyzeOptions o;
  o.dims.values = std::move(dims);
  return perfcard::analyze(m, o);
}

// |ours - ref| <= bar * ref, or half a unit of the published figure's rounding, whichever is larger.
void check_close(const std::string& what, double ours, double ref, double bar, double rounding = 0) {
  double allowed = std::max(bar * std::abs(ref), rounding / 2);
  INFO(what << ": ours " << ours << ", reference " << ref << ", allowed +-" << allowed);
  CHECK(std::abs(ours - ref) <= allowed);
}

void check_complete(const perfcard::Analysis& a) {
  CHECK(a.totals.unknown_nodes == 0);
  CHECK(a.totals.uncosted_nodes == 0);
  CHECK(a.totals.estimated_values == 0);
}

void check_cnn_like(const std::string& name) {
  const json& m = model(name);
  auto a = analyze_fixture(name, {{"batch", 1}});
  check_complete(a);
  const json& ex = m.at("exact");
  check_close("MACs vs PyTorch count", a.totals.macs, ex.at("macs").get<double>(), tol("exact"));
  check_close("activations vs PyTorch count", a.totals.activations, ex.at("activations").get<double>(), tol("exact"));
  check_close("params vs module", double(a.totals.params), ex.at("params").get<double>(), tol("exact"));
  const json& pub = m.at("published");
  if (pub.contains("torchvision")) {
    const json& tv = pub.at("torchvision");
    check_close("MACs vs torchvision _ops", a.totals.macs, tv.at("ops_gmacs").get<double>() * 1e9,
                tol("torchvision_macs"), 0.001e9);
    check_close("params vs torchvision num_params", double(a.totals.params), tv.at("num_params").get<double>(),
                tol("torchvision_params"));
  }
  if (pub.contains("timm")) {
    const json& t = pub.at("timm");
    // timm's gmacs add fvcore's BatchNorm/pooling terms to the products; the 2% bar absorbs them here.
    check_close("MACs vs timm gmacs", a.totals.macs, t.at("gmacs").get<double>() * 1e9, tol("timm_macs"), 0.01e9);
    check_close("activations vs timm macts", a.totals.activations, t.at("macts_M").get<double>() * 1e6,
                tol("timm_activations"), 0.01e6);
    check_close("params vs timm param_count", double(a.totals.params), t.at("param_count_M").get<double>() * 1e6,
                tol("torchvision_params"), 0.01e6);
  }
  // Weights are stripped: every large initializer is external and its payload absent.
  CHECK(a.totals.external_weight_bytes > 0);
  CHECK(a.totals.weight_bytes >= a.totals.external_weight_bytes);
}

}  // namespace

TEST_CASE("zoo: resnet18 matches torchvision's and timm's figures and the PyTorch count") {
  check_cnn_like("resnet18");
}

TEST_CASE("zoo: mobilenet_v3_small matches torchvision's and timm's figures and the PyTorch count") {
  check_cnn_like("mobilenet_v3_small");
}

TEST_CASE("zoo: ViT-Ti/16 (attention as MatMul) matches timm's figures and the PyTorch count") {
  check_cnn_like("vit_tiny");
}

TEST_CASE("zoo: symbolic batch binds; batch=8 gives 8x the MACs and activations of a CNN") {
  for (const char* name : {"resnet18", "mobilenet_v3_small", "vit_tiny"}) {
    INFO(name);
    auto one = analyze_fixture(name, {{"batch", 1}});
    auto eight = analyze_fixture(name, {{"batch", 8}});
    check_complete(eight);
    CHECK(eight.totals.macs == Approx(8 * one.totals.macs));
    CHECK(eight.totals.activations == Approx(8 * one.totals.activations));
    CHECK(eight.totals.params == one.totals.params);
    CHECK(eight.liveness.peak_bytes > one.liveness.peak_bytes);
    const double input_bytes = 8.0 * 3 * 224 * 224 * 4;
    CHECK(double(eight.liveness.input_bytes) == Approx(input_bytes));
  }
}

TEST_CASE("zoo: tiny BERT with symbolic batch and sequence matches its configuration's closed form") {
  const json& ex = model("bert_tiny").at("exact");
  auto a = analyze_fixture("bert_tiny", {{"batch", 1}, {"sequence", 64}});
  check_complete(a);
  check_close("params", double(a.totals.params), ex.at("params").get<double>(), tol("exact"));
  check_close("MACs b1 s64", a.totals.macs, ex.at("macs_b1_s64").get<double>(), tol("exact"));
  check_close("activations b1 s64", a.totals.activations, ex.at("activations_b1_s64").get<double>(), tol("exact"));

  auto b = analyze_fixture("bert_tiny", {{"batch", 4}, {"sequence", 128}});
  check_complete(b);
  check_close("MACs b4 s128", b.totals.macs, ex.at("macs_b4_s128").get<double>(), tol("exact"));
  check_close("activations b4 s128", b.totals.activations, ex.at("activations_b4_s128").get<double>(), tol("exact"));
  CHECK(b.totals.params == a.totals.params);
  // Linear layers scale with tokens, attention scores with batch * sequence^2: more than 8x, less than 16x.
  CHECK(b.totals.macs > 8 * a.totals.macs);
  CHECK(b.totals.macs < 16 * a.totals.macs);
}
