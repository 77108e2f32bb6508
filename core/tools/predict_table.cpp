#include "predict_table.h"

#include <cstdio>
#include <set>
#include <string>

namespace perfcard::tools {

namespace {
std::string fmt(const nlohmann::json& v, const char* f) {
  if (v.is_null()) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v.get<double>());
  return buf;
}
}  // namespace

void print_predict_table(std::ostream& os, const nlohmann::json& d) {
  char line[512];
  const auto& c = d["carbon"];
  os << "carbon: region " << c["region"].get<std::string>() << ", " << fmt(c["grid_g_per_kwh"], "%.0f")
     << " gCO2/kWh, PUE " << fmt(c["pue"], "%.2f") << "\n\n";
  std::snprintf(line, sizeof line, "%-16s %6s %-5s %11s %12s %11s %4s %10s %9s %-12s %s\n", "device", "batch", "prec",
                "latency ms", "samples/s", "memory MiB", "fits", "J/sample", "gCO2/1k", "MIG", "+-");
  os << line;
  std::set<std::string> notes;
  for (const auto& p : d["predictions"]) {
    std::string mig = "-";
    if (!p["mig"].is_null()) mig = p["mig"]["recommended"].is_null() ? "none fits" : p["mig"]["recommended"].get<std::string>();
    std::string prec = p["precision"].get<std::string>();
    if (prec != p["precision_requested"].get<std::string>()) prec += "*";
    std::snprintf(line, sizeof line, "%-16s %6lld %-5s %11s %12s %11s %4s %10s %9s %-12s %s\n",
                  p["device"].get<std::string>().c_str(), p["batch"].get<long long>(), prec.c_str(),
                  fmt(p["latency_ms"], "%.3f").c_str(), fmt(p["throughput_per_s"], "%.1f").c_str(),
                  fmt(p["peak_memory_mb"], "%.0f").c_str(), p["fits"].get<bool>() ? "yes" : "NO",
                  fmt(p["energy_j_per_sample"], "%.4f").c_str(), fmt(p["carbon_g_per_1000"], "%.3f").c_str(), mig.c_str(),
                  p["uncertainty"].get<double>() > 0 ? fmt(nlohmann::json(p["uncertainty"].get<double>() * 100), "%.0f%%").c_str() : "?");
    os << line;
    for (const auto& w : p["warnings"]) notes.insert(w.get<std::string>());
  }
  os << "\npredictor: " << (d["predictions"].empty() ? "-" : d["predictions"][0]["predictor"]["name"].get<std::string>() + " " +
                                                                 d["predictions"][0]["predictor"]["version"].get<std::string>())
     << "; * = precision fell back (see notes); +- = held-out error of the predictor for that device family\n";
  for (const auto& w : d["warnings"]) notes.insert(w.get<std::string>());
  if (!notes.empty()) {
    os << "notes:\n";
    for (const auto& n : notes) os << "  - " << n << "\n";
  }
}

}  // namespace perfcard::tools
