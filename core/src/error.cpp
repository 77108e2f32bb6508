#include "perfcard/error.h"

namespace perfcard {

std::string Location::to_string() const {
  std::string s;
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : ", ") + part; };
  if (!node.empty()) add("node " + node + (op_type.empty() ? "" : " (" + op_type + ")"));
  else if (!op_type.empty()) add("op " + op_type);
  if (!graph.empty()) add("in subgraph " + graph);
  if (byte_offset) add("byte offset " + std::to_string(*byte_offset));
  return s;
}

Error::Error(const std::string& message, Location where)
    : std::runtime_error(where.empty() ? message : message + " [" + where.to_string() + "]"),
      message_(message),
      where_(std::move(where)) {}

}  // namespace perfcard
