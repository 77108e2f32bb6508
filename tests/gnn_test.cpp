// The GNN predictor: the operator graph the core hands it (edges, op ids, per-sample features), the
// committed weights/gnn.pcwt against the training script's float64 forward pass on the same weights
// (tests/data/gnn_parity.pcwt), and the files it must refuse.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <string>

#include "model_builder.h"
#include "perfcard/device.h"
#include "perfcard/error.h"
#include "perfcard/gnn_network.h"
#include "perfcard/learned_embedding.h"
#include "perfcard/learned_predictor.h"
#include "perfcard/native_learned.h"
#include "perfcard/native_networks.h"
#include "perfcard/onnx_loader.h"
#include "perfcard/operator_graph.h"
#include "perfcard/predictor_registry.h"
#include "test_util.h"

namespace {

using perfcard::test::read_text;
using perfcard::test::repo_path;

float feature(const perfcard::OperatorGraph& g, std::size_t node, std::string_view name) {
  const auto schema = perfcard::node_feature_schema();
  for (std::size_t k = 0; k < schema.size(); ++k)
    if (schema[k].name == name) return g.x[node * g.features + k];
  FAIL("no node feature " << name);
  return 0;
}

}  // namespace

TEST_CASE("the operator graph: producer -> consumer edges, registry op ids, costs per sample, weights apart") {
  perfcard::test::ModelBuilder mb;
  mb.input("x", 1, {"batch", 64});
  mb.initializer("w", 1, {64, 32});
  mb.node("MatMul", {"x", "w"}, {"y"});
  mb.node("Relu", {"y"}, {"r"});
  mb.node("Add", {"y", "r"}, {"z"});  // reads y and r: two edges in, y has two consumers
  mb.node("NoSuchOp", {"z"}, {"u"});
  mb.output("u");
  const auto model = perfcard::load_model(mb.bytes());
  auto at_batch = [&](std::int64_t b) {
    perfcard::AnalyzeOptions ao;
    ao.dims.values["batch"] = b;
    const auto a = perfcard::analyze(model, ao);
    return perfcard::operator_graph(model, a, b);
  };
  const auto g = at_batch(1);
  REQUIRE(g.nodes == 4);
  CHECK(g.features == perfcard::node_feature_schema().size());
  CHECK(g.op[0] == perfcard::op_id("", "MatMul"));
  CHECK(g.op[1] == perfcard::op_id("", "Relu"));
  CHECK(g.op[0] > 0);
  CHECK(g.op[3] == 0);  // unknown to the registry
  CHECK(g.unknown_ops == 1);
  CHECK(g.op_class[0] == std::int32_t(perfcard::OpClass::MatMul));
  std::set<std::pair<int, int>> edges;
  for (std::size_t e = 0; e < g.edge_src.size(); ++e) edges.insert({g.edge_src[e], g.edge_dst[e]});
  CHECK(edges == std::set<std::pair<int, int>>{{0, 1}, {0, 2}, {1, 2}, {2, 3}});
  CHECK(feature(g, 0, "log_flops") == Approx(std::log1p(2.0 * 64 * 32)));
  CHECK(feature(g, 0, "log_weight_bytes") == Approx(std::log1p(64.0 * 32 * 4)));
  CHECK(feature(g, 0, "log_act_bytes_read") == Approx(std::log1p(64.0 * 4)));
  CHECK(feature(g, 0, "log_consumers") == Approx(std::log1p(2.0)));
  CHECK(feature(g, 0, "cost_known") == 1.f);
  CHECK(feature(g, 3, "cost_known") == 0.f);
  // Per sample: the same graph at batch 16 has the same features (the batch reaches predictors elsewhere).
  const auto g16 = at_batch(16);
  REQUIRE(g16.x.size() == g.x.size());
  for (std::size_t i = 0; i < g.x.size(); ++i) CHECK(g16.x[i] == Approx(g.x[i]).epsilon(1e-6));
  CHECK(perfcard::graph_schema_hash().size() == 64);
  CHECK(perfcard::graph_schema_hash() != perfcard::feature_schema_hash());
}

