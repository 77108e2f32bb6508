// Loads an ONNX ModelProto from bytes into the graph IR.
//
// Weight payloads are skipped in place, never copied: a 1 GB model costs a few MB of IR. Models whose
// weights live in external-data files load without those files. Everything outside the payloads is
// validated, and a problem is reported with the byte offset where it was found.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "perfcard/graph.h"

namespace perfcard {

struct LoadLimits {
  int max_subgraph_depth = 16;             // If/Loop/Scan nesting
  int max_rank = 64;                       // dims of one tensor
  std::int64_t max_dim = std::int64_t{1} << 40;
  std::size_t max_const_elements = 4096;   // constants kept for shape-value propagation
  std::size_t max_attribute_values = std::size_t{1} << 20;  // ints / floats / strings of one attribute
  std::int64_t max_supported_opset = 21;   // default-domain opset this build knows
};

Model load_model(std::span<const std::uint8_t> bytes, const LoadLimits& limits = {});

}  // namespace perfcard
