// Embind boundary of the core: translates types and errors, nothing else (options are parsed and documents
// written by the core: perfcard/options.h, perfcard/catalog_json.h).
//
// JS (wasm/perfcard.js) allocates a buffer in wasm memory with _malloc, copies the model bytes into it
// once, and calls one of
//   analyzeBuffer(ptr, len, optionsJson)   the document of `perfcard analyze --json`
//   predictBuffer(ptr, len, optionsJson)   the document of `perfcard predict --json`
//   openModel(ptr, len)                    parses once and keeps the graph IR: {ok, handle}; the caller may
//                                          free the bytes right after (the IR owns what it needs)
//   modelAnalyze(handle, optionsJson), modelPredict(handle, optionsJson), closeModel(handle)
//   devicesJson()                          the embedded device catalog, carbon regions and predictor
//   loadPredictor(ptr, len, name)          a learned predictor's weights file (fetched by the page when
//                                          first needed), checked against the embedded manifest:
//                                          {ok, name, version};
//                                          its model is built in the learned module (remote_learned.h),
//                                          which perfcard.js instantiates first
//   verifyPredictor(ptr, len, name)        the manifest's check alone, which perfcard.js runs before it
//                                          fetches that runtime: {ok}
//   probeDeviceEntry(gemm, stream, blocks, passes)   "this device": the extraDevices entry of what the
//                                          learned module's probe measured (perfcard/machine_probe.h)
// Results are plain JS objects:
//   {ok: true,  ptr, length}: the document (UTF-8, as the CLI prints it) in wasm memory until
//                                          releaseDocument() (openModel: {ok: true, handle})
//   {ok: false, message: "<what() of the error>", detail, code, byteOffset?, node?, opType?, graph?}
//   code: perfcard::error_code_name ("invalid_model", "malformed", "limit", "bad_option", "bad_data", "internal")
// No C++ exception crosses the boundary: everything is caught here and handed over as data, and the
// wrapper turns {ok: false} into a JS Error. The data files (devices.json, carbon_regions.json,
// roofline.json) are compiled in (perfcard_data) and parsed once, on first use.
#include <emscripten/bind.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "perfcard/analysis.h"
#include "perfcard/carbon.h"
#include "perfcard/catalog_json.h"
#include "perfcard/device.h"
#include "perfcard/embedded.h"
#include "perfcard/machine_probe.h"
#include "perfcard/error.h"
#include "perfcard/onnx_loader.h"
#include "perfcard/options.h"
#include "perfcard/predict.h"
#include "perfcard/predict_cache.h"
#include "perfcard/predictor_registry.h"
#include "perfcard/roofline_predictor.h"
#include "perfcard/weights_file.h"
#include "perfcard/report.h"
#include "boundary.h"
#include "remote_learned.h"

