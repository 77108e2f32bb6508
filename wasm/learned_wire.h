// How a learned model's answers cross between the page's two wasm modules (the core's, wasm/bindings.cpp,
// and the learned one, wasm/learned/bindings.cpp): its description when it is loaded, and for each batch
// of device rows (those of one prepared state: one batch size and runtime) the core's queries and the
// model's verdicts, as short texts (tab-separated fields, one record per line, numbers as the hex digits
// of their bits so they cross exactly). Compiled into both modules: one writer and one reader of each
// text.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "perfcard/learned_model.h"

namespace perfcard::wasm {

struct ModelDescription {
  std::string name, version;
  bool reads_graph = false, reads_sequence = false;
  TrainingAccuracy accuracy;
};

std::string description_text(const LearnedModel& model);
ModelDescription parse_description(std::string_view text);

std::string schemas_text(const CoreSchemas& core);
CoreSchemas parse_schemas(std::string_view text);

// One record per row.
std::string queries_text(std::span<const RowQuery> queries);
std::vector<RowQuery> parse_queries(std::string_view text);

// Per verdict a record of its numbers, then one per note. `expected`: the count the reader asked for.
std::string verdicts_text(std::span<const Verdict> verdicts);
std::vector<Verdict> parse_verdicts(std::string_view text, std::size_t expected);

}  // namespace perfcard::wasm
