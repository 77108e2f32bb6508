// Embind boundary of the learned models (learned_model.h), the page's second wasm module. The core's module
// (wasm/bindings.cpp, wasm/remote_learned.cpp) times the roofline and builds the feature rows, the operator
// graph and the kernel sequence; it calls these, through wasm/perfcard.js, when a weights file is loaded, once
// per prepared model and once per prediction's device rows. The first download never carries them.
//
//   loadModel(ptr, len, schemas, loadedPtr, loadedN)   a weights file's model, built by the same code the
//                                           CLI runs (make_learned_model, NativeNetworks) from the file's bytes
//                                           (the core checked its manifest entry) against the core's roofline
//                                           and schemas (learned_wire.h); an ensemble finds its members among
//                                           the loaded models' handles (int32 at loadedPtr):
//                                           {ok, handle, description} (learned_wire.h)
//   prepareModel(model, hasGraph, nodes, features, op, opN, class, classN, x, xN, src, srcN, dst, dstN,
//                hasSequence, kernels, features, op, opN, class, classN, x, xN, sequenceUnknownOps, unknownOps)
//                                           the model's state for one subject (each array a pointer and its
//                                           own length): {ok, handle}
//   decide(model, state, queryPtr, queryN, rowsPtr, n)   the model's verdicts on a batch of device rows
//                                           (the queries' text, UTF-8, one record per row, and their feature
//                                           rows back to back, n floats in all, at their pointers): the
//                                           verdicts' length in bytes, their text at lastText() until the next
//                                           call; -1 on failure, kept for lastError(). Numbers in and out rather
//                                           than objects and strings, whose conversions would cost more than
//                                           the decisions
//   release(handle)                          a model or a state
// The networks alone, for the tests and the benchmarks (the core goes through the models):
//   loadNetwork(ptr, len, kind, features)  a weights file's network ("trees" | "graph" | "sequence"):
//                                           {ok, handle, storage (embedding networks), used (trees: one byte
//                                           per feature, 1 where some split reads it)}
//   margin(handle, rowPtr, n)              the trees' margin for a feature row
//   margins(handle, rowsPtr, n, count, outPtr)   the trees' margins for `count` feature rows back to back (n
//                                           floats in all), written at outPtr as float64: true, or false with
//                                           lastError()
//   embedGraph(handle, nodes, features, op, opN, class, classN, x, xN, src, srcN, dst, dstN, outPtr)
//   embedSequence(handle, kernels, features, op, opN, class, classN, x, xN, unknownOps, outPtr)
//                                           write the embedding at outPtr (room for maxEmbedding() values):
//                                           {ok, width} | failure
//   head(handle, embeddingPtr, width, rowPtr, n)   an embedding network's head on a feature row
//   lastError()                            the failure of the last margin() / head() that returned NaN, or of
//                                           the last decide() that returned -1
//   probeMachine(gemmMs, streamMs)         "this device": the machine probe (perfcard/machine_probe.h) timed by
//                                           performance.now(): {ok, gemm_gflops, stream_gbs, elapsed_ms,
//                                           gemm_blocks, stream_passes}. Here rather than in the core's module:
//                                           it runs only when a visitor asks, so the first download does
//                                           without it; the core's module writes the device entry
// Failures are {ok: false, message, detail, code} as in the core's module. margin() and head() run once per
// device row, so they return a plain number (NaN on failure, never a result) instead of an object.
#include <emscripten/bind.h>
#include <emscripten/emscripten.h>
#include <emscripten/val.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "perfcard/error.h"
#include "perfcard/machine_probe.h"
#include "perfcard/native_learned.h"
#include "perfcard/native_networks.h"
#include "perfcard/weights_file.h"

#include "boundary.h"
#include "learned_wire.h"

