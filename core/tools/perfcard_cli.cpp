// perfcard: the command-line front of the core. Reads the file (mapped, not copied), calls the core,
// prints a table or JSON. All policy about files and processes lives here, not in the core.
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "perfcard/analysis.h"
#include "perfcard/embedded.h"
#include "perfcard/error.h"
#include "perfcard/onnx_loader.h"
#include "perfcard/options.h"
#include "perfcard/catalog_json.h"
#include "perfcard/features.h"
#include "perfcard/kernel_sequence.h"
#include "perfcard/machine_probe.h"
#include "perfcard/learned_predictor.h"
#include "perfcard/operator_graph.h"
#include "perfcard/op_registry.h"
#include "perfcard/power_model.h"
#include "perfcard/roofline_predictor.h"
#include "perfcard/predict.h"
#include "perfcard/native_learned.h"
#include "perfcard/predictor_registry.h"
#include "perfcard/report.h"
#include "card_svg.h"
#include "predict_table.h"
#include "summary_table.h"

namespace {

class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDONLY);
    if (fd_ < 0) throw perfcard::Error("cannot open '" + path + "': " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) throw perfcard::Error("'" + path + "' is not a regular file");
    size_ = std::size_t(st.st_size);
    if (size_ > 0) {
      void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
      if (p == MAP_FAILED) throw perfcard::Error("cannot map '" + path + "': " + std::strerror(errno));
      data_ = static_cast<const std::uint8_t*>(p);
    }
  }
  ~MappedFile() {
    if (data_) ::munmap(const_cast<std::uint8_t*>(data_), size_);
    if (fd_ >= 0) ::close(fd_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::span<const std::uint8_t> bytes() const { return {data_, size_}; }

 private:
  int fd_ = -1;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

// The model needs no byte of the file once loaded: the mapping goes before the analysis starts, so a
// large file's pages do not add to the analysis' peak.
perfcard::Model load_model_file(const std::string& path) {
  MappedFile file(path);
  return perfcard::load_model(file.bytes());
}

int usage(std::ostream& os, int code) {
  os << "usage: perfcard analyze MODEL.onnx [--dim NAME=VALUE ...] [--per-node] [--json]\n"
        "       perfcard predict MODEL.onnx [--device ID[,ID...]|all|all-gpus|cpus] [--batch N[,N...]]\n"
        "                        [--precision fp32|tf32|fp16|bf16|fp8|int8] [--mode inference|inference-grad|training]\n"
        "                        [--dim NAME=VALUE ...] [--region CODE | --grid-g-per-kwh X] [--pue X]\n"
        "                        [--optimizer adam|sgd|none] [--latency-target-ms X] [--runtime NAME] [--threads N] [--kernels] [--json]\n"
        "                        [--predictor auto|roofline|trees|gnn|transformer|ensemble] [--features] [--host-us X]\n"
        "       perfcard card MODEL.onnx [predict options] [--title TEXT] --out CARD.svg   (a static SVG card)\n"
        "       perfcard eval QUERIES.jsonl [--constants FILE]   (calibration: one prediction per line)\n"
        "       perfcard features --schema [--json]   (the learned predictors' feature columns)\n"
        "       perfcard devices [--json]\n"
        "       perfcard probe [--json] [--gemm-ms X] [--stream-ms X]   (this machine's rates, as the page measures them)\n"
        "       perfcard probe --rates GFLOPS,GBS [--id ID] [--name NAME] [--where WORDS]\n"
        "                                    (the device entry for rates measured before: no probe runs)\n"
        "       perfcard probe --cpu [--json] [--rates GFLOPS,GBS] [--cores N] [--memory-gb X] [...]\n"
        "                                    (the entry for onnxruntime natively on this machine, from the median\n"
        "                                     of 5 probes; predict's --device this-machine probes and adds it)\n"
        "\n"
        "  --dim NAME=VALUE  bind a symbolic input dim (e.g. --dim batch=8 --dim sequence=128);\n"
        "                    unbound dims default to 1 with a warning\n"
        "  --threads N       CPUs: onnxruntime intra-op threads (default 0 = every core of the catalog entry)\n"
        "  --host-us X       GPUs, pytorch-eager: the host's time per launched kernel in microseconds, which sets\n"
        "                    eager's small-batch latency (default: the fitted constant; measured hosts range from\n"
        "                    about 20, PyTorch 2.x on current servers, to 65; docs/accuracy.md, \"Host-bound rows\")\n"
        "  --per-node        list every node with its shapes and costs\n"
        "  --predictor NAME  auto (default: per device family, the learned predictor where it beats the roofline\n"
        "                    on held-out rows), roofline, trees, gnn, transformer, ensemble\n"
        "  --features        add each row's feature vector (the learned predictors' input) to the JSON\n"
        "  --weights DIR     read learned predictor files from DIR (checked against DIR/manifest.json)\n"
        "  --json            print the JSON document (schemas: docs/analyze-json.md, docs/predict-json.md)\n"
        "  --devices FILE / --carbon FILE / --constants FILE  use these data files instead of the embedded ones\n"
        "  --extra-devices FILE  add devices the catalog lacks (entries of its schema, or perfcard probe --json's\n"
        "                    output; name them with --device)\n";
  return code;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw perfcard::Error("cannot open '" + path + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A data file: the one given on the command line, else the copy embedded at build time.
std::string data_file(const std::string& override_path, const char* name) {
  if (!override_path.empty()) return read_text(override_path);
  std::string_view e = perfcard::embedded_file(name);
  if (e.empty())
    throw perfcard::Error(std::string("no embedded ") + name + " in this build" +
                          (std::string(name) == "roofline.json" ? ": run /usr/bin/python3 -m scripts.calibration.calibrate_roofline, then rebuild" : ""));
  return std::string(e);
}

// Bytes of a weights file, from --weights DIR or embedded; empty when the directory or the build has none.
std::string weights_bytes(const std::string& dir, const char* name) {
  if (!dir.empty()) return std::ifstream(dir + "/" + name) ? read_text(dir + "/" + name) : std::string();
  return std::string(perfcard::embedded_file(name));
}

// The roofline, and the learned predictors whose files are present and valid. A learned file that fails
// its checks is reported and left out; asking for it by name then says it is not loaded.
perfcard::PredictorSet load_predictors(const perfcard::RooflineConstants& constants, const std::string& weights_dir,
                                       bool quiet = false) {
  perfcard::PredictorSet set;
  set.roofline = std::make_shared<const perfcard::RooflinePredictor>(constants);
  const std::string manifest = weights_bytes(weights_dir, "manifest.json");
  for (std::string_view learned : perfcard::learned_predictor_names()) {
    const std::string name = std::string(learned) + ".pcwt";
    const std::string bytes = weights_bytes(weights_dir, name.c_str());
    if (bytes.empty()) continue;
    try {
      // A copy: the file's tensors are read in place and need the alignment a heap buffer has.
      const std::vector<std::uint8_t> buf(bytes.begin(), bytes.end());
      set.learned.push_back(
          perfcard::load_learned_predictor(manifest, name, buf, set.roofline, perfcard::NativeLearned{}, set.learned));
    } catch (const perfcard::Error& e) {
      if (!quiet) std::cerr << "perfcard: warning: " << name << " not used: " << e.what() << "\n";
    }
  }
  return set;
}

// Physical cores this process may run on (SMT siblings once: onnxruntime's default threads are one per
// physical core, and a sibling adds little to a matrix product), else the CPUs it may run on.
int this_machine_cores() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return std::max(1u, std::thread::hardware_concurrency());
  std::set<std::string> cores;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    std::ifstream f("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/thread_siblings_list");
    std::string siblings;
    cores.insert(f && std::getline(f, siblings) ? siblings : "cpu" + std::to_string(cpu));
  }
  return std::max(1, int(cores.size()));
}

double this_machine_memory_gb() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? double(pages) * double(page) / 1e9 : 0;
}

perfcard::ProbeResult probe_now(const perfcard::ProbeOptions& o = {}) {
  const auto t0 = std::chrono::steady_clock::now();
  auto now_ms = [t0] { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(); };
  return perfcard::probe_machine(now_ms, o);
}

// The rates of kMachineProbes probes, each rate's median: the procedure the cpu-probed family was fitted on
// (scripts/measure/machines.py records a machine's probe with `perfcard probe --cpu --json`), so the CLI's
// entry and the fit's read the same statistic. Unpinned, as onnxruntime's threads are: a cloud guest's vCPUs
// can probe apart (one of this project's 2-vCPU VMs read 17 GFLOP/s on CPU 0 and 25 on CPU 1 for a while,
// while onnxruntime's ResNet-50 took 44.9 and 43.0 ms pinned to each), and the median of several probes
// reads the machine's usual rate rather than one CPU's.
constexpr int kMachineProbes = 5;

struct MachineProbe {
  perfcard::ProbeResult median;  // no block or pass count: a median of probes has none of its own
  std::vector<perfcard::ProbeResult> runs;
};

MachineProbe machine_probe(const perfcard::ProbeOptions& o) {
  MachineProbe m;
  for (int i = 0; i < kMachineProbes; ++i) {
    m.runs.push_back(probe_now(o));
    m.median.elapsed_ms += m.runs.back().elapsed_ms;
  }
  auto median = [&m](double perfcard::ProbeResult::*rate) {
    std::vector<double> v;
    for (const auto& r : m.runs) v.push_back(r.*rate);
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];  // kMachineProbes is odd
  };
  m.median.gemm_gflops = median(&perfcard::ProbeResult::gemm_gflops);
  m.median.stream_gbs = median(&perfcard::ProbeResult::stream_gbs);
  return m;
}

