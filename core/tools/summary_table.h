// The human-readable summary the CLI prints: a few lines of totals, the op-type table, warnings.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

namespace perfcard::tools {

void print_summary(std::ostream& os, const std::string& path, const nlohmann::json& doc, bool per_node);
std::string human(double v, const char* unit);  // 4.09e9 -> "4.09 G" + unit

}  // namespace perfcard::tools
