// What both wasm modules' bindings (bindings.cpp, learned/bindings.cpp) do at their edge: run a call and turn
// every C++ exception into data, {ok: false, message, detail, code, byteOffset?, node?, opType?, graph?},
// which wasm/perfcard.js turns into a JS Error. No exception crosses into JS.
#pragma once

#include <emscripten/val.h>

#include <exception>
#include <new>
#include <string>

#include "perfcard/error.h"

namespace perfcard::wasm {

inline emscripten::val failure(const std::string& message, ErrorCode code) {
  emscripten::val r = emscripten::val::object();
  r.set("ok", false);
  r.set("message", message);
  r.set("detail", message);
  r.set("code", std::string(error_code_name(code)));
  return r;
}

inline emscripten::val failure(const Error& e) {
  emscripten::val r = failure(std::string(e.what()), e.code());
  r.set("detail", e.message());
  const Location& w = e.where();
  if (w.byte_offset) r.set("byteOffset", double(*w.byte_offset));
  if (!w.node.empty()) r.set("node", w.node);
  if (!w.op_type.empty()) r.set("opType", w.op_type);
  if (!w.graph.empty()) r.set("graph", w.graph);
  return r;
}

// Runs f, turning every error into {ok: false, ...}.
template <class F>
emscripten::val guarded(F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    return failure(e);
  } catch (const std::bad_alloc&) {
    return failure("out of memory", ErrorCode::Limit);
  } catch (const std::exception& e) {
    return failure(escape_text(e.what()), ErrorCode::Internal);
  } catch (...) {
    return failure("unknown internal error", ErrorCode::Internal);
  }
}

}  // namespace perfcard::wasm