const std::string kMachineWhere = "natively by perfcard probe, the median of " + std::to_string(kMachineProbes) + " probes";
const std::string kThisMachineId = "this-machine", kThisMachineName = "This machine (native probe, onnxruntime)";

// This machine's entry for onnxruntime (perfcard/machine_probe.h, probe_cpu_entry), probed now.
std::string this_machine_entry() {
  const MachineProbe p = machine_probe({});
  const int cores = this_machine_cores();
  std::cerr << "perfcard: probed " << kThisMachineId << ": f32 matrix product " << p.median.gemm_gflops << " GFLOP/s, read "
            << p.median.stream_gbs << " GB/s per thread (the median of " << kMachineProbes << " probes), " << cores
            << " cores\n";
  return perfcard::probe_cpu_entry(p.median, cores, this_machine_memory_gb(), kThisMachineId, kThisMachineName, kMachineWhere);
}

// --device this-machine: the machine the CLI runs on, probed now, unless --extra-devices names an entry so.
// Returns whether it added the entry.
bool add_this_machine(nlohmann::json& o) {
  const std::string& kId = kThisMachineId;
  if (!o.contains("devices") || !o["devices"].is_string()) return false;
  const std::string list = "," + o["devices"].get<std::string>() + ",";
  if (list.find("," + kId + ",") == std::string::npos) return false;
  if (!o.contains("extraDevices")) o["extraDevices"] = nlohmann::json::array();
  for (const auto& e : o["extraDevices"])
    if (e.is_object() && e.value("id", "") == kId) return false;
  // The cpu-probed family is fitted for onnxruntime natively; onnxruntime-web's kernels relate to the wasm
  // probe (the browser family), not to this native one.
  if (o.contains("cpuRuntime") && o["cpuRuntime"] != "onnxruntime")
    throw perfcard::option_error("this-machine is predicted for onnxruntime natively; for onnxruntime-web, predict the page's "
                                 "'this device' entry (perfcard probe --json, --extra-devices)");
  o["extraDevices"].push_back(nlohmann::json::parse(this_machine_entry()));
  return true;
}

