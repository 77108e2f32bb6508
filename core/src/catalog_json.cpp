#include "perfcard/catalog_json.h"

#include <exception>
#include <string>
#include <utility>

#include "perfcard/json.h"

namespace perfcard {
namespace {

Json sourced(const Sourced& s) { return s.present ? Json(s.value) : Json(); }

}  // namespace

std::string catalog_to_json(const DeviceCatalog& catalog, const CarbonTable& carbon, const RooflineConstants& constants,
                            const Predictor& predictor, std::string_view version, int indent) {
  Json devs = Json::array();
  for (const auto& dev : catalog.devices()) {
    Json peaks = Json::object();
    for (const auto& [p, s] : dev.peak_tflops) peaks[precision_name(p)] = s.value;
    std::string family;
    try {
      constants.family_of(dev, &family);
    } catch (const std::exception&) {
      family.clear();  // a device no family covers is listed, and predicting it says why
    }
    Json e = Json::object({{"id", dev.id}, {"name", dev.name}, {"kind", dev.kind}, {"vendor", dev.vendor},
                           {"arch", dev.arch}, {"default_view", dev.default_view},
                           {"family", family.empty() ? Json() : Json(family)},
                           {"memory_gb", sourced(dev.memory_gb)}, {"memory_bandwidth_gbs", sourced(dev.memory_bandwidth_gbs)},
                           {"peak_tflops", peaks}, {"sm_count", sourced(dev.sm_count)}, {"l2_mb", sourced(dev.l2_mb)},
                           {"tdp_w", sourced(dev.tdp_w)}, {"idle_w", sourced(dev.idle_w)}, {"cores", sourced(dev.cores)},
                           {"peak_fp32_gflops", sourced(dev.peak_fp32_gflops)}, {"mig", Json()}});
    // Where the power model's two figures come from (energy and carbon read them; CPUs' idle is mostly an
    // estimate): the page shows them beside the energy, the rest of the catalog's sources stay in its file.
    Json power = Json::object();
    for (const auto& [key, s] : {std::pair{"tdp_w", &dev.tdp_w}, std::pair{"idle_w", &dev.idle_w}})
      power[key] = s->present ? Json(s->source) : Json();
    e["power_sources"] = std::move(power);
    if (dev.mig) {
      Json profiles = Json::array();
      for (const auto& p : dev.mig->profiles)
        profiles.push_back(Json::object({{"name", p.name}, {"memory_gb", p.memory_gb}, {"compute_slices", p.compute_slices},
                                         {"memory_slices", p.memory_slices}, {"max_instances", p.max_instances}}));
      e["mig"] = Json::object({{"compute_slices_total", dev.mig->compute_slices_total},
                               {"memory_slices_total", dev.mig->memory_slices_total}, {"profiles", profiles},
                               {"source", dev.mig->source}});
    }
    devs.push_back(std::move(e));
  }
  Json regions = Json::array();
  for (const auto& r : carbon.regions())
    regions.push_back(Json::object({{"code", r.code}, {"name", r.name}, {"g_per_kwh", r.g_per_kwh}, {"year", r.year},
                                    {"source", r.source}}));
  Json runtimes = Json::array();
  for (const auto& [name, rt] : constants.runtimes) runtimes.push_back(Json::object({{"name", name}, {"kind", rt.kind}}));
  Json accuracy = Json::object();
  for (const auto& [family, a] : constants.accuracy)
    accuracy[family] = Json::object({{"mape", a.mape}, {"rows", a.rows}, {"source", a.source}});
  return Json::object({{"devices", devs},
                       {"regions", regions},
                       {"default_region", carbon.default_region()},
                       {"default_pue", carbon.default_pue()},
                       {"pue_source", carbon.pue_source()},
                       {"runtimes", runtimes},
                       {"predictor", Json::object({{"name", predictor.name()}, {"version", predictor.version()},
                                                   {"provenance", constants.provenance}, {"accuracy", accuracy}})},
                       {"version", version}})
      .dump(indent);
}

}  // namespace perfcard
