// perfcard predict: for each device and batch, latency, throughput, memory with its parts, energy,
// carbon and the MIG recommendation, from one predictor behind the Predictor interface.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "perfcard/carbon.h"
#include "perfcard/device.h"
#include "perfcard/json.h"
#include "perfcard/memory_model.h"
#include "perfcard/predict_cache.h"
#include "perfcard/predictor.h"
#include "perfcard/roofline.h"

namespace perfcard {

// More batch sizes than a table can show only make a huge document (10,000 would be 360 MB of JSON).
inline constexpr std::size_t kMaxBatchSizes = 64;

struct PredictOptions {
  std::vector<std::string> devices;          // ids; empty or {"all"}: the default-view GPUs; "all-gpus";
                                             // "cpus": every CPU; "every"
  Json extra_devices;                        // array of catalog-schema entries the caller adds (their ids
                                             // may then be named in `devices`); null or [] = none
  std::vector<std::int64_t> batches = {1};
  std::optional<Precision> precision;        // default fp16 on GPUs, fp32 on CPUs
  Mode mode = Mode::Inference;               // the memory protocol
  Optimizer optimizer = Optimizer::Adam;     // training's optimizer state
  DimBindings dims;                          // other symbolic dims (sequence, ...)
  std::string region;                        // empty: the table's default
  std::optional<double> grid_g_per_kwh;      // overrides the region
  std::optional<double> pue;
  std::optional<double> latency_target_ms;
  std::string gpu_runtime = "pytorch-eager";
  std::string cpu_runtime = "onnxruntime";
  int cpu_threads = 0;                       // onnxruntime intra-op threads on CPUs; 0 = every core
  // pytorch-eager on GPUs: the host's time per launched kernel (us), which sets eager's small-batch latency
  // and differs between machines (PyTorch version, CPU); default the runtime's fitted dispatch_us.
  std::optional<double> host_us;
  double mig_headroom = 0.1;                 // a profile fits when peak memory <= (1 - headroom) x its memory
  bool keep_kernels = false;                 // per-kernel times (for breakdown charts)
  std::string predictor = "auto";            // which predictor the caller builds (predictor_registry.h)
  bool keep_features = false;                // each row's feature vector (features.h)
};

struct MigOption {
  std::string name;
  double memory_gb = 0;
  bool fits = false;
  bool meets_target = true;
  double latency_ms = 0, throughput_per_s = 0;
  int instances = 0;
  double total_throughput_per_s = 0;
};

struct DevicePrediction {
  std::string device_id, device_name, runtime;
  std::int64_t batch = 1;
  int threads = 0;                           // CPUs: the cores the prediction assumed busy (0 on GPUs)
  std::optional<double> host_us;             // pytorch-eager: the host's time per kernel assumed (given or fitted)
  Precision precision_requested = Precision::FP16, precision_used = Precision::FP16;
  double latency_ms = 0, throughput_per_s = 0;
  MemoryBreakdown memory;
  double device_memory_gb = 0;
  bool fits = false;
  std::optional<double> power_w, energy_j_per_sample, carbon_g_per_1000;
  std::vector<MigOption> mig;
  std::optional<std::size_t> mig_recommended;  // index into mig
  double uncertainty = 0;
  // The latency's band: a predictor's calibrated one (band_coverage of held-out rows inside it), else
  // latency / (1 + uncertainty) .. latency x (1 + uncertainty) with band_coverage 0 (not calibrated).
  double band_low_ms = 0, band_high_ms = 0, band_coverage = 0;
  double busy_ms = 0;                        // device busy time within latency_ms
  std::array<double, 3> busy_ms_by_phase{};  // training: of busy_ms, forward, backward, update
  double baseline_ms = 0;                    // the roofline's latency that a learned predictor corrected
  bool out_of_distribution = false;          // the warnings say why, ood_reasons in a word each
  std::vector<OodReason> ood_reasons;
  std::string predictor, predictor_version;  // the predictor that made this row
  std::vector<KernelTime> kernels;
  std::vector<float> features;               // with keep_features: feature_schema() order, NaN = unknown
  std::vector<std::string> warnings;
};

struct PredictResult {
  std::string batch_symbol;                  // the dim that --batch binds ("" when the model has none)
  std::string predictor_requested;           // --predictor as given ("auto" picks per device family)
  std::string memory_protocol;               // what the memory figures are for: inference, inference-grad, training
  std::string optimizer;                     // training: the optimizer whose state is counted; empty otherwise
  std::string region_code;
  double grid_g_per_kwh = 0, pue = 1;
  std::vector<DevicePrediction> rows;        // devices x batches
  std::vector<std::string> warnings;
};

// `cache`: analyses and memory estimates kept from earlier calls on this model (predict_cache.h), or none.
PredictResult predict(const Model& model, const DeviceCatalog& catalog, const Predictor& predictor,
                      const RooflineConstants& constants, const CarbonTable& carbon, const PredictOptions& options,
                      PredictCache* cache = nullptr);

inline constexpr int kPredictSchemaVersion = 2;
// The document (docs/predict-json.md) as text, as nlohmann::json's dump(indent) would print it, written
// without building the tree: what the page and `perfcard predict --json` print.
std::string predict_to_json_text(const PredictResult& r, int indent = -1);

}  // namespace perfcard
