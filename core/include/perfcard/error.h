// The one error type of the core. Every failure a user can cause (bad bytes, bad graph, bad options,
// bad weights file) is reported as perfcard::Error with a location, so the CLI and the JS boundary can
// show "what and where" without knowing which stage failed.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace perfcard {

struct Location {
  Location() = default;
  // Views, because the IR's names and op types are views into the model's strings.
  Location(std::optional<std::uint64_t> at, std::string_view node_name = {}, std::string_view op = {},
           std::string_view graph_path = {})
      : byte_offset(at), node(node_name), op_type(op), graph(graph_path) {}

  std::optional<std::uint64_t> byte_offset;  // offset into the loaded bytes
  std::string node;                          // node name (or "#index" when unnamed)
  std::string op_type;
  std::string graph;                         // subgraph path, empty for the main graph

  bool empty() const { return !byte_offset && node.empty() && op_type.empty() && graph.empty(); }
  std::string to_string() const;
};

// What kind of failure: stable across versions, for programs that react to errors (the CLI's --json error
// document, `code` on the JS PerfCardError). The message says what and where for people.
enum class ErrorCode : std::uint8_t {
  InvalidModel,  // "invalid_model": well-formed bytes, but not a valid ONNX graph (cycles, shapes, types)
  Malformed,     // "malformed": not an ONNX protobuf at all, or cut short
  Limit,         // "limit": beyond what PerfCard takes (rank, dims, elements, nesting, a newer opset)
  BadOption,     // "bad_option": an option or argument of the call
  BadData,       // "bad_data": a data file the core reads (device catalog, constants, predictor weights)
  Internal,      // "internal": a failure that is PerfCard's own (the JS side also uses it for wasm traps)
};
const char* error_code_name(ErrorCode c);
// The code error_code_name() names, or none (a failure that crossed a module boundary as its name).
std::optional<ErrorCode> error_code_from_name(std::string_view name);

class Error : public std::runtime_error {
 public:
  // The message and the location's strings are escaped: a NUL byte, another control character or a byte
  // that is not UTF-8 (a model's names are arbitrary bytes) becomes \xNN, so no consumer cuts the text.
  explicit Error(const std::string& message, Location where = {}, ErrorCode code = ErrorCode::InvalidModel);
  const std::string& message() const { return message_; }  // without the location suffix
  const Location& where() const { return where_; }
  ErrorCode code() const { return code_; }

 private:
  Error(std::string message, Location where, ErrorCode code, int);  // takes escaped text
  std::string message_;
  Location where_;
  ErrorCode code_;
};

// The errors of options and of data files, which carry no location.
inline Error option_error(const std::string& message) { return Error(message, {}, ErrorCode::BadOption); }
inline Error data_error(const std::string& message) { return Error(message, {}, ErrorCode::BadData); }
inline Error internal_error(const std::string& message) { return Error(message, {}, ErrorCode::Internal); }

// Escapes what would cut or garble a message: control characters and bytes that are not UTF-8 -> \xNN.
std::string escape_text(std::string_view text);

}  // namespace perfcard
