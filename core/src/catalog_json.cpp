#include "perfcard/catalog_json.h"

#include <exception>
#include <string>

namespace perfcard {
namespace {

using nlohmann::json;

json sourced(const Sourced& s) { return s.present ? json(s.value) : json(nullptr); }

}  // namespace

json catalog_to_json(const DeviceCatalog& catalog, const CarbonTable& carbon, const RooflineConstants& constants,
                     const Predictor& predictor, std::string_view version) {
  json devs = json::array();
  for (const auto& dev : catalog.devices()) {
    json peaks = json::object();
    for (const auto& [p, s] : dev.peak_tflops) peaks[std::string(precision_name(p))] = s.value;
    std::string family;
    try {
      constants.family_of(dev, &family);
    } catch (const std::exception&) {
      family.clear();  // a device no family covers is listed, and predicting it says why
    }
    json e = {{"id", dev.id}, {"name", dev.name}, {"kind", dev.kind}, {"vendor", dev.vendor}, {"arch", dev.arch},
              {"default_view", dev.default_view},
              {"family", family.empty() ? json(nullptr) : json(family)},
              {"memory_gb", sourced(dev.memory_gb)}, {"memory_bandwidth_gbs", sourced(dev.memory_bandwidth_gbs)},
              {"peak_tflops", peaks}, {"sm_count", sourced(dev.sm_count)}, {"l2_mb", sourced(dev.l2_mb)},
              {"tdp_w", sourced(dev.tdp_w)}, {"idle_w", sourced(dev.idle_w)}, {"cores", sourced(dev.cores)},
              {"peak_fp32_gflops", sourced(dev.peak_fp32_gflops)}};
    if (dev.mig) {
      json profiles = json::array();
      for (const auto& p : dev.mig->profiles)
        profiles.push_back({{"name", p.name}, {"memory_gb", p.memory_gb}, {"compute_slices", p.compute_slices},
                            {"memory_slices", p.memory_slices}, {"max_instances", p.max_instances}});
      e["mig"] = {{"compute_slices_total", dev.mig->compute_slices_total},
                  {"memory_slices_total", dev.mig->memory_slices_total}, {"profiles", profiles},
                  {"source", dev.mig->source}};
    } else {
      e["mig"] = nullptr;
    }
    devs.push_back(std::move(e));
  }
  json regions = json::array();
  for (const auto& r : carbon.regions())
    regions.push_back({{"code", r.code}, {"name", r.name}, {"g_per_kwh", r.g_per_kwh}, {"year", r.year},
                       {"source", r.source}});
  json runtimes = json::array();
  for (const auto& [name, rt] : constants.runtimes) runtimes.push_back({{"name", name}, {"kind", rt.kind}});
  json accuracy = json::object();
  for (const auto& [family, a] : constants.accuracy)
    accuracy[family] = {{"mape", a.mape}, {"rows", a.rows}, {"source", a.source}};
  return {{"devices", devs},
          {"regions", regions},
          {"default_region", carbon.default_region()},
          {"default_pue", carbon.default_pue()},
          {"pue_source", carbon.pue_source()},
          {"runtimes", runtimes},
          {"predictor", {{"name", predictor.name()}, {"version", predictor.version()},
                         {"provenance", constants.provenance}, {"accuracy", accuracy}}},
          {"version", std::string(version)}};
}

}  // namespace perfcard
