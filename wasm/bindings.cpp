// Embind boundary of the core: translates types and errors, nothing else.
//
// JS (wasm/perfcard.js) allocates a buffer in wasm memory with _malloc, copies the model bytes into it
// once, and calls one of
//   analyzeBuffer(ptr, len, optionsJson)   the document of `perfcard analyze --json`
//   predictBuffer(ptr, len, optionsJson)   the document of `perfcard predict --json`
//   openModel(ptr, len)                    parses once and keeps the graph IR: {ok, handle}; the caller may
//                                          free the bytes right after (the IR owns what it needs)
//   modelAnalyze(handle, optionsJson), modelPredict(handle, optionsJson), closeModel(handle)
//   devicesJson()                          the embedded device catalog, carbon regions and predictor
// Results are plain JS objects:
//   {ok: true,  json: "<the document, as the CLI prints it>"}   (openModel: {ok: true, handle})
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

#include <nlohmann/json.hpp>

#include "perfcard/analysis.h"
#include "perfcard/carbon.h"
#include "perfcard/device.h"
#include "perfcard/embedded.h"
#include "perfcard/error.h"
#include "perfcard/onnx_loader.h"
#include "perfcard/predict.h"
#include "perfcard/predictor.h"
#include "perfcard/report.h"

namespace {

using emscripten::val;
using nlohmann::json;

struct Options {
  perfcard::AnalyzeOptions analyze;
  bool per_node = false;
};

// {"dims": {"batch": 8, ...}, "perNode": false}. Dims become the CLI's NAME=VALUE specs, so the core
// checks them and reports a bad value with the same words as `perfcard analyze --dim`.
Options parse_options(const std::string& text) {
  Options o;
  if (text.empty()) return o;
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !(j.is_object() || j.is_null())) throw perfcard::Error("options must be a JSON object");
  if (j.is_null()) return o;
  std::vector<std::string> specs;
  for (const auto& [key, value] : j.items()) {
    if (key == "dims") {
      if (value.is_null()) continue;
      if (!value.is_object()) throw perfcard::Error("option 'dims' must be an object like {batch: 8}");
      for (const auto& [name, v] : value.items()) {
        if (v.is_string()) specs.push_back(name + "=" + v.get<std::string>());
        else if (v.is_number()) specs.push_back(name + "=" + v.dump());
        else throw perfcard::Error("bad dim binding '" + name + "': the value must be a whole number from 0 to 2^40");
      }
    } else if (key == "perNode") {
      if (value.is_null()) continue;
      if (!value.is_boolean()) throw perfcard::Error("option 'perNode' must be a boolean");
      o.per_node = value.get<bool>();
    } else {
      throw perfcard::Error("unknown option '" + key + "' (known: dims, perNode)");
    }
  }
  o.analyze.dims = perfcard::parse_dim_bindings(specs);
  return o;
}

// Dims as the CLI's NAME=VALUE specs: the core checks them with the words of `--dim`.
void add_dim_specs(const json& value, std::vector<std::string>& specs) {
  if (value.is_null()) return;
  if (!value.is_object()) throw perfcard::Error("option 'dims' must be an object like {batch: 8}");
  for (const auto& [name, v] : value.items()) {
    if (v.is_string()) specs.push_back(name + "=" + v.get<std::string>());
    else if (v.is_number()) specs.push_back(name + "=" + v.dump());
    else throw perfcard::Error("bad dim binding '" + name + "': the value must be a whole number from 0 to 2^40");
  }
}

json parse_object(const std::string& text) {
  if (text.empty()) return json();
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !(j.is_object() || j.is_null())) throw perfcard::Error("options must be a JSON object");
  return j;
}

// A number option as the CLI reads its flag: the message names the CLI flag, as `perfcard predict` does.
double number_option(const json& v, const std::string& key, const std::string& flag) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    try {
      std::size_t used = 0;
      double x = std::stod(s, &used);
      if (used == s.size()) return x;
    } catch (const std::exception&) {
    }
    throw perfcard::Error(flag + " expects a number, got '" + s + "'");
  }
  throw perfcard::Error("option '" + key + "' must be a number");
}

