#include "summary_table.h"

#include <cmath>
#include <cstdio>

namespace perfcard::tools {

std::string human(double v, const char* unit) {
  const char* prefix[] = {"", "K", "M", "G", "T", "P"};
  int p = 0;
  double x = std::fabs(v);
  while (x >= 1000 && p < 5) { x /= 1000; ++p; }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f %s%s", x < 10 ? 2 : x < 100 ? 1 : 0, v < 0 ? -x : x, prefix[p], unit);
  return buf;
}

static std::string bytes(double b) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int p = 0;
  while (b >= 1024 && p < 4) { b /= 1024; ++p; }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f %s", p == 0 ? 0 : 1, b, unit[p]);
  return buf;
}

static std::string shape_str(const nlohmann::json& s) {
  if (s.is_null() || !s.contains("shape") || s["shape"].is_null()) return "?";
  std::string r = "[";
  for (std::size_t i = 0; i < s["shape"].size(); ++i) {
    if (i) r += ",";
    r += s["shape"][i].is_null() ? "?" : std::to_string(s["shape"][i].get<long long>());
  }
  return r + "]";
}

void print_summary(std::ostream& os, const std::string& path, const nlohmann::json& d, bool per_node) {
  const auto& m = d["model"];
  const auto& t = d["totals"];
  char line[512];
  os << path << "  (" << bytes(m["file_bytes"].get<double>()) << ", " << m["producer"].get<std::string>()
     << ", opset " << (m["opsets"].contains("ai.onnx") ? m["opsets"]["ai.onnx"].get<long long>() : 0) << ")\n";
  for (const auto& in : m["inputs"])
    os << "  input  " << in["name"].get<std::string>() << " " << in["bound"]["dtype"].get<std::string>() << " "
       << shape_str(in["bound"]) << "\n";
  for (const auto& out : m["outputs"])
    os << "  output " << out["name"].get<std::string>() << " " << out["inferred"]["dtype"].get<std::string>() << " "
       << shape_str(out["inferred"]) << "\n";
  os << "\n";
  std::snprintf(line, sizeof line, "  %-26s %s\n", "MACs", human(t["macs"].get<double>(), "MAC").c_str()); os << line;
  std::snprintf(line, sizeof line, "  %-26s %s\n", "FLOPs", human(t["flops"].get<double>(), "FLOP").c_str()); os << line;
  std::snprintf(line, sizeof line, "  %-26s %s\n", "parameters", human(double(t["params"].get<unsigned long long>()), "").c_str()); os << line;
  std::snprintf(line, sizeof line, "  %-26s %s%s\n", "weight bytes", bytes(t["weight_bytes"].get<double>()).c_str(),
                t["external_weight_bytes"].get<double>() > 0 ? " (external data)" : ""); os << line;
  std::snprintf(line, sizeof line, "  %-26s %s\n", "activations (conv/linear)", human(t["activations"].get<double>(), "").c_str()); os << line;
  std::snprintf(line, sizeof line, "  %-26s %s%s\n", "peak live activations", bytes(t["peak_activation_bytes"].get<double>()).c_str(),
                t["peak_activation_complete"].get<bool>() ? "" : " (lower bound: some sizes unknown)"); os << line;
  std::snprintf(line, sizeof line, "  %-26s %s read, %s written\n", "memory traffic", bytes(t["bytes_read"].get<double>()).c_str(),
                bytes(t["bytes_written"].get<double>()).c_str()); os << line;
  std::snprintf(line, sizeof line, "  %-26s %llu (+%llu in subgraphs)\n", "nodes", t["nodes"].get<unsigned long long>(),
                t["subgraph_nodes"].get<unsigned long long>()); os << line;
  if (!d["symbols"].empty()) {
    os << "  symbolic dims             ";
    for (const auto& s : d["symbols"]) os << s["name"].get<std::string>() << "=" << s["value"].get<long long>() << (s["bound"].get<bool>() ? " " : " (default) ");
    os << "\n";
  }
  os << "\n  op type                count         MACs        FLOPs      bytes\n";
  int shown = 0;
  for (const auto& op : d["op_types"]) {
    if (++shown > 15) { os << "  ... " << d["op_types"].size() - 15 << " more op types (--json for all)\n"; break; }
    std::snprintf(line, sizeof line, "  %-20s %7llu %12s %12s %10s\n", op["op_type"].get<std::string>().c_str(),
                  op["count"].get<unsigned long long>(), human(op["macs"].get<double>(), "").c_str(),
                  human(op["flops"].get<double>(), "").c_str(), bytes(op["bytes"].get<double>()).c_str());
    os << line;
  }
  if (per_node && d.contains("nodes")) {
    os << "\n  node                                     op                 output                 MACs\n";
    for (const auto& n : d["nodes"]) {
      std::string out = n["outputs"].empty() || n["outputs"][0].is_null() ? "" : shape_str(n["outputs"][0]);
      std::snprintf(line, sizeof line, "  %-40.40s %-18.18s %-20.20s %10s\n", n["name"].get<std::string>().c_str(),
                    n["op_type"].get<std::string>().c_str(), out.c_str(), human(n["macs"].get<double>(), "").c_str());
      os << line;
    }
  }
  if (!d["unknown_ops"].empty()) {
    os << "\n  unknown ops (not costed): ";
    for (const auto& u : d["unknown_ops"]) os << u.get<std::string>() << " ";
    os << "\n";
  }
  if (!d["warnings"].empty()) {
    os << "\n  warnings:\n";
    int n = 0;
    for (const auto& w : d["warnings"]) {
      if (++n > 10) { os << "    ... " << d["warnings"].size() - 10 << " more (--json for all)\n"; break; }
      os << "    - " << w["message"].get<std::string>() << "\n";
    }
  }
}

}  // namespace perfcard::tools
