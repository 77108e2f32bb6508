#include "fuzz_entry.h"

#include <cmath>
#include <cstring>
#include <vector>
#include <span>
#include <stdexcept>

#include "perfcard/analysis.h"
#include "perfcard/error.h"
#include "perfcard/json.h"
#include "perfcard/onnx_loader.h"
#include "perfcard/options.h"
#include "perfcard/weights_file.h"

namespace perfcard::fuzz {
namespace {

// What an analysis that did not fail must look like; anything else is silent nonsense. Thrown as
// std::logic_error, which is not a perfcard::Error, so the fuzzer and the replay report it.
void check_shapes(const Graph& g, const GraphShapes& s) {
  if (s.values.size() != g.values.size() || s.status.size() != g.nodes.size())
    throw std::logic_error("shape result does not match the graph");
  for (const auto& v : s.values) {
    if (v.rank < -1 || (v.rank >= 0 && v.dims.size() != std::size_t(v.rank)))
      throw std::logic_error("inferred rank does not match its dims");
    for (auto d : v.dims)
      if (d < -1) throw std::logic_error("inferred dim below -1");
    if (v.value && v.fully_known() && v.value->size() != v.elements())
      throw std::logic_error("folded contents do not match their shape");
  }
  for (std::size_t n = 0; n < g.nodes.size(); ++n) {
    std::size_t k = 0;
    for (const auto& a : g.nodes[n].attributes)
      for (const auto& body : a.graphs) {
        if (k < s.subgraphs[n].size() && !s.subgraphs[n][k].values.empty()) check_shapes(body, s.subgraphs[n][k]);
        ++k;
      }
  }
}

void check_invariants(const Model& m, const Analysis& a) {
  check_shapes(m.graph, a.shapes.graph);
  const ModelTotals& t = a.totals;
  for (double x : {t.macs, t.flops, t.bytes_read, t.bytes_written, t.activations})
    if (std::isnan(x) || x < 0) throw std::logic_error("a model total is negative or NaN");
  for (const auto& [op, st] : a.by_op_type)
    if (std::isnan(st.flops) || st.flops < 0 || std::isnan(st.macs) || st.macs < 0)
      throw std::logic_error("op type " + op + " has negative or NaN cost");
}

}  // namespace

Outcome run_one(const std::uint8_t* data, std::size_t size, std::string* error) {
  try {
    Model m = load_model(std::span<const std::uint8_t>(data, size));
    AnalyzeOptions opts;
    // Small bindings for the usual symbol names, so symbolic models still get concrete shapes.
    opts.dims.values = {{"batch", 2}, {"batch_size", 2}, {"N", 2}, {"seq", 8}, {"sequence", 8}};
    opts.dims.unbound_default = 1;
    Analysis a = analyze(m, opts);
    check_invariants(m, a);
    return Outcome::Analyzed;
  } catch (const Error& e) {
    if (error) *error = e.what();
    return Outcome::Rejected;
  }
}

Outcome run_weights(const std::uint8_t* data, std::size_t size, std::string* error) {
  // read_weights views the caller's buffer with the file's alignment guarantee: copy into aligned storage,
  // as a loader of a real file would (vector / mmap), so that misalignment is the file's, not the fuzzer's.
  std::vector<std::uint64_t> storage((size + 7) / 8);
  if (size) std::memcpy(storage.data(), data, size);
  const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(storage.data()), size);
  try {
    WeightsFile w = read_weights(bytes);
    (void)w.predictor();
    (void)w.predictor_version();
    for (const auto& t : w.tensors) {
      if (t.bytes.size() != t.byte_size) throw std::logic_error("tensor view does not match its size");
      if (t.bytes.data() < bytes.data() || t.bytes.data() + t.bytes.size() > bytes.data() + bytes.size())
        throw std::logic_error("tensor view outside the file");
      (void)t.shape_string();
    }
    return Outcome::Analyzed;
  } catch (const Error& e) {
    if (error) *error = e.what();
    return Outcome::Rejected;
  }
}

Outcome run_options(const std::uint8_t* data, std::size_t size, std::string* error) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Outcome out = Outcome::Analyzed;
  // The core's JSON reader under the options: what it reads, it prints as text that reads back the same.
  std::string once;
  bool read = true;
  try {
    once = Json::parse(text, "fuzz").dump();
  } catch (const Error&) {
    read = false;
  }
  if (read) {
    try {
      if (Json::parse(once, "fuzz").dump() != once) throw std::logic_error("printed JSON does not read back as itself");
    } catch (const Error& e) {
      throw std::logic_error(std::string("printed JSON is refused: ") + e.what());
    }
  }
  try {
    analyze_options_from_text(text);
  } catch (const Error& e) {
    if (error) *error = e.what();
    out = Outcome::Rejected;
  }
  try {
    PredictOptions o = predict_options_from_text(text);
    if (o.batches.empty() || o.batches.size() > kMaxBatchSizes) throw std::logic_error("batch list out of bounds");
    for (auto b : o.batches)
      if (b < 1) throw std::logic_error("a batch size below 1 was accepted");
  } catch (const Error& e) {
    if (error && error->empty()) *error = e.what();
    out = Outcome::Rejected;
  }
  return out;
}

Entry entry_named(const std::string& name) {
  if (name == "onnx") return run_one;
  if (name == "pcwt") return run_weights;
  if (name == "options") return run_options;
  return nullptr;
}

}  // namespace perfcard::fuzz
