// Board power while a model runs, its own model beside the latency predictors: any predictor that says how
// busy the device is (busy fraction) and how hard it is pushed (intensity) gets a power figure from it.
#pragma once

#include <optional>

#include "perfcard/device.h"

namespace perfcard {

struct PowerConstants {
  double gamma = 1;             // GPUs: power = idle + (tdp - idle) * busy * intensity^gamma
  double floor = 0;             // intensity never reads below this while a kernel runs
};

// What a prediction says about the load it puts on the device.
struct PowerLoad {
  double busy_fraction = 0;     // of the wall time the device (or the runtime's cores) computes
  double intensity = 0;         // how close the busy time runs to the roofs (GPUs)
  int threads = 0;              // CPUs: the runtime's intra-op threads, 0 = every core
};

// Watts, or nothing when the catalog lacks the device's TDP or idle power.
// GPUs follow the fitted curve above (ML.ENERGY's boards). CPUs: the package idles at idle_w and each core
// the runtime keeps busy adds its share of (TDP - idle), whatever its vector units do: gamma and floor were
// fitted on GPU boards, and no CPU power was measured to fit a curve of its own.
std::optional<double> predict_power_w(const Device& device, const PowerConstants& c, const PowerLoad& load);

// Joules per sample of a step that draws `power_w` for `latency_ms` and processes `samples`.
double energy_j_per_sample(double power_w, double latency_ms, double samples);

}  // namespace perfcard
