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

// The latency's band: a calibrated one as its range ("6.9-8.9"), else the held-out error ("14%").
std::string band_text(const nlohmann::json& p) {
  if (!p.value("latency_band_coverage", nlohmann::json()).is_null()) {
    const auto& b = p["latency_band_ms"];
    return fmt(b[0], "%.3g") + "-" + fmt(b[1], "%.3g");
  }
  // A non-finite figure is null in the document (JSON has no NaN).
  const double u = p["uncertainty"].is_null() ? 0 : p["uncertainty"].get<double>();
  return u > 0 ? fmt(nlohmann::json(u * 100), "%.0f%%") : "?";
}

void print_predict_table(std::ostream& os, const nlohmann::json& d) {
  char line[512];
  const auto& c = d["carbon"];
  os << "carbon: region " << c["region"].get<std::string>() << ", " << fmt(c["grid_g_per_kwh"], "%.0f")
     << " gCO2/kWh, PUE " << fmt(c["pue"], "%.2f");
  if (!d["predictions"].empty()) {  // every row is for one protocol
    const auto& p0 = d["predictions"][0];
    os << "; memory: " << p0.value("memory_protocol", std::string("inference"))
       << (p0.contains("optimizer") && p0["optimizer"].is_string() ? " (" + p0["optimizer"].get<std::string>() + ")" : "");
  }
  os << "\n\n";
  std::snprintf(line, sizeof line, "%-16s %6s %-5s %11s %12s %11s %4s %10s %9s %-12s %-9s %s\n", "device", "batch", "prec",
                "latency ms", "samples/s", "memory MiB", "fits", "J/sample", "gCO2/1k", "MIG", "predictor", "+- / band");
  os << line;
  std::set<std::string> notes, predictors;
  bool banded = false;
  for (const auto& p : d["predictions"]) {
    std::string mig = "-";
    if (!p["mig"].is_null()) mig = p["mig"]["recommended"].is_null() ? "none fits" : p["mig"]["recommended"].get<std::string>();
    std::string prec = p["precision"].get<std::string>();
    if (prec != p["precision_requested"].get<std::string>()) prec += "*";
    const std::string who = p["predictor"]["name"].get<std::string>() + (p["out_of_distribution"].get<bool>() ? "!" : "");
    predictors.insert(p["predictor"]["name"].get<std::string>() + " " + p["predictor"]["version"].get<std::string>());
    banded = banded || !p.value("latency_band_coverage", nlohmann::json()).is_null();
    std::snprintf(line, sizeof line, "%-16s %6lld %-5s %11s %12s %11s %4s %10s %9s %-12s %-9s %s\n",
                  p["device"].get<std::string>().c_str(), p["batch"].get<long long>(), prec.c_str(),
                  fmt(p["latency_ms"], "%.3f").c_str(), fmt(p["throughput_per_s"], "%.1f").c_str(),
                  fmt(p["peak_memory_mb"], "%.0f").c_str(), p["fits"].get<bool>() ? "yes" : "NO",
                  fmt(p["energy_j_per_sample"], "%.4f").c_str(), fmt(p["carbon_g_per_1000"], "%.3f").c_str(), mig.c_str(),
                  who.c_str(), band_text(p).c_str());
    os << line;
    for (const auto& w : p["warnings"]) notes.insert(p["device"].get<std::string>() + ": " + w.get<std::string>());
  }
  os << "\npredictors:";
  for (const auto& name : predictors) os << " " << name << (name == *predictors.rbegin() ? "" : ",");
  os << "\n! = out of distribution (see notes); * = precision fell back (see notes); +- = held-out error of the "
        "predictor for that device family"
     << (banded ? "; a-b = the ensemble's band (80% of held-out measurements fell inside theirs), in ms" : "") << "\n";
  for (const auto& w : d["warnings"]) notes.insert(w.get<std::string>());
  if (!notes.empty()) {
    os << "notes:\n";
    for (const auto& n : notes) os << "  - " << n << "\n";
  }
}

}  // namespace perfcard::tools
