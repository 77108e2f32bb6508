#include "perfcard/power_model.h"

#include <algorithm>
#include <cmath>

namespace perfcard {

std::optional<double> predict_power_w(const Device& d, const PowerConstants& c, double busy_fraction,
                                      double intensity) {
  if (!d.tdp_w.present || !d.idle_w.present) return std::nullopt;
  const double busy = std::clamp(busy_fraction, 0.0, 1.0);
  const double push = std::clamp(std::max(c.floor, intensity), 0.0, 1.0);
  return d.idle_w.value + (d.tdp_w.value - d.idle_w.value) * busy * std::pow(push, c.gamma);
}

double energy_j_per_sample(double power_w, double latency_ms, double samples) {
  return power_w * latency_ms / 1e3 / samples;
}

}  // namespace perfcard
