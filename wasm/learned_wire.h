// How a learned model's answers cross between the page's two wasm modules (the core's, wasm/bindings.cpp,
// and the learned one, wasm/learned/bindings.cpp): its description when it is loaded, and per device row
// the core's query and the model's verdict, as short texts (tab-separated fields, one record per line,
// numbers as the hex digits of their bits so they cross exactly). Compiled into both modules: one writer
// and one reader of each text.
#pragma once

#include <string>
#include <string_view>

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

std::string query_text(const RowQuery& query);
RowQuery parse_query(std::string_view text);

std::string verdict_text(const Verdict& verdict);
Verdict parse_verdict(std::string_view text);

}  // namespace perfcard::wasm