int run_predict(const std::vector<std::string>& args, bool card = false) {
  std::string path, devices_file, carbon_file, constants_file, weights_dir, out_file, title;
  std::vector<std::string> dims;
  bool json = false;
  // Flags become the options object of the JS API, parsed by the core (perfcard/options.h): the same
  // values are accepted and refused with the same words.
  nlohmann::json o = nlohmann::json::object();
  auto value = [&](std::size_t& i) -> const std::string& {
    if (i + 1 >= args.size()) throw perfcard::option_error(args[i] + " needs a value");
    return args[++i];
  };
  static const std::map<std::string, std::string> keys = {
      {"--device", "devices"},  {"--devices-list", "devices"}, {"--batch", "batch"},
      {"--precision", "precision"}, {"--mode", "mode"},       {"--region", "region"},
      {"--grid-g-per-kwh", "gridGPerKwh"}, {"--pue", "pue"},  {"--latency-target-ms", "latencyTargetMs"},
      {"--runtime", "runtime"}, {"--cpu-runtime", "cpuRuntime"}, {"--threads", "threads"},
      {"--predictor", "predictor"}, {"--optimizer", "optimizer"}, {"--host-us", "hostUs"}};
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") json = true;
    else if (a == "--kernels") o["kernels"] = true;
    else if (a == "--features") o["features"] = true;
    else if (keys.count(a)) o[keys.at(a)] = value(i);
    else if (a == "--weights") weights_dir = value(i);
    else if (a == "--dim") dims.push_back(value(i));
    else if (a == "--devices") devices_file = value(i);
    else if (a == "--extra-devices") {
      // A file of device entries (a JSON array, or an object with a 'devices' array) added to the catalog, or
      // what `perfcard probe --json` printed (an object with one 'device'), so a probe can be kept and reused.
      const std::string text = read_text(value(i));
      nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (doc.is_object() && doc.contains("devices")) doc = doc["devices"];
      else if (doc.is_object() && doc.contains("device") && doc["device"].is_object()) doc = nlohmann::json::array({doc["device"]});
      if (!doc.is_array())
        throw perfcard::option_error("--extra-devices expects a JSON array of device entries, an object with a 'devices' array, "
                                     "or perfcard probe --json's output");
      o["extraDevices"] = doc;
    }
    else if (a == "--carbon") carbon_file = value(i);
    else if (a == "--constants") constants_file = value(i);
    else if (card && a == "--out") out_file = value(i);
    else if (card && a == "--title") title = value(i);
    else if (a == "-h" || a == "--help") return usage(std::cout, 0);
    else if (!a.empty() && a[0] == '-') { std::cerr << "perfcard: unknown option '" << a << "'\n"; return usage(std::cerr, 2); }
    else if (path.empty()) path = a;
    else { std::cerr << "perfcard: more than one model given\n"; return 2; }
  }
  if (path.empty()) return usage(std::cerr, 2);
  perfcard::PredictOptions opt = perfcard::predict_options_from_text(o.dump());
  opt.dims = perfcard::parse_dim_bindings(dims);
  auto catalog = perfcard::DeviceCatalog::parse(data_file(devices_file, "devices.json"));
  auto carbon = perfcard::CarbonTable::parse(data_file(carbon_file, "carbon_regions.json"));
  auto constants = perfcard::RooflineConstants::parse(data_file(constants_file, "roofline.json"));
  auto predictor = perfcard::select_predictor(opt.predictor, load_predictors(constants, weights_dir));
  perfcard::Model model = load_model_file(path);
  // Probed last: a bad option, file or model is reported at once, not after seconds of probing.
  if (add_this_machine(o)) {
    opt = perfcard::predict_options_from_text(o.dump());
    opt.dims = perfcard::parse_dim_bindings(dims);
  }
  perfcard::PredictResult r = perfcard::predict(model, catalog, *predictor, constants, carbon, opt);
  if (json && !card) {
    std::cout << perfcard::predict_to_json_text(r, 2) << "\n";
    return 0;
  }
  const nlohmann::json doc = nlohmann::json::parse(perfcard::predict_to_json_text(r));
  if (card) {
    std::string sub = std::string(perfcard::mode_name(opt.mode)) + " \xC2\xB7 " +
                      (opt.precision ? std::string(perfcard::precision_name(*opt.precision)) : "fp16 GPU / fp32 CPU");
    for (const auto& d : dims) sub += " \xC2\xB7 " + d;
    std::string svg = perfcard::tools::render_card_svg(
        doc, {title.empty() ? path.substr(path.find_last_of('/') + 1) : title, sub, PERFCARD_VERSION});
    if (out_file.empty() || out_file == "-") std::cout << svg;
    else {
      std::ofstream f(out_file, std::ios::binary);
      if (!(f << svg) || !f.flush()) throw perfcard::Error("cannot write '" + out_file + "'");
      std::cerr << "perfcard: wrote " << out_file << " (" << r.rows.size() << " predictions)\n";
    }
    return 0;
  }
  perfcard::tools::print_predict_table(std::cout, doc);
  return 0;
}