std::string string_option(const json& v, const std::string& key) {
  if (!v.is_string()) throw perfcard::Error("option '" + key + "' must be a string");
  return v.get<std::string>();
}

// The options of `perfcard predict`, by their JS names:
//   {devices: ["h100-sxm5-80gb", "l4"] | "all" | "cpus" | "every" | "a,b", batch: [1, 8] | 8 | "1,8",
//    precision, mode, dims: {sequence: 128}, region, gridGPerKwh, pue, latencyTargetMs,
//    runtime, cpuRuntime, kernels: false}
perfcard::PredictOptions parse_predict_options(const std::string& text) {
  perfcard::PredictOptions o;
  json j = parse_object(text);
  if (j.is_null()) return o;
  std::vector<std::string> specs;
  auto split = [](const std::string& s, std::vector<std::string>& out) {
    std::string cur;
    for (char ch : s) {
      if (ch == ',') { if (!cur.empty()) out.push_back(cur); cur.clear(); }
      else cur += ch;
    }
    if (!cur.empty()) out.push_back(cur);
  };
  for (const auto& [key, value] : j.items()) {
    if (value.is_null()) continue;
    if (key == "devices" || key == "device") {
      o.devices.clear();
      if (value.is_string()) split(value.get<std::string>(), o.devices);
      else if (value.is_array()) {
        for (const auto& d : value) o.devices.push_back(string_option(d, key + "[]"));
      } else throw perfcard::Error("option 'devices' must be an array of device ids or \"all\"");
    } else if (key == "batch" || key == "batches") {
      std::vector<json> items;
      if (value.is_array()) items.assign(value.begin(), value.end());
      else if (value.is_string()) {
        std::vector<std::string> parts;
        split(value.get<std::string>(), parts);
        for (auto& p : parts) items.emplace_back(p);
      } else items.push_back(value);
      o.batches.clear();
      for (const auto& b : items) o.batches.push_back(std::int64_t(number_option(b, key, "--batch")));
    } else if (key == "precision") o.precision = perfcard::parse_precision(string_option(value, key));
    else if (key == "mode") o.mode = perfcard::parse_mode(string_option(value, key));
    else if (key == "dims") add_dim_specs(value, specs);
    else if (key == "region") o.region = string_option(value, key);
    else if (key == "gridGPerKwh") o.grid_g_per_kwh = number_option(value, key, "--grid-g-per-kwh");
    else if (key == "pue") o.pue = number_option(value, key, "--pue");
    else if (key == "latencyTargetMs") o.latency_target_ms = number_option(value, key, "--latency-target-ms");
    else if (key == "runtime") o.gpu_runtime = string_option(value, key);
    else if (key == "cpuRuntime") o.cpu_runtime = string_option(value, key);
    else if (key == "kernels") {
      if (!value.is_boolean()) throw perfcard::Error("option 'kernels' must be a boolean");
      o.keep_kernels = value.get<bool>();
    } else {
      throw perfcard::Error("unknown option '" + key +
                            "' (known: devices, batch, precision, mode, dims, region, gridGPerKwh, pue, "
                            "latencyTargetMs, runtime, cpuRuntime, kernels)");
    }
  }
  o.dims = perfcard::parse_dim_bindings(specs);
  return o;
}

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
  perfcard::RooflinePredictor predictor;
  Data()
      : catalog(perfcard::DeviceCatalog::parse(embedded("devices.json"))),
        carbon(perfcard::CarbonTable::parse(embedded("carbon_regions.json"))),
        constants(perfcard::RooflineConstants::parse(embedded("roofline.json"))),
        predictor(constants) {}
};

