// JSON form of an analysis: the one document the CLI prints and the wasm module returns.
// The schema is described in docs/analyze-json.md; schema_version changes when a field changes meaning.
#pragma once

#include "perfcard/analysis.h"
#include "perfcard/json.h"

namespace perfcard {

// A hostile model can raise a warning or name an unknown op per node: documents list the first these many
// and say how many they leave out, so that their size follows what a person can read, not the file.
inline constexpr std::size_t kMaxListed = 1000;

inline constexpr int kAnalyzeSchemaVersion = 1;

Json analysis_to_json(const Model& model, const Analysis& analysis, bool per_node);

// Parses "name=value" dim bindings as the CLI and the JS API accept them.
DimBindings parse_dim_bindings(const std::vector<std::string>& specs);

}  // namespace perfcard
