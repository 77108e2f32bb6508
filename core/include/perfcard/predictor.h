// The interface every latency predictor implements: features in (the analysis of a model bound to one
// batch), one device's prediction with its uncertainty out. The roofline model is the first; learned
// predictors (GNN, sequence transformer, trees) slot in behind the same interface.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "perfcard/analysis.h"
#include "perfcard/device.h"
#include "perfcard/roofline.h"

namespace perfcard {

struct PredictorInput {
  const Model& model;
  const Analysis& analysis;    // bound to the batch being predicted
  const Device& device;
  Precision precision;
  std::string runtime;
  double compute_scale = 1;    // MIG slice of compute
  double bandwidth_scale = 1;  // MIG slice of bandwidth
  bool keep_kernels = false;
  // Optional: the kernels already formed for this analysis, runtime and precision (predict() forms them
  // once per batch and shares them across devices and MIG slices). A predictor may ignore it.
  const KernelPlan* plan = nullptr;
  int threads = 0;             // CPUs: runtime worker threads, 0 = every core (see RooflineOptions)
};

struct PredictorOutput {
  double latency_ms = 0;
  double uncertainty = 0;      // relative (0.2 = +-20%), from the predictor's measured held-out error
  double busy_fraction = 0;    // device busy time / latency
  double intensity = 0;        // how hard the busy device is pushed, 0..1
  std::vector<KernelTime> kernels;
  std::vector<std::string> warnings;
};

class Predictor {
 public:
  virtual ~Predictor() = default;
  virtual std::string name() const = 0;
  virtual std::string version() const = 0;
  virtual PredictorOutput predict(const PredictorInput& in) const = 0;
};

class RooflinePredictor final : public Predictor {
 public:
  explicit RooflinePredictor(RooflineConstants c) : c_(std::move(c)) {}
  std::string name() const override { return "roofline"; }
  std::string version() const override { return c_.version; }
  PredictorOutput predict(const PredictorInput& in) const override;
  const RooflineConstants& constants() const { return c_; }

 private:
  RooflineConstants c_;
};

}  // namespace perfcard
