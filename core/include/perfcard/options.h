// The options of `analyze` and `predict`, parsed once, here: the JS API passes the caller's options object
// as JSON, and the CLI turns its flags into the same object, so that both accept and refuse the same
// values with the same words (messages name the CLI flag, e.g. "--batch expects ...").
//
//   analyze: {dims: {batch: 8, sequence: "128"}, perNode: false}
//   predict: {devices: ["h100-sxm5-80gb", "l4"] | "all" | "cpus" | "every" | "a,b", batch: [1, 8] | 8 | "1,8",
//             precision, mode, dims, region, gridGPerKwh, pue, latencyTargetMs, runtime, cpuRuntime,
//             threads, kernels}
#pragma once

#include <string>
#include <string_view>

#include "perfcard/analysis.h"
#include "perfcard/json.h"
#include "perfcard/predict.h"

namespace perfcard {

struct AnalyzeRequest {
  AnalyzeOptions options{{}, /*node_costs=*/false};  // per_node: true
  bool per_node = false;
};

// null or an empty text: the defaults. Unknown keys, values of the wrong type or out of range: an Error
// (ErrorCode::BadOption) naming the option and what it accepts.
AnalyzeRequest analyze_options_from_json(const Json& j);
PredictOptions predict_options_from_json(const Json& j);
// The same from JSON text ("" = defaults); text that is not a JSON object is refused.
AnalyzeRequest analyze_options_from_text(std::string_view text);
PredictOptions predict_options_from_text(std::string_view text);

// A number as the CLI reads its flags (and the options above their values): a JSON number, or text that is
// one finite number and nothing else; otherwise an Error naming `flag` (or `key`, for a value of another type).
double number_option(const Json& v, const std::string& key, const std::string& flag);
// A whole number in [lo, hi] read as number_option reads it: 1.5 or 1e300 is refused, never rounded or wrapped.
std::int64_t whole_option(const Json& v, const std::string& key, const std::string& flag, std::int64_t lo, std::int64_t hi);

}  // namespace perfcard
