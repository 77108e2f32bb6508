// Board power while a model runs, its own model beside the latency predictors: any predictor that says how
// busy the device is (busy fraction) and how hard it is pushed (intensity) gets a power figure from it.
#pragma once

#include <optional>

#include "perfcard/device.h"

namespace perfcard {

struct PowerConstants {
  double gamma = 1;             // power = idle + (tdp - idle) * busy * intensity^gamma
  double floor = 0;             // intensity never reads below this while a kernel runs
};

// Watts, or nothing when the catalog lacks the device's TDP or idle power.
std::optional<double> predict_power_w(const Device& device, const PowerConstants& c, double busy_fraction,
                                      double intensity);

// Joules per sample of a step that draws `power_w` for `latency_ms` and processes `samples`.
double energy_j_per_sample(double power_w, double latency_ms, double samples);

}  // namespace perfcard