namespace {

using emscripten::val;
using perfcard::wasm::failure;
using perfcard::wasm::guarded;

// The embedded data files, parsed once, with the CLI's message when one is missing.
std::string embedded(const char* name) {
  std::string_view e = perfcard::embedded_file(name);
  if (e.empty()) throw perfcard::Error(std::string("no embedded ") + name + " in this build");
  return std::string(e);
}

struct Data {
  perfcard::DeviceCatalog catalog;
  perfcard::CarbonTable carbon;
  perfcard::RooflineConstants constants;
  perfcard::PredictorSet predictors;  // learned ones join when the page loads their files
  Data()
      : catalog(perfcard::DeviceCatalog::parse(embedded("devices.json"))),
        carbon(perfcard::CarbonTable::parse(embedded("carbon_regions.json"))),
        constants(perfcard::RooflineConstants::parse(embedded("roofline.json"))) {
    predictors.roofline = std::make_shared<const perfcard::RooflinePredictor>(constants);
  }
};

Data& data() {
  static std::unique_ptr<Data> d;
  if (!d) d = std::make_unique<Data>();  // a parse error propagates and is retried on the next call
  return *d;
}

std::string predict_json(const perfcard::Model& model, const std::string& options_json,
                         perfcard::PredictCache* cache = nullptr) {
  perfcard::PredictOptions opt = perfcard::predict_options_from_text(options_json);
  const Data& d = data();
  auto predictor = perfcard::select_predictor(opt.predictor, d.predictors);
  perfcard::PredictResult r = perfcard::predict(model, d.catalog, *predictor, d.constants, d.carbon, opt, cache);
  return perfcard::predict_to_json_text(r);
}

std::string analyze_json(const perfcard::Model& model, const std::string& options_json) {
  perfcard::AnalyzeRequest opt = perfcard::analyze_options_from_text(options_json);
  perfcard::Analysis analysis = perfcard::analyze(model, opt.options);
  // Names in a model are not guaranteed UTF-8: the writer replaces what is not (a JS string cannot carry it).
  return perfcard::analysis_to_json(model, analysis, opt.per_node).dump();
}

// The catalog as the page needs it (perfcard::catalog_to_json, as `perfcard devices --json` prints it).
std::string devices_json() {
  const Data& d = data();
  return perfcard::catalog_to_json(d.catalog, d.carbon, d.constants, *d.predictors.roofline, PERFCARD_VERSION);
}

// Models opened once and predicted many times (the page re-predicts on every setting change), each with
// the analyses its predictions keep for the next (predict_cache.h).
struct OpenModel {
  explicit OpenModel(perfcard::Model m) : model(std::move(m)), cache(model) {}
  perfcard::Model model;
  perfcard::PredictCache cache;
};

std::map<int, std::unique_ptr<OpenModel>>& open_models() {
  static std::map<int, std::unique_ptr<OpenModel>> m;
  return m;
}

OpenModel& open_model(int handle) {
  auto& m = open_models();
  auto it = m.find(handle);
  if (it == m.end()) throw perfcard::Error("this model was closed (handle " + std::to_string(handle) + ")");
  return *it->second;
}

// The document stays here, in wasm memory, until JS has decoded it in place (TextDecoder over the bytes,
// instead of embind's byte-by-byte copy into a JS string, which was a sixth of a sweep's time) and called
// releaseDocument().
std::string& last_document() {
  static std::string last;
  return last;
}

void release_document() { std::string().swap(last_document()); }

val success(std::string text) {
  std::string& last = last_document();
  last = std::move(text);
  val r = val::object();
  r.set("ok", true);
  r.set("ptr", double(reinterpret_cast<std::uintptr_t>(last.data())));
  r.set("length", double(last.size()));
  return r;
}

std::span<const std::uint8_t> bytes_at(std::uintptr_t data, std::size_t size) {
  return {reinterpret_cast<const std::uint8_t*>(data), size};
}

val analyze_buffer(std::uintptr_t data, std::size_t size, const std::string& options_json) {
  return guarded([&] {
    perfcard::analyze_options_from_text(options_json);  // option errors first, as the CLI reports them before reading the file
    perfcard::Model model = perfcard::load_model(bytes_at(data, size));
    return success(analyze_json(model, options_json));
  });
}

val predict_buffer(std::uintptr_t data, std::size_t size, const std::string& options_json) {
  return guarded([&] {
    perfcard::predict_options_from_text(options_json);
    perfcard::Model model = perfcard::load_model(bytes_at(data, size));
    return success(predict_json(model, options_json));
  });
}

val open_model_buffer(std::uintptr_t data, std::size_t size) {
  return guarded([&] {
    static int next = 1;
    auto model = std::make_unique<OpenModel>(perfcard::load_model(bytes_at(data, size)));
    int handle = next++;
    open_models()[handle] = std::move(model);
    val r = val::object();
    r.set("ok", true);
    r.set("handle", handle);
    return r;
  });
}

val model_analyze(int handle, const std::string& options_json) {
  return guarded([&] { return success(analyze_json(open_model(handle).model, options_json)); });
}

val model_predict(int handle, const std::string& options_json) {
  return guarded([&] {
    OpenModel& m = open_model(handle);
    return success(predict_json(m.model, options_json, &m.cache));
  });
}

bool close_model(int handle) { return open_models().erase(handle) != 0; }

int open_model_count() { return int(open_models().size()); }

// The file's bytes are checked (manifest size and sha256, format, schema hash) and copied into the
// predictor, so the caller may free them at once. A file that fails leaves the loaded set unchanged.
val load_predictor_buffer(std::uintptr_t data_ptr, std::size_t size, const std::string& name) {
  return guarded([&] {
    Data& d = data();
    const auto bytes = bytes_at(data_ptr, size);
    auto p = perfcard::load_learned_predictor(embedded("manifest.json"), name, bytes, d.predictors.roofline,
                                             perfcard::wasm::RemoteLearned{}, d.predictors.learned);
    auto& learned = d.predictors.learned;
    std::erase_if(learned, [&](const auto& q) { return q->name() == p->name(); });
    learned.push_back(p);
    val r = val::object();
    r.set("ok", true);
    r.set("name", p->name());
    r.set("version", p->version());
    return r;
  });
}

// The manifest's check alone (size, sha256), before the learned runtime is fetched: a tampered or stale file
// is named as such even where the runtime cannot be loaded.
val verify_predictor_buffer(std::uintptr_t data_ptr, std::size_t size, const std::string& name) {
  return guarded([&] {
    perfcard::verify_weights(embedded("manifest.json"), name, bytes_at(data_ptr, size));
    val r = val::object();
    r.set("ok", true);
    return r;
  });
}

val probe_device_entry(double gemm_gflops, double stream_gbs, int gemm_blocks, int stream_passes) {
  return guarded([&] {
    perfcard::ProbeResult p;
    p.gemm_gflops = gemm_gflops;
    p.stream_gbs = stream_gbs;
    p.gemm_blocks = gemm_blocks;
    p.stream_passes = stream_passes;
    return success(perfcard::probe_device_entry(p, "this-device", "This device (browser, 1 thread)",
                                                "in this browser by PerfCard's page"));
  });
}

val devices_doc() {
  return guarded([&] { return success(devices_json()); });
}

int schema_version() { return perfcard::kAnalyzeSchemaVersion; }
int predict_schema_version() { return perfcard::kPredictSchemaVersion; }
std::string version() { return PERFCARD_VERSION; }
// Bytes of the wasm heap in use: the tests check that calls leave nothing behind.
double heap_in_use() { return double(mallinfo().uordblks); }

}  // namespace

EMSCRIPTEN_BINDINGS(perfcard) {
  emscripten::function("analyzeBuffer", &analyze_buffer);
  emscripten::function("predictBuffer", &predict_buffer);
  emscripten::function("openModel", &open_model_buffer);
  emscripten::function("modelAnalyze", &model_analyze);
  emscripten::function("modelPredict", &model_predict);
  emscripten::function("closeModel", &close_model);
  emscripten::function("openModelCount", &open_model_count);
  emscripten::function("devicesJson", &devices_doc);
  emscripten::function("probeDeviceEntry", &probe_device_entry);
  emscripten::function("loadPredictor", &load_predictor_buffer);
  emscripten::function("verifyPredictor", &verify_predictor_buffer);
  emscripten::function("predictSchemaVersion", &predict_schema_version);
  emscripten::function("schemaVersion", &schema_version);
  emscripten::function("version", &version);
  emscripten::function("heapInUse", &heap_in_use);
  emscripten::function("releaseDocument", &release_document);
}