// Calibration, evaluation and the training tables ask for thousands of predictions; one process answers
// them all, so the scripts drive the very code the CLI and the web page run, never a re-implementation.
// A query: {"model", "dims", "device", "precision", "runtime", "threads", "compute_scale",
// "bandwidth_scale", "samples" (default dims.batch or 1), "predictor" (default roofline), "features", "graph"
// (the operator graph a graph predictor reads, operator_graph.h), "sequence" (the kernel sequence the
// transformer reads, kernel_sequence.h), "embedding" (the GNN's graph embedding), "sequence_embedding" (the
// transformer's), "memory" ({"mode", "optimizer"}: the memory model's parts in bytes, memory_model.h),
// "training" ({"optimizer"}: time one training step, training_step.h, instead of a forward)}. The answer holds
// the board power the power model gives (power_w) and the energy per sample it implies (energy_j_per_sample)
// wherever the catalog knows the device's idle power and TDP; "memory" answers hold the device's figure
// (memory_bytes.total) beside its parts.
int run_eval(const std::vector<std::string>& args) {
  std::string queries, constants_file, devices_file, weights_dir;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--constants" && i + 1 < args.size()) constants_file = args[++i];
    else if (args[i] == "--devices" && i + 1 < args.size()) devices_file = args[++i];
    else if (args[i] == "--weights" && i + 1 < args.size()) weights_dir = args[++i];
    else if (queries.empty()) queries = args[i];
    else return usage(std::cerr, 2);
  }
  if (queries.empty()) return usage(std::cerr, 2);
  auto catalog = perfcard::DeviceCatalog::parse(data_file(devices_file, "devices.json"));
  auto constants = perfcard::RooflineConstants::parse(data_file(constants_file, "roofline.json"));
  const perfcard::PredictorSet set = load_predictors(constants, weights_dir);
  std::map<std::string, std::shared_ptr<const perfcard::Predictor>> predictors;
  std::map<std::string, std::unique_ptr<perfcard::Model>> models;
  std::map<std::string, std::unique_ptr<perfcard::Analysis>> analyses;
  std::map<std::string, std::unique_ptr<perfcard::Prepared>> prepared;
  std::ifstream in(queries);
  if (!in) throw perfcard::Error("cannot open '" + queries + "'");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    nlohmann::json out;
    try {
      auto q = nlohmann::json::parse(line);
      const std::string pname = q.value("predictor", "roofline");
      auto& predictor = predictors[pname];
      if (!predictor) predictor = perfcard::select_predictor(pname, set);
      std::string mpath = q.at("model").get<std::string>();
      auto& m = models[mpath];
      if (!m) m = std::make_unique<perfcard::Model>(load_model_file(mpath));
      const nlohmann::json qdims = q.value("dims", nlohmann::json::object());
      std::string key = mpath + "|" + qdims.dump();
      auto& a = analyses[key];
      if (!a) {
        perfcard::AnalyzeOptions ao;
        for (auto& [k, v] : qdims.items()) ao.dims.values[k] = v.get<std::int64_t>();
        a = std::make_unique<perfcard::Analysis>(perfcard::analyze(*m, ao));
      }
      const perfcard::Device& d = catalog.get(q.at("device").get<std::string>());
      const std::string runtime = q.value("runtime", d.is_gpu() ? "pytorch-eager" : "onnxruntime");
      const perfcard::Precision precision = perfcard::parse_precision(q.value("precision", "fp32"));
      const std::int64_t samples = q.value("samples", qdims.value("batch", std::int64_t{1}));
      // {"training": {"optimizer": adam|sgd|none}}: the time of one training step instead of a forward
      const bool training = q.contains("training");
      const perfcard::Optimizer optimizer =
          perfcard::parse_optimizer(training ? q.at("training").value("optimizer", "adam") : std::string("adam"));
      const perfcard::Mode mode = training ? perfcard::Mode::Training : perfcard::Mode::Inference;
      const std::string pkey = pname + "|" + key + "|" + runtime + "|" + std::string(perfcard::precision_name(precision)) +
                               "|" + std::to_string(samples) + "|" + std::string(perfcard::mode_name(mode)) + "|" +
                               std::string(perfcard::optimizer_name(optimizer));
      auto& prep = prepared[pkey];
      if (!prep)
        prep = predictor->prepare(perfcard::PredictorSubject{m.get(), a.get(), runtime, precision, samples, mode, optimizer});
      perfcard::DeviceQuery dq{&d, q.value("compute_scale", 1.0), q.value("bandwidth_scale", 1.0), q.value("threads", 0), false};
      auto r = predictor->predict(*prep, dq);
      perfcard::widen_for_host(r, constants, runtime, mode);
      out["latency_ms"] = r.latency_ms;
      if (training)
        out["busy_ms_by_phase"] = {{"forward", r.busy_ms_by_phase[0]}, {"backward", r.busy_ms_by_phase[1]},
                                   {"update", r.busy_ms_by_phase[2]}};
      out["busy_fraction"] = r.busy_fraction;
      out["host_bound"] = perfcard::host_bound(r.busy_ms, r.latency_ms);
      out["intensity"] = r.intensity;
      out["predictor"] = r.predictor;
      out["version"] = r.version;
      out["baseline_ms"] = r.baseline_ms;
      if (auto power = perfcard::predict_power_w(d, constants.power, {r.busy_fraction, r.intensity, dq.threads})) {
        out["power_w"] = *power;
        out["energy_j_per_sample"] = perfcard::energy_j_per_sample(*power, r.latency_ms, double(samples));
      }
      out["out_of_distribution"] = r.out_of_distribution;
      out["ood_reasons"] = nlohmann::json::array();
      for (perfcard::OodReason why : r.ood_reasons) out["ood_reasons"].push_back(std::string(perfcard::ood_reason_name(why)));
      out["uncertainty"] = r.uncertainty;
      if (r.band_coverage > 0) out["band_ms"] = {r.band_low_ms, r.band_high_ms};
      const auto [shown_low, shown_high] = r.shown_band();
      out["shown_band_ms"] = {shown_low, shown_high};  // what the row shows, calibrated or not
      out["warnings"] = r.warnings;
      std::string family;
      constants.family_of(d, &family);
      out["family"] = family;
      if (q.contains("memory")) {  // {"mode": inference|inference-grad|training, "optimizer": adam|sgd|none}
        const auto& mq = q.at("memory");
        const auto mb = perfcard::estimate_memory(*m, *a, precision, perfcard::parse_mode(mq.value("mode", "inference")),
                                                  perfcard::parse_optimizer(mq.value("optimizer", "adam")),
                                                  constants.runtime(runtime));
        out["memory_bytes"] = {{"weights", mb.weights}, {"activations", mb.activations}, {"gradients", mb.gradients},
                               {"optimizer", mb.optimizer}, {"optimizer_update", mb.optimizer_update},
                               {"saved_activations", mb.saved_activations},
                               {"workspace", mb.workspace}, {"context", mb.context}, {"allocator", mb.allocator},
                               {"total", mb.total()}, {"complete", mb.complete}};
      }
      if (q.value("features", false)) {
        std::vector<float> f = perfcard::feature_row(*prep, dq, *set.roofline);
        nlohmann::json row = nlohmann::json::array();
        for (float v : f) row.push_back(std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v));
        out["features"] = std::move(row);
      }
      // The embeddings a prepared state holds: the GNN's graph embedding, the transformer's sequence one.
      const auto* learned = dynamic_cast<const perfcard::LearnedPrepared*>(prep.get());
      for (const auto& [field, e, reader] :
           {std::tuple{"embedding", learned ? perfcard::prepared_embedding(*learned, false) : nullptr, "the graph (gnn)"},
            std::tuple{"sequence_embedding", learned ? perfcard::prepared_embedding(*learned, true) : nullptr,
                       "the kernel sequence (transformer)"}}) {
        if (!q.value(field, false)) continue;
        if (!e || e->size() == 0)
          throw perfcard::option_error("\"" + std::string(field) + "\" needs a predictor that embeds " + reader +
                                       ", or an ensemble or auto that reads it");
        out[field] = std::vector<float>(e->values().begin(), e->values().end());
      }
      if (q.value("graph", false)) {
        const perfcard::OperatorGraph og = perfcard::operator_graph(*m, *a, samples);
        nlohmann::json x = nlohmann::json::array();
        for (std::size_t i = 0; i < og.nodes; ++i)
          x.push_back(std::vector<float>(og.x.begin() + std::ptrdiff_t(i * og.features),
                                         og.x.begin() + std::ptrdiff_t((i + 1) * og.features)));
        out["graph"] = {{"schema_hash", perfcard::graph_schema_hash()}, {"op", og.op}, {"class", og.op_class},
                        {"x", std::move(x)}, {"src", og.edge_src}, {"dst", og.edge_dst}};
      }
      if (q.value("sequence", false)) {
        if (training)
          throw perfcard::option_error("\"sequence\" is the kernel sequence of an inference run; a training step's "
                                       "(its optimizer's passes have no node) is not one the transformer reads");
        const auto& plan = perfcard::as_roofline_prepared(*prep).plan;
        const perfcard::KernelSequence ks = perfcard::kernel_sequence(*m, plan, samples);
        out["sequence"] = {{"schema_hash", perfcard::sequence_schema_hash()}, {"op", ks.op}, {"class", ks.op_class},
                           {"x", ks.x}, {"features", ks.features}};
      }
    } catch (const std::exception& e) {
      out["error"] = e.what();
    }
    std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  return 0;
}

