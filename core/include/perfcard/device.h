// The device catalog: GPUs and CPUs with their datasheet figures, each carrying its source, and the
// MIG profile tables. Parsed from weights/devices.json (embedded into the wasm build), never hard-coded.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace perfcard {

class Json;  // perfcard/json.h

enum class Precision : std::uint8_t { FP32, TF32, FP16, BF16, FP8, INT8 };

std::string_view precision_name(Precision p);
Precision parse_precision(std::string_view s);  // throws Error on an unknown name
int precision_bits(Precision p);                 // storage bits of weights/activations (tf32 stores 32)

struct Sourced {
  double value = 0;
  std::string source;
  bool uncertain = false;
  bool present = false;
};

struct MigProfile {
  std::string name;          // e.g. "1g.10gb"
  double memory_gb = 0;
  int compute_slices = 0;    // of the device's mig.compute_slices_total (7; 4 on A30)
  int memory_slices = 0;     // of mig.memory_slices_total (8; 4 on A30)
  int max_instances = 0;
};

struct MigTable {
  std::string source;
  int compute_slices_total = 7;
  int memory_slices_total = 8;
  std::vector<MigProfile> profiles;
};

struct Device {
  std::string id, name, kind, vendor, arch;  // kind: "gpu" | "cpu"
  std::map<Precision, Sourced> peak_tflops;  // dense; absent precision = unsupported
  Sourced sm_count, memory_gb, memory_bandwidth_gbs, l2_mb, l3_mb, tdp_w, idle_w;
  // CPUs
  Sourced cores, threads, clock_ghz, peak_fp32_gflops;
  // The clock a calibration found this very machine sustaining, over the one its peak was derived from
  // (a VM reports its base clock and runs boosted). A property of one machine, so it lives here, not in
  // the device family's constants that every other CPU shares; absent = 1.
  Sourced clock_ratio;
  std::optional<MigTable> mig;
  // Listed when no device is named ("all"); the others (GPUs that public measurements used, kept for
  // training and comparison) are predicted when named or with "all-gpus".
  bool default_view = true;

  bool is_gpu() const { return kind == "gpu"; }
  bool supports(Precision p) const { return peak_tflops.count(p) != 0; }
  double peak(Precision p) const;  // TFLOP/s, 0 when unsupported
};

class DeviceCatalog {
 public:
  static DeviceCatalog parse(std::string_view json_text);  // throws Error naming the entry and field
  // This catalog with devices the caller describes (a JSON array of entries in the catalog's schema: a GPU
  // the catalog lacks, a machine measured in the page), each checked as a catalog entry is; an id the
  // catalog already has, or a repeated one, is refused.
  DeviceCatalog with_devices(const Json& entries) const;
  const Device& get(std::string_view id) const;            // throws Error listing known ids
  const Device* find(std::string_view id) const;
  const std::vector<Device>& devices() const { return devices_; }

 private:
  std::vector<Device> devices_;
};

}  // namespace perfcard
