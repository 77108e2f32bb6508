#include "perfcard/options.h"

#include <algorithm>
#include <cmath>
#include <exception>

#include "perfcard/error.h"
#include "perfcard/memory_model.h"
#include "perfcard/predictor_registry.h"
#include "perfcard/report.h"

namespace perfcard {
namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : s) {
    if (ch == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::string string_option(const Json& v, const std::string& key) {
  if (!v.is_string()) throw option_error("option '" + key + "' must be a string");
  return v.as_string();
}

bool bool_option(const Json& v, const std::string& key) {
  if (!v.is_bool()) throw option_error("option '" + key + "' must be a boolean");
  return v.as_bool();
}

// Dims become NAME=VALUE specs, so that parse_dim_bindings checks them with the words of `--dim`.
void add_dim_specs(const Json& value, std::vector<std::string>& specs) {
  if (value.is_null()) return;
  if (!value.is_object()) throw option_error("option 'dims' must be an object like {batch: 8}");
  for (const auto& [name, v] : value.members()) {
    if (v.is_string()) specs.push_back(name + "=" + v.as_string());
    else if (v.is_number()) specs.push_back(name + "=" + v.dump());  // 2.5 is refused by its spec, "batch=2.5"
    else throw option_error("bad dim binding '" + name + "': the value must be a whole number from 0 to 2^40");
  }
}

const Json& object_or_null(const Json& j) {
  if (!(j.is_object() || j.is_null())) throw option_error("options must be a JSON object");
  return j;
}

Json parse_text(std::string_view text) {
  if (text.empty()) return Json();
  Json j = Json::parse(text, "the options text", ErrorCode::BadOption);
  object_or_null(j);
  return j;
}

}  // namespace

double number_option(const Json& v, const std::string& key, const std::string& flag) {
  double x = 0;
  if (v.is_number()) {
    x = v.as_number();
  } else if (v.is_string()) {
    const std::string& s = v.as_string();
    try {
      std::size_t used = 0;
      x = std::stod(s, &used);
      if (used != s.size()) throw std::invalid_argument("trailing text");
    } catch (const std::exception&) {
      throw option_error(flag + " expects a number, got '" + s + "'");
    }
  } else {
    throw option_error("option '" + key + "' must be a number");
  }
  if (!std::isfinite(x)) throw option_error(flag + " expects a finite number, got " + v.dump());
  return x;
}

std::int64_t whole_option(const Json& v, const std::string& key, const std::string& flag, std::int64_t lo,
                          std::int64_t hi) {
  const double x = number_option(v, key, flag);
  if (x != std::floor(x) || x < double(lo) || x > double(hi))
    throw option_error(flag + " expects a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) +
                       ", got " + (v.is_string() ? v.as_string() : v.dump()));
  return std::int64_t(x);
}

AnalyzeRequest analyze_options_from_json(const Json& j) {
  AnalyzeRequest r;
  if (object_or_null(j).is_null()) return r;
  std::vector<std::string> specs;
  for (const auto& [key, value] : j.members()) {
    if (key == "dims") add_dim_specs(value, specs);
    else if (key == "perNode") r.per_node = value.is_null() ? false : bool_option(value, key);
    else throw option_error("unknown option '" + key + "' (known: dims, perNode)");
  }
  r.options.dims = parse_dim_bindings(specs);
  r.options.node_costs = r.per_node;  // the report's table is all that reads them
  return r;
}

PredictOptions predict_options_from_json(const Json& j) {
  PredictOptions o;
  if (object_or_null(j).is_null()) return o;
  std::vector<std::string> specs;
  for (const auto& [key, value] : j.members()) {
    if (value.is_null()) continue;
    if (key == "devices" || key == "device") {
      o.devices.clear();
      if (value.is_string()) o.devices = split_list(value.as_string());
      else if (value.is_array()) for (const auto& d : value.items()) o.devices.push_back(string_option(d, key + "[]"));
      else throw option_error("option 'devices' must be an array of device ids or \"all\"");
    } else if (key == "batch" || key == "batches") {
      std::vector<Json> items;
      if (value.is_array()) items = value.items();
      else if (value.is_string()) for (auto& p : split_list(value.as_string())) items.emplace_back(p);
      else items.push_back(value);
      // Checked before anything is stored: a list of 10,000 sizes is refused, not predicted; an empty one
      // ("", [], ",") is refused here rather than left for predict to find.
      if (items.empty()) throw option_error("--batch needs at least one batch size, e.g. 1 or 1,8");
      if (items.size() > kMaxBatchSizes)
        throw option_error("--batch lists " + std::to_string(items.size()) + " sizes; at most " +
                           std::to_string(kMaxBatchSizes) + " per prediction");
      o.batches.clear();
      for (const auto& b : items) o.batches.push_back(whole_option(b, key, "--batch", 1, std::int64_t{1} << 24));
    } else if (key == "precision") {
      o.precision = parse_precision(string_option(value, key));
    } else if (key == "mode") {
      o.mode = parse_mode(string_option(value, key));
    } else if (key == "optimizer") {
      o.optimizer = parse_optimizer(string_option(value, key));
    } else if (key == "dims") {
      add_dim_specs(value, specs);
    } else if (key == "region") {
      o.region = string_option(value, key);
    } else if (key == "gridGPerKwh") {
      o.grid_g_per_kwh = number_option(value, key, "--grid-g-per-kwh");
    } else if (key == "pue") {
      o.pue = number_option(value, key, "--pue");
    } else if (key == "latencyTargetMs") {
      o.latency_target_ms = number_option(value, key, "--latency-target-ms");
    } else if (key == "hostUs") {
      o.host_us = number_option(value, key, "--host-us");
    } else if (key == "runtime") {
      o.gpu_runtime = string_option(value, key);
    } else if (key == "extraDevices") {
      if (!value.is_array()) throw option_error("extraDevices expects an array of device entries (the catalog's schema)");
      o.extra_devices = value;
    } else if (key == "cpuRuntime") {
      o.cpu_runtime = string_option(value, key);
    } else if (key == "threads") {
      o.cpu_threads = int(whole_option(value, key, "--threads", 0, 1 << 16));
    } else if (key == "kernels") {
      o.keep_kernels = bool_option(value, key);
    } else if (key == "features") {
      o.keep_features = bool_option(value, key);
    } else if (key == "predictor") {
      o.predictor = string_option(value, key);
      auto names = predictor_names();
      if (std::find(names.begin(), names.end(), o.predictor) == names.end()) {
        std::string known;
        for (auto n : names) (known += known.empty() ? "" : ", ") += n;
        throw option_error("unknown predictor '" + o.predictor + "' (known: " + known + ")");
      }
    } else {
      throw option_error("unknown option '" + key +
                         "' (known: devices, batch, precision, mode, optimizer, dims, region, gridGPerKwh, pue, "
                         "latencyTargetMs, hostUs, runtime, cpuRuntime, threads, kernels, features, predictor, "
                         "extraDevices)");
    }
  }
  o.dims = parse_dim_bindings(specs);
  return o;
}

AnalyzeRequest analyze_options_from_text(std::string_view text) { return analyze_options_from_json(parse_text(text)); }
PredictOptions predict_options_from_text(std::string_view text) { return predict_options_from_json(parse_text(text)); }

}  // namespace perfcard
