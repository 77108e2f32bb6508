// Shape inference: bound symbolic dims, shape-value propagation of exported transformer graphs, quantized
// ops, If/Loop bodies, data-dependent sizes, and ops without a rule.
//
// Fixtures come from scripts/fixtures/make_shape_fixtures.py (tests/data/shapes/). Their expected.json holds what
// onnx's own shape inference (data_prop=True, inputs bound) reports for every value: perfcard must agree
// wherever onnx knows a dim. Values onnx cannot know (Range lengths, float shape arithmetic, data-dependent
// bounds) are checked below against numbers worked out by hand from the graphs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "perfcard/analysis.h"
#include "perfcard/error.h"
#include "perfcard/onnx_loader.h"
#include "perfcard/report.h"
#include "test_util.h"

using nlohmann::json;
using namespace perfcard;

namespace {

const json& expected() {
  static const json doc = [] {
    auto bytes = test::read_file(test::data_path("shapes/expected.json"));
    return json::parse(std::string(bytes.begin(), bytes.end()));
  }();
  return doc;
}

Model load(const std::string& name) {
  auto bytes = test::read_file(test::data_path("shapes/" + name + ".onnx"));
  return load_model(bytes);
}

AnalyzeOptions bound(std::map<std::string, std::int64_t> dims) {
  AnalyzeOptions o;
  o.dims.values = std::move(dims);
  return o;
}

// The bindings expected.json was made with (batch=8, sequence=128, past=16).
AnalyzeOptions fixture_bindings() {
  AnalyzeOptions o;
  for (const auto& [k, v] : expected()["bindings"].items()) o.dims.values[k] = v.get<std::int64_t>();
  return o;
}

// Every value of the main graph and of every inferred body, by name.
void collect(const Graph& g, const GraphShapes& s, std::map<std::string, const ValueShape*>& out) {
  for (std::size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].kind != ValueKind::OuterScope) out.emplace(g.values[v].name, &s.values[v]);
  for (std::size_t ni = 0; ni < g.nodes.size(); ++ni) {
    std::size_t k = 0;
    for (const auto& a : g.nodes[ni].attributes)
      for (const auto& body : a.graphs) {
        if (k < s.subgraphs[ni].size() && !s.subgraphs[ni][k].values.empty()) collect(body, s.subgraphs[ni][k], out);
        ++k;
      }
  }
}

struct Run {
  Model model;
  Analysis analysis;
  std::map<std::string, const ValueShape*> values;

  const ValueShape& at(const std::string& name) const {
    auto it = values.find(name);
    if (it == values.end()) FAIL("no value named " << name);
    return *it->second;
  }
  std::vector<std::int64_t> dims(const std::string& name) const { return at(name).dims.vec(); }
  bool warned(const std::string& text) const {
    return std::any_of(analysis.shapes.warnings.begin(), analysis.shapes.warnings.end(),
                       [&](const Diagnostic& d) { return d.message.find(text) != std::string::npos; });
  }
  json doc() const { return json::parse(analysis_to_json(model, analysis, true).dump()); }
};

Run run(const std::string& name, const AnalyzeOptions& opts) {
  Run r{load(name), {}, {}};
  r.analysis = analyze(r.model, opts);
  collect(r.model.graph, r.analysis.shapes.graph, r.values);
  return r;
}

Run run(const std::string& name) { return run(name, fixture_bindings()); }