// The feature columns the learned predictors read, with the schema hash their files must carry.
int run_features(const std::vector<std::string>& args) {
  bool json = false, schema = false;
  for (const auto& a : args) {
    if (a == "--json") json = true;
    else if (a == "--schema") schema = true;
    else { std::cerr << "perfcard: features takes --schema [--json]; a model's rows come from predict --features\n"; return 2; }
  }
  if (!schema) { std::cerr << "perfcard: features takes --schema [--json]; a model's rows come from predict --features\n"; return 2; }
  if (json) {
    nlohmann::json cols = nlohmann::json::array();
    for (const auto& f : perfcard::feature_schema()) cols.push_back({{"name", f.name}, {"meaning", f.meaning}});
    // The op vocabulary of graph predictors: the registry's rows in order (an op's id is its place + 1;
    // 0 is kept for op types the registry does not know).
    nlohmann::json ops = nlohmann::json::array();
    for (const auto& op : perfcard::all_ops())
      ops.push_back({{"domain", op.domain}, {"op_type", op.op_type}, {"class", perfcard::op_class_name(op.cls)},
                     {"flops_per_element", op.flops_per_element}});
    // The op classes in enum order: a graph predictor's class id is the place here.
    nlohmann::json classes = nlohmann::json::array();
    for (int c = 0; c <= int(perfcard::OpClass::Other); ++c)
      classes.push_back(perfcard::op_class_name(perfcard::OpClass(c)));
    nlohmann::json node_cols = nlohmann::json::array();
    for (const auto& f : perfcard::node_feature_schema()) node_cols.push_back({{"name", f.name}, {"meaning", f.meaning}});
    nlohmann::json graph{{"version", perfcard::kGraphSchemaVersion}, {"hash", perfcard::graph_schema_hash()},
                         {"node_features", node_cols}};
    nlohmann::json kernel_cols = nlohmann::json::array();
    for (const auto& f : perfcard::kernel_feature_schema()) kernel_cols.push_back({{"name", f.name}, {"meaning", f.meaning}});
    nlohmann::json sequence{{"version", perfcard::kSequenceSchemaVersion}, {"hash", perfcard::sequence_schema_hash()},
                            {"kernel_features", kernel_cols}};
    std::cout << nlohmann::json{{"version", perfcard::kFeatureSchemaVersion}, {"hash", perfcard::feature_schema_hash()},
                                {"features", cols}, {"ops", ops}, {"op_classes", classes}, {"graph", graph},
                                {"sequence", sequence}}.dump(2)
              << "\n";
  } else {
    std::cout << "feature schema " << perfcard::kFeatureSchemaVersion << " (" << perfcard::feature_schema_hash() << ")\n";
    for (const auto& f : perfcard::feature_schema()) std::cout << "  " << f.name << "  " << f.meaning << "\n";
  }
  return 0;
}

