// RooflineConstants::parse, apart from the roofline's arithmetic (roofline.cpp): it runs once per process,
// and the page's module builds it for size (core/CMakeLists.txt).
#include <algorithm>
#include <cmath>

#include "perfcard/error.h"
#include "perfcard/json.h"
#include "perfcard/roofline.h"

namespace perfcard {

namespace {

double num(const Json& j, std::string_view key, const std::string& where) {
  if (!j[key].is_number())
    throw data_error("roofline constants: '" + where + "' lacks the number '" + std::string(key) + "'");
  double v = j[key].as_number();
  if (!(v >= 0) || !std::isfinite(v)) throw data_error("roofline constants: '" + where + "." + std::string(key) + "' must be finite and >= 0");
  return v;
}

// The fit's record (sources, splits, per-stage figures: a JSON object in a string) is for the calibration
// scripts, which read the file; the catalog document says who fitted the constants and when. The page's
// module embeds the record cut to those two fields (cmake/PageData.mjs).
std::string provenance_line(const std::string& record) {
  if (record.empty() || record.front() != '{') return record;
  const Json r = Json::parse(record, "the roofline constants' provenance");
  std::string line = "fitted by " + r.string_or("script", "an unnamed script") + " on " +
                     r.string_or("created", "an unrecorded date");
  // Later stages refit parts (CPUs, the browser, eager PyTorch's host, memory): named in the record's order.
  std::string stages;
  for (const auto& [key, stage] : r.members()) {
    if (key.rfind("stage_", 0) != 0 || !stage.is_object() || !stage["script"].is_string()) continue;
    const std::string script = stage["script"].as_string();
    if (stages.find(script) == std::string::npos) (stages += stages.empty() ? "" : ", ") += script;
  }
  if (!stages.empty()) line += ", refitted in part by " + stages;
  return line + " (the fit's record: weights/roofline.json, 'provenance')";
}

}  // namespace

RooflineConstants RooflineConstants::parse(std::string_view text) {
  const Json doc = Json::parse(text, "the roofline constants file");
  if (!doc.is_object()) throw data_error("roofline constants: not a JSON object");
  std::string fmt = doc.string_or("format_version", "");
  if (fmt.empty()) throw data_error("roofline constants: no format_version");
  if (fmt.substr(0, fmt.find('.')) != "1")
    throw data_error("roofline constants format " + fmt + " is not readable by this build (reads 1.x); update PerfCard");
  RooflineConstants c;
  c.version = doc.string_or("version", "");
  c.provenance = provenance_line(doc.string_or("provenance", ""));
  for (const auto& [name, f] : doc["families"].members()) {
    FamilyConstants fc;
    std::string w = "families." + name;
    fc.gemm_eff_tensor = num(f, "gemm_eff_tensor", w);
    fc.gemm_eff_fp32 = num(f, "gemm_eff_fp32", w);
    fc.conv_eff_tensor = num(f, "conv_eff_tensor", w);
    fc.conv_eff_fp32 = num(f, "conv_eff_fp32", w);
    fc.vector_eff = num(f, "vector_eff", w);
    fc.mem_eff = num(f, "mem_eff", w);
    fc.k_half = num(f, "k_half", w);
    fc.tile = num(f, "tile", w);
    fc.launch_us = num(f, "launch_us", w);
    // Optional, so that constants written before the L2 term stay readable (format 1.x).
    if (f.contains("l2_bw_ratio")) fc.l2_bw_ratio = num(f, "l2_bw_ratio", w);
    if (f.contains("clock_ratio")) fc.clock_ratio = num(f, "clock_ratio", w);
    if (f.contains("bandwidth_ratio")) fc.bandwidth_ratio = num(f, "bandwidth_ratio", w);  // format 1.1
    if (fc.clock_ratio <= 0) throw data_error("roofline constants: '" + w + ".clock_ratio' must be > 0");
    if (fc.bandwidth_ratio <= 0) throw data_error("roofline constants: '" + w + ".bandwidth_ratio' must be > 0");
    if (fc.l2_bw_ratio < 1) throw data_error("roofline constants: '" + w + ".l2_bw_ratio' must be >= 1 (L2 is not slower than DRAM)");
    for (double e : {fc.gemm_eff_tensor, fc.gemm_eff_fp32, fc.conv_eff_tensor, fc.conv_eff_fp32, fc.vector_eff, fc.mem_eff})
      if (e <= 0 || e > 1) throw data_error("roofline constants: efficiencies of '" + w + "' must lie in (0, 1]");
    c.families[name] = fc;
  }
  for (const auto& [name, r] : doc["runtimes"].members()) {
    RuntimeConstants rc;
    std::string w = "runtimes." + name;
    rc.name = name;
    rc.kind = r.string_or("kind", "gpu");
    rc.dispatch_us = num(r, "dispatch_us", w);
    rc.serial_issue = r.bool_or("serial_issue", false);
    rc.step_us = r.contains("step_us") ? num(r, "step_us", w) : 0.0;
    rc.fuse_elementwise = r.bool_or("fuse_elementwise", false);
    rc.fuse_bias = r.bool_or("fuse_bias", true);
    rc.fuse_decomposed = r.bool_or("fuse_decomposed", false);
    rc.conv_fp32_as_tf32 = r.bool_or("conv_fp32_as_tf32", false);
    rc.matmul_fp32_as_tf32 = r.bool_or("matmul_fp32_as_tf32", false);
    rc.context_mb = num(r, "context_mb", w);
    rc.workspace_mb = num(r, "workspace_mb", w);
    rc.allocator_overhead = num(r, "allocator_overhead", w);
    rc.weight_copies = r.contains("weight_copies") ? num(r, "weight_copies", w) : 1.0;
    rc.conv_weight_copies = r.contains("conv_weight_copies") ? num(r, "conv_weight_copies", w) : rc.weight_copies;
    if (rc.weight_copies < 0 || rc.conv_weight_copies < 0)
      throw data_error("roofline constants: '" + w + "' weight copies must be >= 0");
    rc.module_frames = r.bool_or("module_frames", false);
    rc.caching_allocator = r.bool_or("caching_allocator", false);
    rc.source = r.string_or("source", "");
    c.runtimes[name] = rc;
  }
  for (const auto& [arch, fam] : doc["arch_family"].members()) {
    if (!fam.is_string()) throw data_error("roofline constants: 'arch_family." + arch + "' is not a family name");
    c.arch_family[arch] = fam.as_string();
  }
  if (doc.contains("power")) {
    c.power.gamma = num(doc["power"], "gamma", "power");
    c.power.floor = num(doc["power"], "floor", "power");
  }
  const auto rows = [](const Json& a) { return std::size_t(std::max(0.0, a.number_or("rows", 0))); };
  for (const auto& [fam, a] : doc["accuracy"].members())
    c.accuracy[fam] = AccuracyNote{a.number_or("mape", 0.0), rows(a), a.string_or("source", "")};
  for (const auto& [fam, a] : doc["training_accuracy"].members())
    c.training_accuracy[fam] = AccuracyNote{num(a, "mape", "training_accuracy." + fam), rows(a), a.string_or("source", "")};
  for (const auto& [rt, a] : doc["host_bound_accuracy"].members())
    c.host_bound_accuracy[rt] = AccuracyNote{num(a, "mape", "host_bound_accuracy." + rt), rows(a), a.string_or("source", "")};
  for (const auto& [rt, a] : doc["runtime_accuracy"].members()) {
    auto& ra = c.runtime_accuracy[rt];
    ra.note = AccuracyNote{num(a, "mape", "runtime_accuracy." + rt), rows(a), a.string_or("source", "")};
    if (!a.contains("families") || !a["families"].is_array())
      throw data_error("roofline constants: 'runtime_accuracy." + rt + ".families' is not an array of family names");
    for (const Json& f : a["families"].items()) {
      if (!f.is_string() || !c.families.count(f.as_string()))
        throw data_error("roofline constants: 'runtime_accuracy." + rt + ".families' holds " +
                         (f.is_string() ? "'" + f.as_string() + "', which is no family" : std::string("a non-string")));
      ra.families.push_back(f.as_string());
    }
  }
  if (c.families.empty() || c.runtimes.empty()) throw data_error("roofline constants: no families or no runtimes");
  for (const auto& [arch, fam] : c.arch_family)
    if (!c.families.count(fam)) throw data_error("roofline constants: arch '" + arch + "' maps to unknown family '" + fam + "'");
  return c;
}

}  // namespace perfcard