TEST_CASE("the committed GNN matches the training script's forward pass on its own stored weights") {
  const std::string weights = repo_path("weights/gnn.pcwt");
  const auto wbytes = perfcard::test::read_file(weights);
  const auto file = perfcard::read_weights(wbytes);
  const perfcard::GnnModel model(file);
  const auto pbytes = perfcard::test::read_file(perfcard::test::data_path("gnn_parity.pcwt"));
  const auto parity = perfcard::read_weights(pbytes);
  parity.require_schema_hash(perfcard::feature_schema_hash());
  parity.require_schema_hash(perfcard::graph_schema_hash(), "graph_schema.hash");
  const std::size_t F = perfcard::node_feature_schema().size(), R = perfcard::feature_schema().size();
  const auto op = parity.tensor("op").i32(), cls = parity.tensor("class").i32();
  const auto x = parity.tensor("x").f32(), rows = parity.tensor("row").f32();
  const auto src = parity.tensor("src").i32(), dst = parity.tensor("dst").i32();
  const auto nptr = parity.tensor("node_ptr").i32(), eptr = parity.tensor("edge_ptr").i32();
  const auto margin = parity.tensor("margin").f32();
  REQUIRE(margin.size() + 1 == nptr.size());
  REQUIRE(margin.size() >= 12);
  // Bounds on |core - numpy float64| of the predicted log ratio, both on the weights as stored (so the
  // storage's own rounding is not in them): the reference path accumulates in fp64 and differs only by
  // the fp32 activations between layers (~1e-6 relative, over a few layers of O(10) values); the fast path
  // accumulates in fp32 over ~200-wide dot products and node means over up to 10^4 nodes. 1e-3 in a log
  // ratio is 0.1% of a latency, far below any predictor's error.
  const double ref_bound = 1e-4, fast_bound = 1e-3;
  double worst_ref = 0, worst_fast = 0;
  for (std::size_t r = 0; r < margin.size(); ++r) {
    perfcard::OperatorGraph g;
    const auto n0 = std::size_t(nptr[r]), n1 = std::size_t(nptr[r + 1]);
    const auto e0 = std::size_t(eptr[r]), e1 = std::size_t(eptr[r + 1]);
    g.nodes = n1 - n0;
    g.features = F;
    g.op.assign(op.begin() + std::ptrdiff_t(n0), op.begin() + std::ptrdiff_t(n1));
    g.op_class.assign(cls.begin() + std::ptrdiff_t(n0), cls.begin() + std::ptrdiff_t(n1));
    g.x.assign(x.begin() + std::ptrdiff_t(n0 * F), x.begin() + std::ptrdiff_t(n1 * F));
    g.edge_src.assign(src.begin() + std::ptrdiff_t(e0), src.begin() + std::ptrdiff_t(e1));
    g.edge_dst.assign(dst.begin() + std::ptrdiff_t(e0), dst.begin() + std::ptrdiff_t(e1));
    const auto row = rows.subspan(r * R, R);
    const double ref = model.head(model.embed(g, perfcard::nn::Path::Reference), row, perfcard::nn::Path::Reference);
    const double fast = model.head(model.embed(g), row);
    worst_ref = std::max(worst_ref, std::fabs(ref - double(margin[r])));
    worst_fast = std::max(worst_fast, std::fabs(fast - double(margin[r])));
  }
  INFO("worst |core - numpy|: reference path " << worst_ref << ", fast path " << worst_fast << " over "
                                               << margin.size() << " rows");
  CHECK(worst_ref <= ref_bound);
  CHECK(worst_fast <= fast_bound);
}

TEST_CASE("the GNN predictor corrects the roofline, says so, and refuses files of another schema") {
  const std::string weights = repo_path("weights/gnn.pcwt");
  auto bytes = perfcard::test::read_file(weights);
  perfcard::verify_weights(read_text(repo_path("weights/manifest.json")), "gnn.pcwt", bytes);
  auto constants = perfcard::RooflineConstants::parse(read_text(repo_path("weights/roofline.json")));
  auto catalog = perfcard::DeviceCatalog::parse(read_text(repo_path("weights/devices.json")));
  auto roofline = std::make_shared<const perfcard::RooflinePredictor>(constants);
  perfcard::PredictorSet set{roofline, {perfcard::make_learned_predictor(bytes, roofline, perfcard::NativeLearned{})}};
  const auto gnn = perfcard::select_predictor("gnn", set);
  CHECK(gnn->name() == "gnn");

  const auto model = perfcard::test::load_example("resnet50.onnx");
  perfcard::AnalyzeOptions ao;
  ao.dims.values["batch"] = 8;
  const auto analysis = perfcard::analyze(model, ao);
  auto prepared = gnn->prepare({&model, &analysis, "pytorch-eager", perfcard::Precision::FP16, 8});
  for (const char* id : {"rtx3090", "titanxp", "h100-sxm5-80gb"}) {
    const auto out = gnn->predict(*prepared, {&catalog.get(id)});
    INFO(id);
    CHECK(out.predictor == "gnn");
    CHECK(out.version.rfind("gnn-1.", 0) == 0);
    CHECK(out.baseline_ms == Approx(roofline->predict(*prepared, {&catalog.get(id)}).latency_ms));
    CHECK(out.latency_ms > 0);
    CHECK(std::isfinite(out.latency_ms));
    CHECK(out.uncertainty > 0);
  }
  // Another graph schema: refused by name, with what to do.
  const auto file = perfcard::read_weights(bytes);
  try {
    file.require_schema_hash(std::string(64, '0'), "graph_schema.hash");
    FAIL("a wrong graph schema hash was accepted");
  } catch (const perfcard::Error& e) {
    CHECK(std::string(e.what()).find("was trained on graph schema") != std::string::npos);
  }
  // A trees file is not a GNN.
  const auto tbytes = perfcard::test::read_file(repo_path("weights/trees.pcwt"));
  try {
    perfcard::LearnedGnn bad(perfcard::read_weights(tbytes), perfcard::core_schemas(*roofline), perfcard::NativeNetworks{});
    FAIL("a trees file made a GNN");
  } catch (const perfcard::Error& e) {
    CHECK(std::string(e.what()) == "the file is a 'trees' predictor, not 'gnn'");
  }
}

