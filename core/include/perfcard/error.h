// The one error type of the core. Every failure a user can cause (bad bytes, bad graph, bad options,
// bad weights file) is reported as perfcard::Error with a location, so the CLI and the JS boundary can
// show "what and where" without knowing which stage failed.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace perfcard {

struct Location {
  std::optional<std::uint64_t> byte_offset;  // offset into the loaded bytes
  std::string node;                          // node name (or "#index" when unnamed)
  std::string op_type;
  std::string graph;                         // subgraph path, empty for the main graph

  bool empty() const { return !byte_offset && node.empty() && op_type.empty() && graph.empty(); }
  std::string to_string() const;
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, Location where = {});
  const std::string& message() const { return message_; }  // without the location suffix
  const Location& where() const { return where_; }

 private:
  std::string message_;
  Location where_;
};

}  // namespace perfcard
