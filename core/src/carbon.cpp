#include "perfcard/carbon.h"

#include <nlohmann/json.hpp>

#include "perfcard/error.h"

namespace perfcard {

CarbonTable CarbonTable::parse(std::string_view text) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    throw data_error(std::string("carbon table is not valid JSON: ") + e.what());
  }
  if (doc.value("schema_version", 0) != 1) throw data_error("carbon table: schema_version is not 1");
  CarbonTable t;
  t.default_ = doc.value("default", "world");
  const nlohmann::json regions = doc.value("regions", nlohmann::json::array());
  for (const auto& r : regions) {
    CarbonRegion c;
    c.code = r.value("code", "");
    c.name = r.value("name", c.code);
    c.source = r.value("source", "");
    c.year = r.value("year", 0);
    if (!r.contains("g_per_kwh") || !r["g_per_kwh"].is_number() || r["g_per_kwh"].get<double>() < 0 || c.code.empty())
      throw data_error("carbon table: region '" + c.code + "' lacks a non-negative g_per_kwh");
    c.g_per_kwh = r["g_per_kwh"].get<double>();
    t.regions_.push_back(std::move(c));
  }
  if (doc.contains("pue") && doc["pue"].is_object()) {
    const auto& p = doc["pue"]["default"];
    if (p.is_number()) t.pue_ = p.get<double>();
    else if (p.is_object()) { t.pue_ = p.value("value", 1.0); t.pue_source_ = p.value("source", ""); }
  }
  if (t.pue_ < 1) throw data_error("carbon table: PUE below 1");
  t.get(t.default_);
  return t;
}

const CarbonRegion& CarbonTable::get(std::string_view code) const {
  for (const auto& r : regions_)
    if (r.code == code) return r;
  std::string known;
  for (const auto& r : regions_) known += (known.empty() ? "" : ", ") + r.code;
  throw option_error("unknown region '" + std::string(code) + "'; known regions: " + known);
}

}  // namespace perfcard
