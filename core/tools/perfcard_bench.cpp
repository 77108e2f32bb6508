// perfcard_bench MODEL.onnx [--reps N] [--dim NAME=VALUE ...]
// Prints one JSON line: file size, the time to read the bytes once (the physical floor for any loader
// that must see them), load+analyze time (median of N, from bytes already in memory), and peak RSS
// relative to the file size. One model per process, so peak RSS belongs to that model alone.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "perfcard/analysis.h"
#include "perfcard/onnx_loader.h"
#include "perfcard/report.h"

namespace {

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

double peak_rss_mb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_maxrss) / 1024.0;  // Linux reports KiB
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: perfcard_bench MODEL.onnx [--reps N] [--dim NAME=VALUE ...]\n";
    return 2;
  }
  std::string path = argv[1];
  int reps = 10;
  std::vector<std::string> dims;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::stoi(argv[++i]));
    else if (a == "--dim" && i + 1 < argc) dims.push_back(argv[++i]);
  }
  try {
    double rss_before = peak_rss_mb();
    double t0 = now_ms();
    std::ifstream f(path, std::ios::binary | std::ios::ate);
    if (!f) throw perfcard::Error("cannot open " + path);
    std::vector<std::uint8_t> bytes(std::size_t(f.tellg()));
    f.seekg(0);
    f.read(reinterpret_cast<char*>(bytes.data()), std::streamsize(bytes.size()));
    double read_ms = now_ms() - t0;

    perfcard::AnalyzeOptions opt;
    opt.dims = perfcard::parse_dim_bindings(dims);
    std::vector<double> load_ms, analyze_ms;
    double macs = 0;
    for (int r = 0; r < reps; ++r) {
      double a = now_ms();
      perfcard::Model m = perfcard::load_model(bytes);
      double b = now_ms();
      perfcard::Analysis an = perfcard::analyze(m, opt);
      double c = now_ms();
      load_ms.push_back(b - a);
      analyze_ms.push_back(c - b);
      macs = an.totals.macs;
    }
    std::sort(load_ms.begin(), load_ms.end());
    std::sort(analyze_ms.begin(), analyze_ms.end());
    double file_mb = double(bytes.size()) / (1024.0 * 1024.0);
    double peak = peak_rss_mb();
    std::printf(
        "{\"model\":\"%s\",\"file_mb\":%.2f,\"read_once_ms\":%.2f,\"load_ms\":%.3f,\"analyze_ms\":%.3f,"
        "\"load_plus_analyze_ms\":%.3f,\"peak_rss_mb\":%.1f,\"rss_before_mb\":%.1f,\"peak_over_file\":%.3f,\"macs\":%.6g}\n",
        path.c_str(), file_mb, read_ms, load_ms[load_ms.size() / 2], analyze_ms[analyze_ms.size() / 2],
        load_ms[load_ms.size() / 2] + analyze_ms[analyze_ms.size() / 2], peak, rss_before,
        file_mb > 0 ? peak / file_mb : 0.0, macs);
  } catch (const std::exception& e) {
    std::cerr << "perfcard_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
