#include "perfcard/device.h"

#include <optional>

#include "perfcard/error.h"
#include "perfcard/json.h"

namespace perfcard {

std::string_view precision_name(Precision p) {
  switch (p) {
    case Precision::FP32: return "fp32";
    case Precision::TF32: return "tf32";
    case Precision::FP16: return "fp16";
    case Precision::BF16: return "bf16";
    case Precision::FP8: return "fp8";
    case Precision::INT8: return "int8";
  }
  return "fp32";
}

Precision parse_precision(std::string_view s) {
  for (Precision p : {Precision::FP32, Precision::TF32, Precision::FP16, Precision::BF16, Precision::FP8, Precision::INT8})
    if (precision_name(p) == s) return p;
  throw option_error("unknown precision '" + std::string(s) + "' (use fp32, tf32, fp16, bf16, fp8 or int8)");
}

int precision_bits(Precision p) {
  switch (p) {
    case Precision::FP32: case Precision::TF32: return 32;
    case Precision::FP16: case Precision::BF16: return 16;
    case Precision::FP8: case Precision::INT8: return 8;
  }
  return 32;
}

double Device::peak(Precision p) const {
  auto it = peak_tflops.find(p);
  return it == peak_tflops.end() ? 0 : it->second.value;
}

namespace {

// A catalog number is either a plain number or {"value": x, "source": "...", "uncertain": bool}.
Sourced sourced(const Json& entry, std::string_view field, const std::string& id) {
  Sourced s;
  const Json& v = entry[field];
  if (v.is_null()) return s;
  const std::string where = "device catalog: field '" + std::string(field) + "' of '" + id + "'";
  if (v.is_number()) {
    s.value = v.as_number();
  } else if (v.is_object() && v["value"].is_number()) {
    s.value = v["value"].as_number();
    if (v["source"].is_string()) s.source = v["source"].as_string();
    const Json& uncertain = v["uncertain"];
    if (!uncertain.is_null() && !uncertain.is_bool()) throw data_error(where + ": 'uncertain' must be true or false");
    s.uncertain = uncertain.is_bool() && uncertain.as_bool();
  } else if (v.is_object() && v.contains("value") && v["value"].is_null()) {
    return s;
  } else {
    throw data_error(where + " is not a number or {value, source}");
  }
  if (!(s.value >= 0)) throw data_error(where + " is negative");
  s.present = true;
  return s;
}

// Text fields may also be sourced objects ({"value": "Zen 4", "source": ...}).
std::string text_field(const Json& entry, std::string_view field, const std::string& fallback) {
  const Json& v = entry[field];
  if (v.is_string()) return v.as_string();
  if (v.is_object() && v["value"].is_string()) return v["value"].as_string();
  return fallback;
}

// A count the catalog gives as a number (slices, instances): a whole number in [0, 2^20], else -1, which
// the checks below refuse (a cast of 1e300 to int would be undefined).
int small_count(double v) { return v >= 0 && v <= double(1 << 20) && v == double(int(v)) ? int(v) : -1; }

// A GPU's MIG table; none without profiles.
std::optional<MigTable> parse_mig(const Json& m, const std::string& id) {
  MigTable t;
  t.source = m.string_or("source", "");
  t.compute_slices_total = small_count(m.number_or("compute_slices_total", 7));
  t.memory_slices_total = small_count(m.number_or("memory_slices_total", 8));
  const Json& profiles = m["profiles"];
  if (profiles.is_null()) return std::nullopt;
  if (!profiles.is_array()) throw data_error("device catalog: the MIG table of '" + id + "': 'profiles' must be an array");
  for (const Json& p : profiles.items()) {
    MigProfile mp;
    mp.name = text_field(p, "name", "");
    mp.memory_gb = sourced(p, "memory_gb", id).value;
    mp.compute_slices = small_count(sourced(p, "compute_slices", id).value);
    mp.memory_slices = small_count(sourced(p, "memory_slices", id).value);
    mp.max_instances = small_count(sourced(p, "max_instances", id).value);
    if (mp.name.empty() || mp.compute_slices <= 0 || mp.compute_slices > t.compute_slices_total ||
        mp.memory_slices <= 0 || mp.memory_slices > t.memory_slices_total || mp.memory_gb <= 0 || mp.max_instances <= 0)
      throw data_error("device catalog: MIG profile '" + mp.name + "' of '" + id + "' is incomplete or out of range");
    t.profiles.push_back(mp);
  }
  if (t.profiles.empty()) return std::nullopt;
  return t;
}

// One entry of the catalog's schema, checked.
Device parse_entry(const Json& e) {
  Device d;
  if (!e.is_object() || !e["id"].is_string()) throw data_error("device catalog: an entry has no id");
  d.id = e["id"].as_string();
  d.name = text_field(e, "name", d.id);
  d.kind = text_field(e, "kind", "gpu");
  d.vendor = text_field(e, "vendor", "");
  d.arch = text_field(e, "arch", "");
  if (e.contains("default_view")) {
    if (!e["default_view"].is_bool()) throw data_error("device catalog: '" + d.id + "' has a default_view that is not true or false");
    d.default_view = e["default_view"].as_bool();
  }
  if (d.kind != "gpu" && d.kind != "cpu") throw data_error("device catalog: '" + d.id + "' has kind '" + d.kind + "' (gpu or cpu)");
  if (e["peak_tflops"].is_object()) {
    for (const auto& [k, v] : e["peak_tflops"].members()) {
      Sourced s = sourced(e["peak_tflops"], k, d.id);
      if (s.present && s.value > 0) d.peak_tflops[parse_precision(k)] = s;
    }
  }
  d.sm_count = sourced(e, "sm_count", d.id);
  d.memory_gb = sourced(e, "memory_gb", d.id);
  d.memory_bandwidth_gbs = sourced(e, "memory_bandwidth_gbs", d.id);
  d.l2_mb = sourced(e, "l2_mb", d.id);
  d.l3_mb = sourced(e, "l3_mb", d.id);
  d.tdp_w = sourced(e, "tdp_w", d.id);
  d.idle_w = sourced(e, "idle_w", d.id);
  d.cores = sourced(e, "cores", d.id);
  d.threads = sourced(e, "threads", d.id);
  d.clock_ghz = sourced(e, "clock_ghz", d.id);
  d.peak_fp32_gflops = sourced(e, "peak_fp32_gflops", d.id);
  d.clock_ratio = sourced(e, "clock_ratio", d.id);
  if (d.clock_ratio.present && !(d.clock_ratio.value > 0))
    throw data_error("device catalog: '" + d.id + "'.clock_ratio must be > 0");
  if (d.kind == "cpu" && d.peak_fp32_gflops.present && !d.supports(Precision::FP32)) {
    Sourced s = d.peak_fp32_gflops;
    s.value /= 1000.0;
    d.peak_tflops[Precision::FP32] = s;
  }
  if (d.is_gpu() && (!d.memory_bandwidth_gbs.present || d.memory_bandwidth_gbs.value <= 0))
    throw data_error("device catalog: '" + d.id + "' has no memory_bandwidth_gbs");
  if (!d.supports(Precision::FP32)) throw data_error("device catalog: '" + d.id + "' has no fp32 peak");
  if (e["mig"].is_object()) d.mig = parse_mig(e["mig"], d.id);
  return d;
}

}  // namespace

DeviceCatalog DeviceCatalog::parse(std::string_view text) {
  const Json doc = Json::parse(text, "the device catalog");
  if (!doc.is_object() || !doc["devices"].is_array())
    throw data_error("device catalog: expected an object with a 'devices' array");
  if (!(doc["schema_version"].is_number() && doc["schema_version"].as_number() == 1))
    throw data_error("device catalog: schema_version " + (doc.contains("schema_version") ? doc["schema_version"].dump() : "0") +
                     " is not 1");
  DeviceCatalog cat;
  for (const Json& e : doc["devices"].items()) {
    Device d = parse_entry(e);
    if (cat.find(d.id)) throw data_error("device catalog: duplicate id '" + d.id + "'");
    cat.devices_.push_back(std::move(d));
  }
  return cat;
}

DeviceCatalog DeviceCatalog::with_devices(const Json& entries) const {
  if (!entries.is_array()) throw option_error("extraDevices: expected an array of device entries (the catalog's schema)");
  if (entries.size() > 16) throw option_error("extraDevices: " + std::to_string(entries.size()) + " devices; at most 16");
  DeviceCatalog out = *this;
  for (const Json& e : entries.items()) {
    Device d;
    try {
      d = parse_entry(e);
    } catch (const Error& x) {  // the caller's entries are the caller's option, not the build's data
      if (x.code() != ErrorCode::BadData) throw;
      throw option_error("extraDevices: an entry does not follow the catalog's schema (" + x.message() + ")");
    }
    if (out.find(d.id)) throw option_error("extraDevices: device id '" + d.id + "' is taken (the catalog's, or given twice)");
    out.devices_.push_back(std::move(d));
  }
  return out;
}

const Device* DeviceCatalog::find(std::string_view id) const {
  for (const auto& d : devices_)
    if (d.id == id) return &d;
  return nullptr;
}

const Device& DeviceCatalog::get(std::string_view id) const {
  if (const Device* d = find(id)) return *d;
  std::string known;
  for (const auto& d : devices_) known += (known.empty() ? "" : ", ") + d.id;
  throw option_error("unknown device '" + std::string(id) + "'; known devices: " + known);
}

}  // namespace perfcard
