// perfcard_bench MODEL.onnx [--reps N] [--dim NAME=VALUE ...]
// Prints one JSON line: file size, the time to read the bytes once (the physical floor for any loader
// that must see them), load+analyze time (median of N, from bytes already in memory), and peak RSS
// relative to the file size. One model per process, so peak RSS belongs to that model alone.
// With --sweep it also times what the page does on a setting change: predict every GPU at 8 batch sizes
// (1..128) and serialize the JSON document, from a model already loaded; --predictor NAME (roofline by
// default; the learned ones and auto use the embedded weights files) picks who predicts.
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "perfcard/analysis.h"
#include "perfcard/carbon.h"
#include "perfcard/device.h"
#include "perfcard/embedded.h"
#include "perfcard/onnx_loader.h"
#include "perfcard/predict.h"
#include "perfcard/predict_cache.h"
#include "perfcard/native_learned.h"
#include "perfcard/predictor_registry.h"
#include "perfcard/weights_file.h"
#include "perfcard/roofline_predictor.h"
#include "perfcard/roofline.h"
#include "perfcard/report.h"

namespace {

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

// CPU time of this thread: on a shared machine wall time mostly measures the neighbours.
double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

double peak_rss_mb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_maxrss) / 1024.0;  // Linux reports KiB
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: perfcard_bench MODEL.onnx [--reps N] [--dim NAME=VALUE ...] [--sweep [--predictor NAME]]\n";
    return 2;
  }
  std::string path = argv[1];
  int reps = 10;
  std::vector<std::string> dims;
  bool sweep = false;
  std::string predictor_name = "roofline";
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::stoi(argv[++i]));
    else if (a == "--dim" && i + 1 < argc) dims.push_back(argv[++i]);
    else if (a == "--sweep") sweep = true;
    else if (a == "--predictor" && i + 1 < argc) predictor_name = argv[++i];
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
    if (sweep) {
      using namespace perfcard;
      auto catalog = DeviceCatalog::parse(std::string(embedded_file("devices.json")));
      auto carbon = CarbonTable::parse(std::string(embedded_file("carbon_regions.json")));
      auto constants = RooflineConstants::parse(std::string(embedded_file("roofline.json")));
      PredictorSet set;
      set.roofline = std::make_shared<const RooflinePredictor>(constants);
      for (std::string_view learned : learned_predictor_names()) {
        const std::string_view file = embedded_file(std::string(learned) + ".pcwt");
        // A heap copy: tensors are read in place and need the alignment a heap buffer has.
        const std::vector<std::uint8_t> buf(file.begin(), file.end());
        if (!buf.empty())
          set.learned.push_back(load_learned_predictor(embedded_file("manifest.json"), std::string(learned) + ".pcwt",
                                                       buf, set.roofline, NativeLearned{}, set.learned));
      }
      const auto predictor_ptr = select_predictor(predictor_name, set);
      const Predictor& predictor = *predictor_ptr;
      Model m = load_model(bytes);
      PredictOptions po;
      po.dims = opt.dims;
      po.batches = {1, 2, 4, 8, 16, 32, 64, 128};
      std::vector<double> predict_ms, json_ms, predict_cpu_ms;
      std::size_t rows = 0, chars = 0;
      for (int r = 0; r < reps; ++r) {
        double a = now_ms(), a_cpu = cpu_ms();
        PredictResult res = predict(m, catalog, predictor, constants, carbon, po);
        double b = now_ms(), b_cpu = cpu_ms();
        std::string doc = predict_to_json_text(res);
        double c = now_ms();
        predict_ms.push_back(b - a);
        predict_cpu_ms.push_back(b_cpu - a_cpu);
        json_ms.push_back(c - b);
        rows = res.rows.size();
        chars = doc.size();
      }
      // As the page re-predicts an open model: its analyses kept between calls (predict_cache.h); the
      // first call fills the cache and is left out.
      PredictCache cache(m);
      std::vector<double> cached_ms;
      for (int r = 0; r <= reps; ++r) {
        double a = now_ms();
        predict(m, catalog, predictor, constants, carbon, po, &cache);
        if (r > 0) cached_ms.push_back(now_ms() - a);
      }
      std::sort(predict_ms.begin(), predict_ms.end());
      std::sort(json_ms.begin(), json_ms.end());
      std::sort(predict_cpu_ms.begin(), predict_cpu_ms.end());
      std::sort(cached_ms.begin(), cached_ms.end());
      std::printf("{\"model\":\"%s\",\"predictor\":\"%s\",\"sweep_rows\":%zu,\"predict_ms\":%.3f,\"predict_best_ms\":%.3f,"
                  "\"predict_cpu_ms\":%.3f,\"predict_cached_ms\":%.3f,\"predict_cached_best_ms\":%.3f,"
                  "\"json_ms\":%.3f,\"json_chars\":%zu}\n",
                  path.c_str(), predictor_name.c_str(), rows, predict_ms[predict_ms.size() / 2], predict_ms.front(),
                  predict_cpu_ms[predict_cpu_ms.size() / 2], cached_ms[cached_ms.size() / 2], cached_ms.front(),
                  json_ms[json_ms.size() / 2], chars);
    }
  } catch (const std::exception& e) {
    std::cerr << "perfcard_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
