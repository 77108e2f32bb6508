#include "perfcard/carbon.h"

#include "perfcard/error.h"
#include "perfcard/json.h"

namespace perfcard {

CarbonTable CarbonTable::parse(std::string_view text) {
  const Json doc = Json::parse(text, "the carbon table");
  if (!doc.is_object() || doc.number_or("schema_version", 0) != 1) throw data_error("carbon table: schema_version is not 1");
  CarbonTable t;
  t.default_ = doc.string_or("default", "world");
  const Json& regions = doc["regions"];
  if (!regions.is_array()) throw data_error("carbon table: no 'regions' array");
  for (const Json& r : regions.items()) {
    if (!r.is_object()) throw data_error("carbon table: a region is not an object");
    CarbonRegion c;
    c.code = r.string_or("code", "");
    c.name = r.string_or("name", c.code);
    c.source = r.string_or("source", "");
    const double year = r.number_or("year", 0);
    if (!(year >= 0 && year <= 9999)) throw data_error("carbon table: region '" + c.code + "' has a year out of range");
    c.year = int(year);
    if (!r["g_per_kwh"].is_number() || !(r["g_per_kwh"].as_number() >= 0) || c.code.empty())
      throw data_error("carbon table: region '" + c.code + "' lacks a non-negative g_per_kwh");
    c.g_per_kwh = r["g_per_kwh"].as_number();
    t.regions_.push_back(std::move(c));
  }
  if (doc["pue"].is_object()) {
    const Json& p = doc["pue"]["default"];
    if (p.is_number()) t.pue_ = p.as_number();
    else if (p.is_object()) { t.pue_ = p.number_or("value", 1.0); t.pue_source_ = p.string_or("source", ""); }
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