namespace {

using emscripten::val;
using perfcard::wasm::failure;
using perfcard::wasm::guarded;

// What a handle holds: a network (the tests' and benchmarks' calls), a model or a model's state.
using Held = std::variant<std::shared_ptr<const perfcard::TreeNetwork>, std::shared_ptr<const perfcard::GraphNetwork>,
                          std::shared_ptr<const perfcard::SequenceNetwork>, std::shared_ptr<const perfcard::LearnedModel>,
                          std::shared_ptr<const perfcard::LearnedState>>;

struct State {
  std::map<int, Held> held;
  int next = 1;
  val last_error = val::null();
  std::string text;  // decide()'s last verdict
};

State& state() {
  static State s;
  return s;
}

// For the per-row calls: the value, or NaN with the failure kept for lastError().
template <class F>
double number(F&& f) {
  double out = std::numeric_limits<double>::quiet_NaN();
  val r = guarded([&] {
    out = f();
    return val::null();
  });
  if (!r.isNull()) {
    out = std::numeric_limits<double>::quiet_NaN();
    state().last_error = r;
  } else if (std::isnan(out)) {
    state().last_error = failure("a learned network gave NaN", perfcard::ErrorCode::Internal);
  }
  return out;
}

template <class T>
std::span<const T> at(std::uintptr_t ptr, std::size_t n) {
  return {reinterpret_cast<const T*>(ptr), n};
}

// What `handle` holds, if it is a T (`kind`: "trees network", "learned model", ...).
template <class T>
const T& held(int handle, const char* kind) {
  auto it = state().held.find(handle);
  if (it == state().held.end() || !std::holds_alternative<T>(it->second))
    throw perfcard::internal_error(std::string("no ") + kind + " has handle " + std::to_string(handle));
  return std::get<T>(it->second);
}

// Keeps `h` under a fresh handle.
int kept(Held h) {
  State& s = state();
  const int handle = s.next++;
  s.held.emplace(handle, std::move(h));
  return handle;
}

val load_network(std::uintptr_t ptr, std::size_t size, const std::string& kind, int features) {
  return guarded([&] {
    // The tensors are read in place: the bytes need a heap buffer's alignment (JS copies them into one).
    const perfcard::WeightsFile file = perfcard::read_weights(at<std::uint8_t>(ptr, size));
    const perfcard::NativeNetworks native;
    val r = val::object();
    Held n;
    if (kind == "trees") {
      if (features < 0) throw perfcard::internal_error("a negative feature count for the trees");
      auto trees = native.trees(file, std::size_t(features));
      const std::vector<bool> used = trees->used_features();
      const std::vector<std::uint8_t> bytes(used.begin(), used.end());
      r.set("used", val::array(bytes.begin(), bytes.end()));
      n = std::move(trees);
    } else if (kind == "graph" || kind == "sequence") {
      std::string storage;
      if (kind == "graph") {
        auto g = native.graph(file);
        storage = g->storage();
        n = std::move(g);
      } else {
        auto s = native.sequence(file);
        storage = s->storage();
        n = std::move(s);
      }
      r.set("storage", storage);
    } else {
      throw perfcard::internal_error("no network kind '" + kind + "' (trees, graph, sequence)");
    }
    const int handle = kept(std::move(n));
    r.set("ok", true);
    r.set("handle", handle);
    return r;
  });
}

double margin(int handle, std::uintptr_t row, std::size_t n) {
  return number([&] {
    return held<std::shared_ptr<const perfcard::TreeNetwork>>(handle, "trees network")->margin(at<float>(row, n));
  });
}

bool margins(int handle, std::uintptr_t rows, std::size_t n, std::size_t count, std::uintptr_t out) {
  return !std::isnan(number([&] {
    held<std::shared_ptr<const perfcard::TreeNetwork>>(handle, "trees network")->margins(at<float>(rows, n),
                                                                                     {reinterpret_cast<double*>(out), count});
    return 0.0;
  }));
}

// The embedding is at most this many values (2 x a network's width): the JS side reserves that much.
constexpr std::size_t kMaxEmbedding = 4096;

// Writes `e` at `out` (room for kMaxEmbedding values) and says how many values it wrote.
val written(const perfcard::nn::Tensor2& e, std::uintptr_t out) {
  if (e.size() > kMaxEmbedding) throw perfcard::internal_error("an embedding of " + std::to_string(e.size()) + " values");
  std::copy(e.values().begin(), e.values().end(), reinterpret_cast<float*>(out));
  val r = val::object();
  r.set("ok", true);
  r.set("width", double(e.size()));
  return r;
}

template <class T>
std::vector<T> copied(std::uintptr_t ptr, std::size_t n) {
  const auto s = at<T>(ptr, n);
  return {s.begin(), s.end()};
}

// Each array comes with its own length, so the network's own check sees arrays that disagree.
perfcard::OperatorGraph graph_at(std::size_t nodes, std::size_t features, std::uintptr_t op, std::size_t op_n,
                                 std::uintptr_t cls, std::size_t cls_n, std::uintptr_t x, std::size_t x_n,
                                 std::uintptr_t src, std::size_t src_n, std::uintptr_t dst, std::size_t dst_n) {
  perfcard::OperatorGraph g;
  g.nodes = nodes;
  g.features = features;
  g.op = copied<std::int32_t>(op, op_n);
  g.op_class = copied<std::int32_t>(cls, cls_n);
  g.x = copied<float>(x, x_n);
  g.edge_src = copied<std::int32_t>(src, src_n);
  g.edge_dst = copied<std::int32_t>(dst, dst_n);
  return g;
}

perfcard::KernelSequence sequence_at(std::size_t kernels, std::size_t features, std::uintptr_t op, std::size_t op_n,
                                     std::uintptr_t cls, std::size_t cls_n, std::uintptr_t x, std::size_t x_n,
                                     std::size_t unknown_ops) {
  perfcard::KernelSequence q;
  q.kernels = kernels;
  q.features = features;
  q.unknown_ops = unknown_ops;
  q.op = copied<std::int32_t>(op, op_n);
  q.op_class = copied<std::int32_t>(cls, cls_n);
  q.x = copied<float>(x, x_n);
  return q;
}

val embed_graph(int handle, std::size_t nodes, std::size_t features, std::uintptr_t op, std::size_t op_n,
                std::uintptr_t cls, std::size_t cls_n, std::uintptr_t x, std::size_t x_n, std::uintptr_t src,
                std::size_t src_n, std::uintptr_t dst, std::size_t dst_n, std::uintptr_t out) {
  return guarded([&] {
    const auto g = graph_at(nodes, features, op, op_n, cls, cls_n, x, x_n, src, src_n, dst, dst_n);
    return written(held<std::shared_ptr<const perfcard::GraphNetwork>>(handle, "graph network")->embed(g), out);
  });
}

val embed_sequence(int handle, std::size_t kernels, std::size_t features, std::uintptr_t op, std::size_t op_n,
                   std::uintptr_t cls, std::size_t cls_n, std::uintptr_t x, std::size_t x_n, std::size_t unknown_ops,
                   std::uintptr_t out) {
  return guarded([&] {
    const auto q = sequence_at(kernels, features, op, op_n, cls, cls_n, x, x_n, unknown_ops);
    return written(held<std::shared_ptr<const perfcard::SequenceNetwork>>(handle, "sequence network")->embed(q), out);
  });
}

double head(int handle, std::uintptr_t embedding, std::size_t width, std::uintptr_t row, std::size_t n) {
  return number([&] {
    const perfcard::nn::Tensor2 e(1, width, copied<float>(embedding, width));
    auto it = state().held.find(handle);
    if (it != state().held.end())
      return std::visit(
          [&](const auto& net) -> double {
            using Net = std::decay_t<decltype(*net)>;
            if constexpr (std::is_same_v<Net, perfcard::GraphNetwork> || std::is_same_v<Net, perfcard::SequenceNetwork>)
              return net->head(e, at<float>(row, n));
            else
              throw perfcard::internal_error("handle " + std::to_string(handle) + " is no embedding network");
          },
          it->second);
    throw perfcard::internal_error("no embedding network has handle " + std::to_string(handle));
  });
}

val load_model(std::uintptr_t ptr, std::size_t size, const std::string& schemas, std::uintptr_t loaded,
               std::size_t loaded_n) {
  return guarded([&] {
    std::vector<std::shared_ptr<const perfcard::LearnedModel>> models;
    for (std::int32_t h : at<std::int32_t>(loaded, loaded_n))
      models.push_back(held<std::shared_ptr<const perfcard::LearnedModel>>(h, "learned model"));
    // The tensors are read in place: the bytes need a heap buffer's alignment (JS copies them into one).
    const perfcard::WeightsFile file = perfcard::read_weights(at<std::uint8_t>(ptr, size));
    auto model = perfcard::make_learned_model(file, perfcard::wasm::parse_schemas(schemas), perfcard::NativeNetworks{}, models);
    const std::string description = perfcard::wasm::description_text(*model);
    val r = val::object();
    r.set("ok", true);
    r.set("handle", kept(std::move(model)));
    r.set("description", description);
    return r;
  });
}

val prepare_model(int model, bool has_graph, std::size_t nodes, std::size_t features, std::uintptr_t op,
                  std::size_t op_n, std::uintptr_t cls, std::size_t cls_n, std::uintptr_t x, std::size_t x_n,
                  std::uintptr_t src, std::size_t src_n, std::uintptr_t dst, std::size_t dst_n, bool has_sequence,
                  std::size_t kernels, std::size_t sfeatures, std::uintptr_t sop, std::size_t sop_n,
                  std::uintptr_t scls, std::size_t scls_n, std::uintptr_t sx, std::size_t sx_n,
                  std::size_t sequence_unknown_ops, std::size_t unknown_ops) {
  return guarded([&] {
    const auto& m = held<std::shared_ptr<const perfcard::LearnedModel>>(model, "learned model");
    perfcard::OperatorGraph g;
    perfcard::KernelSequence q;
    perfcard::ModelInputs in;
    in.unknown_ops = unknown_ops;
    if (has_graph) {
      g = graph_at(nodes, features, op, op_n, cls, cls_n, x, x_n, src, src_n, dst, dst_n);
      in.graph = &g;
    }
    if (has_sequence) {
      q = sequence_at(kernels, sfeatures, sop, sop_n, scls, scls_n, sx, sx_n, sequence_unknown_ops);
      in.sequence = &q;
    }
    val r = val::object();
    r.set("ok", true);
    r.set("handle", kept(m->prepare(in)));
    return r;
  });
}

int decide(int model, int state_handle, std::uintptr_t query, std::size_t query_n, std::uintptr_t rows, std::size_t n) {
  const double length = number([&] {
    const auto& m = held<std::shared_ptr<const perfcard::LearnedModel>>(model, "learned model");
    const auto& s = held<std::shared_ptr<const perfcard::LearnedState>>(state_handle, "model state");
    const auto q = at<char>(query, query_n);
    const std::vector<perfcard::RowQuery> queries = perfcard::wasm::parse_queries({q.data(), q.size()});
    const auto values = at<float>(rows, n);
    if (!queries.empty() && n % queries.size() != 0)
      throw perfcard::internal_error(std::to_string(n) + " feature values for " + std::to_string(queries.size()) + " device rows");
    const std::vector<perfcard::Verdict> v =
        m->decide(*s, queries, perfcard::FeatureRows{values, queries.empty() ? 0 : n / queries.size()});
    state().text = perfcard::wasm::verdicts_text(v);
    return double(state().text.size());
  });
  return std::isnan(length) ? -1 : int(length);
}

std::uintptr_t last_text() { return reinterpret_cast<std::uintptr_t>(state().text.data()); }

val last_error() { return state().last_error; }

bool release(int handle) { return state().held.erase(handle) != 0; }

int max_embedding() { return int(kMaxEmbedding); }

val probe_machine(double gemm_ms, double stream_ms) {
  return guarded([&] {
    perfcard::ProbeOptions o;
    o.gemm_ms = gemm_ms;
    o.stream_ms = stream_ms;
    const perfcard::ProbeResult p = perfcard::probe_machine([] { return emscripten_get_now(); }, o);
    val r = val::object();
    r.set("ok", true);
    r.set("gemm_gflops", p.gemm_gflops);
    r.set("stream_gbs", p.stream_gbs);
    r.set("elapsed_ms", p.elapsed_ms);
    r.set("gemm_blocks", p.gemm_blocks);
    r.set("stream_passes", p.stream_passes);
    return r;
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(perfcard_learned) {
  emscripten::function("loadNetwork", &load_network);
  emscripten::function("margin", &margin);
  emscripten::function("margins", &margins);
  emscripten::function("embedGraph", &embed_graph);
  emscripten::function("embedSequence", &embed_sequence);
  emscripten::function("head", &head);
  emscripten::function("lastError", &last_error);
  emscripten::function("loadModel", &load_model);
  emscripten::function("prepareModel", &prepare_model);
  emscripten::function("decide", &decide);
  emscripten::function("lastText", &last_text);
  emscripten::function("release", &release);
  emscripten::function("maxEmbedding", &max_embedding);
  emscripten::function("probeMachine", &probe_machine);
}