const Data& data() {
  static std::unique_ptr<Data> d;
  if (!d) d = std::make_unique<Data>();  // a parse error propagates and is retried on the next call
  return *d;
}

std::string dump(const json& doc) {
  // Names in a model are not guaranteed UTF-8; a JS string cannot carry invalid UTF-8 anyway.
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string predict_json(const perfcard::Model& model, const std::string& options_json) {
  perfcard::PredictOptions opt = parse_predict_options(options_json);
  const Data& d = data();
  perfcard::PredictResult r = perfcard::predict(model, d.catalog, d.predictor, d.constants, d.carbon, opt);
  return dump(perfcard::predict_to_json(r));
}

std::string analyze_json(const perfcard::Model& model, const std::string& options_json) {
  Options opt = parse_options(options_json);
  perfcard::Analysis analysis = perfcard::analyze(model, opt.analyze);
  return dump(perfcard::analysis_to_json(model, analysis, opt.per_node));
}

json sourced(const perfcard::Sourced& s) {
  if (!s.present) return nullptr;
  return s.value;
}

// The catalog as the page needs it: what to list, compare against (memory, peaks) and the MIG tables,
// the carbon regions, the runtimes and the predictor with its measured accuracy per device family.
std::string devices_json() {
  const Data& d = data();
  json devs = json::array();
  for (const auto& dev : d.catalog.devices()) {
    json peaks = json::object();
    for (const auto& [p, s] : dev.peak_tflops) peaks[std::string(perfcard::precision_name(p))] = s.value;
    std::string family;
    try {
      d.constants.family_of(dev, &family);
    } catch (const std::exception&) {
      family.clear();
    }
    json e = {{"id", dev.id}, {"name", dev.name}, {"kind", dev.kind}, {"vendor", dev.vendor}, {"arch", dev.arch},
              {"family", family.empty() ? json(nullptr) : json(family)},
              {"memory_gb", sourced(dev.memory_gb)}, {"memory_bandwidth_gbs", sourced(dev.memory_bandwidth_gbs)},
              {"peak_tflops", peaks}, {"sm_count", sourced(dev.sm_count)}, {"l2_mb", sourced(dev.l2_mb)},
              {"tdp_w", sourced(dev.tdp_w)}, {"idle_w", sourced(dev.idle_w)}, {"cores", sourced(dev.cores)},
              {"peak_fp32_gflops", sourced(dev.peak_fp32_gflops)}};
    if (dev.mig) {
      json profiles = json::array();
      for (const auto& p : dev.mig->profiles)
        profiles.push_back({{"name", p.name}, {"memory_gb", p.memory_gb}, {"compute_slices", p.compute_slices},
                            {"memory_slices", p.memory_slices}, {"max_instances", p.max_instances}});
      e["mig"] = {{"compute_slices_total", dev.mig->compute_slices_total},
                  {"memory_slices_total", dev.mig->memory_slices_total}, {"profiles", profiles},
                  {"source", dev.mig->source}};
    } else {
      e["mig"] = nullptr;
    }
    devs.push_back(std::move(e));
  }
  json regions = json::array();
  for (const auto& r : d.carbon.regions())
    regions.push_back({{"code", r.code}, {"name", r.name}, {"g_per_kwh", r.g_per_kwh}, {"year", r.year},
                       {"source", r.source}});
  json runtimes = json::array();
  for (const auto& [name, rt] : d.constants.runtimes) runtimes.push_back({{"name", name}, {"kind", rt.kind}});
  json accuracy = json::object();
  for (const auto& [family, a] : d.constants.accuracy)
    accuracy[family] = {{"mape", a.mape}, {"rows", a.rows}, {"source", a.source}};
  json doc = {{"devices", devs},
              {"regions", regions},
              {"default_region", d.carbon.default_region()},
              {"default_pue", d.carbon.default_pue()},
              {"pue_source", d.carbon.pue_source()},
              {"runtimes", runtimes},
              {"predictor", {{"name", d.predictor.name()}, {"version", d.predictor.version()},
                             {"provenance", d.constants.provenance}, {"accuracy", accuracy}}},
              {"version", PERFCARD_VERSION}};
  return dump(doc);
}

// Models opened once and predicted many times (the page re-predicts on every setting change).
std::map<int, std::unique_ptr<perfcard::Model>>& open_models() {
  static std::map<int, std::unique_ptr<perfcard::Model>> m;
  return m;
}

const perfcard::Model& open_model(int handle) {
  auto& m = open_models();
  auto it = m.find(handle);
  if (it == m.end()) throw perfcard::Error("this model was closed (handle " + std::to_string(handle) + ")");
  return *it->second;
}

val failure(const std::string& message, perfcard::ErrorCode code) {
  val r = val::object();
  r.set("ok", false);
  r.set("message", message);
  r.set("detail", message);
  r.set("code", std::string(perfcard::error_code_name(code)));
  return r;
}

val failure(const perfcard::Error& e) {
  val r = failure(std::string(e.what()), e.code());
  r.set("detail", e.message());
  const perfcard::Location& w = e.where();
  if (w.byte_offset) r.set("byteOffset", double(*w.byte_offset));
  if (!w.node.empty()) r.set("node", w.node);
  if (!w.op_type.empty()) r.set("opType", w.op_type);
  if (!w.graph.empty()) r.set("graph", w.graph);
  return r;
}

val success(const std::string& text) {
  val r = val::object();
  r.set("ok", true);
  r.set("json", text);
  return r;
}

// Runs f, turning every error into {ok: false, ...}.
template <class F>
val guarded(F&& f) {
  try {
    return f();
  } catch (const perfcard::Error& e) {
    return failure(e);
  } catch (const std::bad_alloc&) {
    return failure("out of memory", perfcard::ErrorCode::Limit);
  } catch (const std::exception& e) {
    return failure(perfcard::escape_text(e.what()), perfcard::ErrorCode::Internal);
  } catch (...) {
    return failure("unknown internal error", perfcard::ErrorCode::Internal);
  }
}

std::span<const std::uint8_t> bytes_at(std::uintptr_t data, std::size_t size) {
  return {reinterpret_cast<const std::uint8_t*>(data), size};
}

val analyze_buffer(std::uintptr_t data, std::size_t size, const std::string& options_json) {
  return guarded([&] {
    parse_options(options_json);  // option errors first, as the CLI reports them before reading the file
    perfcard::Model model = perfcard::load_model(bytes_at(data, size));
    return success(analyze_json(model, options_json));
  });
}

val predict_buffer(std::uintptr_t data, std::size_t size, const std::string& options_json) {
  return guarded([&] {
    parse_predict_options(options_json);
    perfcard::Model model = perfcard::load_model(bytes_at(data, size));
    return success(predict_json(model, options_json));
  });
}

val open_model_buffer(std::uintptr_t data, std::size_t size) {
  return guarded([&] {
    static int next = 1;
    auto model = std::make_unique<perfcard::Model>(perfcard::load_model(bytes_at(data, size)));
    int handle = next++;
    open_models()[handle] = std::move(model);
    val r = val::object();
    r.set("ok", true);
    r.set("handle", handle);
    return r;
  });
}

val model_analyze(int handle, const std::string& options_json) {
  return guarded([&] { return success(analyze_json(open_model(handle), options_json)); });
}

val model_predict(int handle, const std::string& options_json) {
  return guarded([&] { return success(predict_json(open_model(handle), options_json)); });
}

bool close_model(int handle) { return open_models().erase(handle) != 0; }

int open_model_count() { return int(open_models().size()); }

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
  emscripten::function("predictSchemaVersion", &predict_schema_version);
  emscripten::function("schemaVersion", &schema_version);
  emscripten::function("version", &version);
  emscripten::function("heapInUse", &heap_in_use);
}