bool all_main_values_known(const Run& r, std::string& first_unknown) {
  const Graph& g = r.model.graph;
  for (std::size_t v = 0; v < g.values.size(); ++v) {
    const ValueShape& s = r.analysis.shapes.graph.values[v];
    if (!s.fully_known()) {
      first_unknown = g.values[v].name;
      return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("every fixture agrees with onnx's shape inference wherever onnx knows a dim") {
  for (const auto& [name, values] : expected()["models"].items()) {
    Run r = run(name);
    std::size_t compared = 0;
    for (const auto& [vname, entry] : values.items()) {
      // the Reshape of 32 elements to [0 (copy), 5] in a branch these shapes never take: onnx does not
      // check element counts, perfcard reports the contradiction (as a warning) and leaves it unknown
      if (name == "control_op13" && vname == "bad_out") continue;
      INFO(name << ": " << vname << " onnx says " << entry.dump());
      const ValueShape& ours = r.at(vname);
      const std::string dtype = entry[0].get<std::string>();
      if (dtype != "undefined") CHECK(std::string(dtype_name(ours.dtype)) == dtype);
      if (entry[1].is_null()) continue;
      REQUIRE(ours.rank == int(entry[1].size()));
      bool full = true;
      for (std::size_t k = 0; k < entry[1].size(); ++k) {
        if (entry[1][k].is_null()) { full = false; continue; }
        CHECK(ours.dims[k] == entry[1][k].get<std::int64_t>());
      }
      if (full) {
        CHECK(ours.fully_known());
        ++compared;
      }
    }
    INFO(name);
    if (name != "data_dependent_op13") CHECK(compared > 0);  // onnx knows none of those sizes
  }
}

TEST_CASE("transformer graphs resolve every shape through their Shape/Gather/Concat chains") {
  struct Case {
    const char* name;
    const char* output;
    Dims dims;
  };
  // Sizes by hand: bert hidden 8; gpt2 vocab 32; llama kv heads 1, head dim 4, past 16 + step 128; vit 4 classes.
  for (const Case& c : {Case{"bert_tiny_op13", "hidden", {8, 128, 8}}, Case{"bert_tiny_op13", "pooled", {8, 8}},
                        Case{"gpt2_tiny_op14", "logits", {8, 128, 32}},
                        Case{"llama_decode_tiny_op17", "logits", {8, 128, 32}},
                        Case{"llama_decode_tiny_op17", "present_key_0", {8, 1, 144, 4}},
                        Case{"llama_decode_tiny_op17", "present_value_0", {8, 1, 144, 4}},
                        Case{"vit_tiny_op15", "logits", {8, 4}}}) {
    INFO(c.name << " " << c.output);
    Run r = run(c.name);
    CHECK(r.dims(c.output) == c.dims);
    std::string unknown;
    CHECK(all_main_values_known(r, unknown));
    INFO("first unknown value: " << unknown);
    CHECK(r.analysis.shapes.unknown_ops.empty());
    CHECK(r.analysis.totals.unknown_nodes == 0);
    CHECK(r.analysis.totals.uncosted_nodes == 0);
    CHECK(r.analysis.totals.estimated_values == 0);
    for (auto st : r.analysis.shapes.graph.status) CHECK(st == NodeStatus::Inferred);
  }
}

TEST_CASE("shape-value chains: Gather/Unsqueeze of scalars, Where/Equal Expand, Range, Slice ends, TopK k") {
  Run r = run("chains_op15");
  CHECK(r.dims("heads4") == Dims{8, 128, 4, 4});
  CHECK(r.dims("cls_b") == Dims{8, 1, 16});          // Expand with -1 turned into 1 by Where(Equal(..., -1))
  CHECK(r.dims("with_cls") == Dims{8, 129, 16});
  CHECK(r.dims("mask0") == Dims{128, 128});           // ConstantOfShape of a Concat of computed dims
  const ValueShape& pos = r.at("pos");                // Range(0, sequence, 1): onnx 1.12 does not know it
  CHECK(pos.dims == Dims{128});
  REQUIRE(pos.value);
  CHECK(pos.value->ints.back() == 127);
  CHECK(r.dims("posf") == Dims{128});                 // Range(0.5, 128.0, 1.0) on floats: ceil(127.5)
  CHECK(r.at("posf").dtype == DType::Float);
  CHECK(r.dims("pos_ids") == Dims{1, 128});           // Slice end from the Shape
  CHECK(r.dims("x_tail") == Dims{8, 127, 16});        // end INT64_MAX
  CHECK(r.dims("x_rev") == Dims{8, 128, 16});         // start -1, end INT64_MIN, step -1
  CHECK(r.dims("flat") == Dims{2048, 8});             // [ReduceProd(Shape(start=-2)) = 128 * 16, -1]
  REQUIRE(r.at("numel").value);
  CHECK(r.at("numel").value->ints == Dims{8 * 128 * 16});
  CHECK(r.dims("top_v") == Dims{8, 10});              // k = Min(sequence, 10)
  CHECK(r.dims("top_i") == Dims{8, 10});
  CHECK(r.dims("q") == Dims{8, 4, 128, 4});
  CHECK_FALSE(r.at("top_v").estimated);
}

TEST_CASE("symbolic dims: bound ones take the caller's numbers, others default to 1 with a warning") {
  SECTION("batch=8 and sequence=128 both bound") {
    Run r = run("bindings_op13", bound({{"batch", 8}, {"sequence", 128}}));
    CHECK(r.dims("tokens") == Dims{8, 128});
    CHECK(r.dims("emb") == Dims{8, 128, 8});
    const auto& syms = r.analysis.shapes.symbols;
    REQUIRE(syms.size() == 2);
    for (const auto& s : syms) {
      CHECK(s.bound);
      CHECK(s.value == (s.name == "batch" ? 8 : 128));
    }
    CHECK_FALSE(r.warned("is not bound"));
    // the unnamed dynamic dim of 'features' warns and defaults to 1
    CHECK(r.warned("dynamic and unnamed"));
    CHECK(r.dims("features") == Dims{8, 1});
    json doc = r.doc();
    CHECK(doc["symbols"].size() == 2);
    CHECK(doc["model"]["inputs"][0]["bound"]["shape"] == json::array({8, 128}));
  }
  SECTION("unbound symbols default to 1 and say how to bind them") {
    Run r = run("bindings_op13", bound({}));
    CHECK(r.dims("emb") == Dims{1, 1, 8});
    for (const auto& s : r.analysis.shapes.symbols) {
      CHECK_FALSE(s.bound);
      CHECK(s.value == 1);
    }
    CHECK(r.warned("--dim batch=N"));
    CHECK(r.warned("--dim sequence=N"));
  }
  SECTION("other numbers flow through") {
    Run r = run("llama_decode_tiny_op17", bound({{"batch", 3}, {"sequence", 1}, {"past", 200}}));
    CHECK(r.dims("present_key_0") == Dims{3, 1, 201, 4});
    CHECK(r.dims("logits") == Dims{3, 1, 32});
  }
}

TEST_CASE("quantized ops: output types and shapes") {
  Run conv = run("quant_conv_op13");
  CHECK(conv.dims("xq") == Dims{8, 8, 16, 16});
  CHECK(conv.at("xq").dtype == DType::UInt8);
  CHECK(conv.dims("yq") == Dims{8, 16, 8, 8});        // QLinearConv 3x3, pad 1, stride 2
  CHECK(conv.at("yq").dtype == DType::UInt8);
  CHECK(conv.at("y1").dtype == DType::Float);
  CHECK(conv.dims("w_f") == Dims{16, 8, 3, 3});       // per-axis DequantizeLinear
  CHECK(conv.dims("y2") == Dims{8, 16, 14, 14});
  CHECK(conv.dims("y3") == Dims{8, 4, 8, 8});         // ConvInteger -> int32
  CHECK(conv.at("y3").dtype == DType::Int32);

  Run mm = run("quant_matmul_op13");
  CHECK(mm.at("xq").dtype == DType::UInt8);           // DynamicQuantizeLinear: uint8 data, scalar scale / zp
  CHECK(mm.dims("scale").empty());
  CHECK(mm.at("scale").rank == 0);
  CHECK(mm.at("zp").dtype == DType::UInt8);
  CHECK(mm.dims("y_int") == Dims{8, 128, 32});        // MatMulInteger -> int32
  CHECK(mm.at("y_int").dtype == DType::Int32);
  CHECK(mm.dims("y_q") == Dims{8, 128, 32});          // QLinearMatMul -> type of its output zero point
  CHECK(mm.at("y_q").dtype == DType::UInt8);
  CHECK(mm.analysis.totals.macs == Approx(2.0 * 8 * 128 * 64 * 32));  // both matmuls costed

  Run qdq = run("qdq_reshape_op13");
  CHECK(qdq.dims("y") == Dims{8, 128, 6, 8});
  CHECK(qdq.at("xq").dtype == DType::Int8);
}

TEST_CASE("If and Loop: known conditions pick a branch, bodies see outer-scope values, growth is tracked") {
  Run r = run("control_op13");
  // batch > 0 is known from the shapes: the then-branch (x * 2) is the one that runs
  CHECK(r.dims("known_branch") == Dims{8, 4});
  CHECK_FALSE(r.at("known_branch").estimated);
  // the untaken branch of a known condition may contradict the shapes (Reshape of 32 elements to
  // [0 (copy), 5]): a warning, not an error
  CHECK(r.dims("guarded") == Dims{8, 4});
  CHECK(r.warned("never take"));
  // the branch that never runs is dropped, so costs and the listing follow the one that does
  json doc = r.doc();
  for (const auto& n : doc["nodes"]) {
    if (n["op_type"] != "If" || n["outputs"][0]["name"] != "known_branch") continue;
    REQUIRE(n["subgraphs"].size() == 2);
    for (const auto& sg : n["subgraphs"]) CHECK(sg.contains("nodes") == (sg["attribute"] == "then_branch"));
  }
  // a run-time condition with branches of [8, 4] and [8, 2]: the larger, marked as an estimate
  CHECK(r.dims("either") == Dims{8, 4});
  CHECK(r.at("either").estimated);
  CHECK(r.warned("branches produce different sizes"));
  CHECK(r.dims("same") == Dims{8, 4});
  CHECK_FALSE(r.at("same").estimated);
  // Loop over the batch (trip count from Shape): the carried [0, 4] grows by one row per iteration
  CHECK(r.dims("rows") == Dims{8, 4});
  CHECK(r.dims("scanned") == Dims{8, 4});
  CHECK(r.dims("row") == Dims{4});                    // body value, gathered from the outer-scope x
  CHECK(r.dims("scan_out") == Dims{4});
  CHECK(r.analysis.shapes.unknown_ops.empty());
}

TEST_CASE("data-dependent sizes are upper bounds, marked as estimates, with a warning") {
  Run r = run("data_dependent_op13");
  CHECK(r.dims("nz") == Dims{2, 48});                 // every one of the 8 x 6 elements non-zero
  CHECK(r.at("nz").estimated);
  CHECK(r.dims("nz_t") == Dims{48, 2});
  CHECK(r.at("nz_t").estimated);                      // estimates taint what is computed from them
  CHECK(r.dims("picked") == Dims{48});
  CHECK(r.at("picked").estimated);
  CHECK(r.dims("sel") == Dims{30, 3});                // 1 batch x 3 classes x min(10, 50) boxes
  CHECK(r.at("sel").estimated);
  CHECK(r.warned("NonZero"));
  CHECK(r.warned("NonMaxSuppression"));
  CHECK(r.analysis.totals.estimated_values >= 4);
  CHECK_THAT(r.analysis.totals.first_estimate, Catch::EndsWith("(NonZero)"));  // named in predict's warning
  json doc = r.doc();
  bool flagged = false;
  for (const auto& n : doc["nodes"])
    if (n["op_type"] == "NonZero") flagged = n["outputs"][0].value("estimated", false);
  CHECK(flagged);
}

TEST_CASE("ops without a rule: value_info is used when present, otherwise listed with their cost flagged") {
  Run r = run("unknown_ops_op13");
  const auto& unk = r.analysis.shapes.unknown_ops;
  CHECK(std::find(unk.begin(), unk.end(), "com.example::Frobnicate") != unk.end());
  CHECK(std::find(unk.begin(), unk.end(), "com.example::Inner") != unk.end());  // inside an If body
  CHECK(std::find(unk.begin(), unk.end(), "com.example::Described") == unk.end());
  CHECK(r.dims("d") == Dims{8, 8});                   // from value_info, batch bound
  CHECK(r.dims("d_relu") == Dims{8, 8});
  CHECK(r.at("f").rank < 0);
  CHECK(r.analysis.totals.unknown_nodes >= 1);        // Frobnicate (Inner's branch is not the one costed)
  json doc = r.doc();
  CHECK(doc["unknown_ops"].size() == 2);
  std::map<std::string, json> by_op;
  for (const auto& n : doc["nodes"]) by_op[n["op_type"].get<std::string>() + ":" + n["outputs"][0]["name"].get<std::string>()] = n;
  const json& frob = by_op["Frobnicate:f"];
  CHECK(frob["shape_status"] == "unknown");
  CHECK(frob["cost_known"] == false);
  CHECK(by_op["Relu:after"]["cost_known"] == false);  // its input is unknown: a lower bound, flagged
  CHECK(by_op["Described:d"]["shape_status"] == "value_info");
  CHECK(by_op["Relu:d_relu"]["cost_known"] == true);
  CHECK(by_op["If:branch"]["cost_known"] == false);   // a body holds an unknown op
  CHECK(doc["totals"]["unknown_nodes"].get<std::int64_t>() >= 1);
  CHECK(doc["totals"]["uncosted_nodes"].get<std::int64_t>() >= 1);
}

TEST_CASE("attribute forms (opset 11) and input forms (opset 13) of axes and split agree") {
  Run a = run("forms_op11");
  Run b = run("forms_op13");
  for (const char* v : {"u", "sq", "p1", "p2", "h1", "h2", "h3", "rs", "rm", "sm", "cl"}) {
    INFO(v);
    CHECK(a.dims(v) == b.dims(v));
    CHECK(a.at(v).fully_known());
  }
  CHECK(a.dims("p2") == Dims{8, 128, 8});
  CHECK(a.dims("h3") == Dims{8, 128, 4});
  CHECK(a.dims("rs") == Dims{8, 128});
  CHECK(a.dims("rm") == Dims{8, 1, 12});
}

TEST_CASE("Resize by scales and by sizes, Pad, pooling with ceil_mode") {
  Run r = run("resize_pad_op13");
  CHECK(r.dims("by_scales") == Dims{8, 3, 40, 15});
  CHECK(r.dims("by_sizes") == Dims{1, 3, 7, 9});
  CHECK(r.dims("padded") == Dims{8, 3, 24, 36});
  CHECK(r.dims("gap") == Dims{8, 3, 1, 1});
  CHECK(r.dims("mp") == Dims{8, 3, 10, 15});
}

TEST_CASE("recurrent layers, generators, DFT, and a TopK whose k comes from the data") {
  Run r = run("misc_ops_op17");
  CHECK(r.dims("lstm_y") == Dims{128, 1, 8, 32});     // [seq, dirs, batch, hidden]
  CHECK(r.dims("lstm_h") == Dims{1, 8, 32});
  CHECK(r.dims("lstm_c") == Dims{1, 8, 32});
  CHECK(r.dims("gru_y") == Dims{8, 128, 2, 32});      // layout 1, bidirectional
  CHECK(r.dims("gru_h") == Dims{8, 2, 32});
  CHECK(r.dims("noise") == Dims{128, 8, 16});
  CHECK(r.dims("spec") == Dims{8, 33, 2});            // onesided: 64 / 2 + 1, complex last
  CHECK(r.dims("window") == Dims{16});
  CHECK(r.dims("top_v") == Dims{8, 128, 16});         // k unknown: at most the whole axis
  CHECK(r.at("top_v").estimated);
  CHECK(r.warned("TopK k depends on the data"));
  // LSTM: 128 steps x 8 x 4 gates x 32 x (16 + 32) MACs
  std::map<std::string, double> macs;
  json doc = r.doc();
  for (const auto& n : doc["nodes"]) macs[n["op_type"].get<std::string>()] += n["macs"].get<double>();
  CHECK(macs["LSTM"] == Approx(128.0 * 8 * 128 * (16 + 32)));
  CHECK(macs["GRU"] == Approx(128.0 * 8 * 2 * 96 * (16 + 32)));
}