int run_devices(const std::vector<std::string>& args) {
  auto catalog = perfcard::DeviceCatalog::parse(data_file("", "devices.json"));
  if (!args.empty() && args[0] == "--json") {
    auto carbon = perfcard::CarbonTable::parse(data_file("", "carbon_regions.json"));
    auto constants = perfcard::RooflineConstants::parse(data_file("", "roofline.json"));
    perfcard::RooflinePredictor predictor(constants);
    std::cout << perfcard::catalog_to_json(catalog, carbon, constants, predictor, PERFCARD_VERSION, 2) << "\n";
    return 0;
  }
  for (const auto& d : catalog.devices()) std::cout << d.id << "  " << d.name << "\n";
  return 0;
}

// What the page's "this device" measures, natively: the same probe with a steady clock, and the device
// entry that `predict --extra-devices` takes (with --cpu-runtime onnxruntime-web, the page's row). With
// --rates, the entry for rates measured before (the training rows' machines, scripts/measure/probe_web.py),
// so the entry has one writer.
int run_probe(const std::vector<std::string>& args) {
  perfcard::ProbeOptions o;
  bool json = false, cpu = false;
  int cores = 0;  // 0: this machine's
  std::optional<double> memory_gb;
  std::optional<std::string> where;  // default: how this run measured
  std::string rates, id, name;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") json = true;
    else if (a == "--gemm-ms" && i + 1 < args.size()) o.gemm_ms = perfcard::number_option(args[++i], "gemm_ms", a);
    else if (a == "--stream-ms" && i + 1 < args.size()) o.stream_ms = perfcard::number_option(args[++i], "stream_ms", a);
    else if (a == "--rates" && i + 1 < args.size()) rates = args[++i];
    else if (a == "--id" && i + 1 < args.size()) id = args[++i];
    else if (a == "--name" && i + 1 < args.size()) name = args[++i];
    else if (a == "--where" && i + 1 < args.size()) where = args[++i];
    else if (a == "--cpu") cpu = true;
    else if (a == "--cores" && i + 1 < args.size()) cores = int(perfcard::whole_option(args[++i], "cores", a, 1, 4096));
    else if (a == "--memory-gb" && i + 1 < args.size()) memory_gb = perfcard::number_option(args[++i], "memory_gb", a);
    else if (a == "-h" || a == "--help") return usage(std::cout, 0);
    else { std::cerr << "perfcard: unknown option '" << a << "'\n"; return usage(std::cerr, 2); }
  }
  if (!cpu && (cores || memory_gb)) throw perfcard::option_error("--cores and --memory-gb describe the machine for --cpu's entry");
  if (cpu && !cores) cores = this_machine_cores();
  std::vector<perfcard::ProbeResult> runs;
  if (id.empty()) id = cpu ? kThisMachineId : "this-device";
  if (name.empty()) name = cpu ? kThisMachineName : "This machine (native probe)";
  perfcard::ProbeResult p;
  if (!rates.empty()) {
    const auto comma = rates.find(',');
    if (comma == std::string::npos) throw perfcard::option_error("--rates takes GFLOPS,GBS (got '" + rates + "')");
    p.gemm_gflops = perfcard::number_option(rates.substr(0, comma), "gemm_gflops", "--rates");
    p.stream_gbs = perfcard::number_option(rates.substr(comma + 1), "stream_gbs", "--rates");
    if (!(p.gemm_gflops > 0) || !(p.stream_gbs > 0))  // (number_option refuses a non-finite one)
      throw perfcard::option_error("--rates: both rates must be positive (got '" + rates + "')");
    json = true;
  } else if (cpu) {
    MachineProbe m = machine_probe(o);
    p = m.median;
    runs = std::move(m.runs);
    if (!where) where = kMachineWhere;
  } else {
    p = probe_now(o);
  }
  if (json) {
    nlohmann::json doc = {{"gemm_gflops", p.gemm_gflops}, {"stream_gbs", p.stream_gbs}, {"elapsed_ms", p.elapsed_ms},
                          {"gemm_blocks", p.gemm_blocks}, {"stream_passes", p.stream_passes}};
    const std::string measured = where.value_or("natively by perfcard probe");
    doc["device"] = nlohmann::json::parse(
        cpu ? perfcard::probe_cpu_entry(p, cores, memory_gb.value_or(this_machine_memory_gb()), id, name, measured)
            : perfcard::probe_device_entry(p, id, name, measured));
    if (!runs.empty()) {
      doc["runs"] = nlohmann::json::array();
      for (const auto& r : runs) doc["runs"].push_back({{"gemm_gflops", r.gemm_gflops}, {"stream_gbs", r.stream_gbs}});
    }
    std::cout << doc.dump(2) << "\n";
  } else if (cpu) {
    std::cout << "f32 matrix product: " << p.gemm_gflops << " GFLOP/s, memory read: " << p.stream_gbs
              << " GB/s per thread (the median of " << kMachineProbes << " probes); " << cores << " cores\n";
  } else {
    std::cout << "f32 matrix product: " << p.gemm_gflops << " GFLOP/s (best of " << p.gemm_blocks << " blocks)\n"
              << "memory read: " << p.stream_gbs << " GB/s (best of " << p.stream_passes << " passes)\n";
  }
  return 0;
}

