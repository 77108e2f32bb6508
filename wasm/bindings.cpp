// Embind boundary of the core: translates types and errors, nothing else.
//
// JS (wasm/perfcard.js) allocates a buffer in wasm memory with _malloc, copies the model bytes into it
// once, and calls analyzeBuffer(ptr, len, optionsJson). The result is a plain JS object:
//   {ok: true,  json: "<the document analysis_to_json makes, as the CLI prints it>"}
//   {ok: false, message: "<what() of the error>", detail, byteOffset?, node?, opType?, graph?}
// No C++ exception crosses the boundary: everything is caught here and handed over as data, and the
// wrapper turns {ok: false} into a JS Error.
#include <emscripten/bind.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <cstdint>
#include <exception>
#include <new>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "perfcard/analysis.h"
#include "perfcard/error.h"
#include "perfcard/onnx_loader.h"
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

val failure(const std::string& message) {
  val r = val::object();
  r.set("ok", false);
  r.set("message", message);
  r.set("detail", message);
  return r;
}

val failure(const perfcard::Error& e) {
  val r = failure(std::string(e.what()));
  r.set("detail", e.message());
  const perfcard::Location& w = e.where();
  if (w.byte_offset) r.set("byteOffset", double(*w.byte_offset));
  if (!w.node.empty()) r.set("node", w.node);
  if (!w.op_type.empty()) r.set("opType", w.op_type);
  if (!w.graph.empty()) r.set("graph", w.graph);
  return r;
}

val analyze_buffer(std::uintptr_t data, std::size_t size, const std::string& options_json) {
  try {
    Options opt = parse_options(options_json);
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(data);
    perfcard::Model model = perfcard::load_model(std::span<const std::uint8_t>(bytes, size));
    perfcard::Analysis analysis = perfcard::analyze(model, opt.analyze);
    // Names in a model are not guaranteed UTF-8; a JS string cannot carry invalid UTF-8 anyway.
    std::string text = perfcard::analysis_to_json(model, analysis, opt.per_node)
                           .dump(-1, ' ', false, json::error_handler_t::replace);
    val r = val::object();
    r.set("ok", true);
    r.set("json", text);
    return r;
  } catch (const perfcard::Error& e) {
    return failure(e);
  } catch (const std::bad_alloc&) {
    return failure("out of memory");
  } catch (const std::exception& e) {
    return failure(std::string(e.what()));
  } catch (...) {
    return failure("unknown internal error");
  }
}

int schema_version() { return perfcard::kAnalyzeSchemaVersion; }
std::string version() { return PERFCARD_VERSION; }
// Bytes of the wasm heap in use: the tests check that calls leave nothing behind.
double heap_in_use() { return double(mallinfo().uordblks); }

}  // namespace

EMSCRIPTEN_BINDINGS(perfcard) {
  emscripten::function("analyzeBuffer", &analyze_buffer);
  emscripten::function("schemaVersion", &schema_version);
  emscripten::function("version", &version);
  emscripten::function("heapInUse", &heap_in_use);
}
