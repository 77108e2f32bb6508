// Grid carbon intensity by region, with sources (weights/carbon_regions.json), and the PUE default.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace perfcard {

struct CarbonRegion {
  std::string code, name, source;
  double g_per_kwh = 0;
  int year = 0;
};

class CarbonTable {
 public:
  static CarbonTable parse(std::string_view json_text);
  const CarbonRegion& get(std::string_view code) const;  // throws Error listing known codes
  const std::vector<CarbonRegion>& regions() const { return regions_; }
  const std::string& default_region() const { return default_; }
  double default_pue() const { return pue_; }
  const std::string& pue_source() const { return pue_source_; }

 private:
  std::vector<CarbonRegion> regions_;
  std::string default_ = "world";
  double pue_ = 1;
  std::string pue_source_;
};

}  // namespace perfcard
