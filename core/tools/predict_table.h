// The human-readable table `perfcard predict` prints: one row per device and batch.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

namespace perfcard::tools {

void print_predict_table(std::ostream& os, const nlohmann::json& doc);

}  // namespace perfcard::tools