int run_analyze(const std::vector<std::string>& args) {
  std::string path;
  std::vector<std::string> dims;
  bool json = false, per_node = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") json = true;
    else if (a == "--per-node") per_node = true;
    else if (a == "--dim" && i + 1 < args.size()) dims.push_back(args[++i]);
    else if (a.rfind("--dim=", 0) == 0) dims.push_back(a.substr(6));
    else if (a == "-h" || a == "--help") return usage(std::cout, 0);
    else if (!a.empty() && a[0] == '-') { std::cerr << "perfcard: unknown option '" << a << "'\n"; return usage(std::cerr, 2); }
    else if (path.empty()) path = a;
    else { std::cerr << "perfcard: more than one model given\n"; return 2; }
  }
  if (path.empty()) return usage(std::cerr, 2);
  perfcard::AnalyzeOptions opt;
  opt.dims = perfcard::parse_dim_bindings(dims);
  opt.node_costs = per_node;  // only the per-node table reads them
  perfcard::Model model = load_model_file(path);
  perfcard::Analysis analysis = perfcard::analyze(model, opt);
  const perfcard::Json doc = perfcard::analysis_to_json(model, analysis, per_node);
  if (json) std::cout << doc.dump(2) << "\n";
  else perfcard::tools::print_summary(std::cout, path, nlohmann::json::parse(doc.dump()), per_node);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "-h" || args[0] == "--help") return usage(args.empty() ? std::cerr : std::cout, args.empty() ? 2 : 0);
  std::string cmd = args[0];
  args.erase(args.begin());
  try {
    if (cmd == "analyze") return run_analyze(args);
    if (cmd == "predict") return run_predict(args);
    if (cmd == "card") return run_predict(args, /*card=*/true);
    if (cmd == "eval") return run_eval(args);
    if (cmd == "features") return run_features(args);
    if (cmd == "devices") return run_devices(args);
    if (cmd == "probe") return run_probe(args);
    std::cerr << "perfcard: unknown command '" << cmd << "'\n";
    return usage(std::cerr, 2);
  } catch (const perfcard::Error& e) {
    std::cerr << "perfcard: error: " << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "perfcard: error: out of memory\n";
    return 1;
  } catch (const std::exception& e) {  // a bug, not bad input: still an exit code, never an abort
    std::cerr << "perfcard: internal error: " << e.what() << "\n";
    return 3;
  }
}
