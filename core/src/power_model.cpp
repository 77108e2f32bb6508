#include "perfcard/power_model.h"

#include <algorithm>
#include <cmath>

namespace perfcard {

std::optional<double> predict_power_w(const Device& d, const PowerConstants& c, const PowerLoad& load) {
  if (!d.tdp_w.present || !d.idle_w.present) return std::nullopt;
  const double busy = std::clamp(load.busy_fraction, 0.0, 1.0);
  const double dynamic = d.tdp_w.value - d.idle_w.value;
  if (!d.is_gpu()) {
    const double cores = d.cores.present && d.cores.value > 0 ? d.cores.value : 0;
    const double share = load.threads > 0 && cores > 0 ? std::min(double(load.threads), cores) / cores : 1.0;
    return d.idle_w.value + dynamic * share * busy;
  }
  const double push = std::clamp(std::max(c.floor, load.intensity), 0.0, 1.0);
  return d.idle_w.value + dynamic * busy * std::pow(push, c.gamma);
}

double energy_j_per_sample(double power_w, double latency_ms, double samples) {
  return power_w * latency_ms / 1e3 / samples;
}

}  // namespace perfcard