TEST_CASE("the GNN's embeddings come from its cache when a graph repeats, with the same result") {
  const auto bytes = perfcard::test::read_file(repo_path("weights/gnn.pcwt"));
  auto constants = perfcard::RooflineConstants::parse(read_text(repo_path("weights/roofline.json")));
  auto roofline = std::make_shared<const perfcard::RooflinePredictor>(constants);
  const auto gnn_model = std::make_shared<const perfcard::LearnedGnn>(perfcard::read_weights(bytes), perfcard::core_schemas(*roofline), perfcard::NativeNetworks{});
  const perfcard::LearnedPredictor gnn(gnn_model, roofline);
  const perfcard::LearnedGnn& net = *gnn_model;
  const auto model = perfcard::test::load_example("resnet50.onnx");
  std::vector<perfcard::OperatorGraph> graphs;
  for (std::int64_t b : {1, 8, 3, 1}) {
    perfcard::AnalyzeOptions ao;
    ao.dims.values["batch"] = b;
    const auto a = perfcard::analyze(model, ao);
    graphs.push_back(perfcard::operator_graph(model, a, b));
    const auto& g = graphs.back();
    const auto p = gnn.prepare({&model, &a, "pytorch-eager", perfcard::Precision::FP16, b});
    const auto& cached = *perfcard::prepared_embedding(dynamic_cast<const perfcard::LearnedPrepared&>(*p), false);
    const auto direct = net.network().embed(g);
    INFO("batch " << b);
    REQUIRE(cached.size() == direct.size());
    for (std::size_t k = 0; k < cached.size(); ++k) CHECK(cached.data()[k] == direct.data()[k]);
  }
  CHECK(graphs[0] == graphs[3]);  // the repeat (batch 1 again) is served from the cache
}

TEST_CASE("the GNN's fast path computes each class of equal nodes once and gives every node's result") {
  const auto bytes = perfcard::test::read_file(repo_path("weights/gnn.pcwt"));
  const perfcard::GnnModel net(perfcard::read_weights(bytes));
  const std::vector<float> row(perfcard::feature_schema().size(), 0.0f);
  const auto margins = [&](const perfcard::OperatorGraph& g) {
    return std::pair{net.head(net.embed(g), row), net.head(net.embed(g, perfcard::nn::Path::Reference), row,
                                                           perfcard::nn::Path::Reference)};
  };
  SECTION("real graphs: 32 equal decoder layers, a ResNet's stages") {
    for (const char* file : {"llama7b_decoder.onnx", "resnet50.onnx"}) {
      const auto model = perfcard::test::load_example(file);
      const auto a = perfcard::analyze(model, {});
      const auto [fast, ref] = margins(perfcard::operator_graph(model, a, 1));
      INFO(file);
      CHECK(std::fabs(fast - ref) <= 1e-3);  // the parity test's bound for the fast path
    }
  }
  SECTION("nodes alike in themselves but not in their neighbours stay apart") {
    // 60 copies of a -> b -> c, and 60 nodes like a with no consumer, and one b fed by two a's: a merge of
    // any of these would move the mean and the max away from the per-node pass.
    perfcard::OperatorGraph g;
    g.features = perfcard::node_feature_schema().size();
    const auto add = [&](std::int32_t op, float v) {
      g.op.push_back(op);
      g.op_class.push_back(op % std::int32_t(perfcard::op_class_count()));
      for (std::size_t k = 0; k < g.features; ++k) g.x.push_back(v + float(k));
      return std::int32_t(g.nodes++);
    };
    const auto edge = [&](std::int32_t s, std::int32_t d) { g.edge_src.push_back(s), g.edge_dst.push_back(d); };
    for (int i = 0; i < 60; ++i) {
      const auto a = add(3, 1), b = add(5, 2), c = add(7, 3);
      edge(a, b), edge(b, c);
      add(3, 1);
    }
    const auto b = add(5, 2);
    edge(0, b), edge(4, b);
    const auto [fast, ref] = margins(g);
    CHECK(std::fabs(fast - ref) <= 1e-4);
    g.edge_dst.back() = std::int32_t(g.nodes);  // one past the last node
    CHECK_THROWS_WITH(net.embed(g), Catch::Contains("operator graph edge " + std::to_string(g.edge_src.size() - 1)) &&
                                        Catch::Contains("the graph has " + std::to_string(g.nodes) + " nodes"));
  }
}
