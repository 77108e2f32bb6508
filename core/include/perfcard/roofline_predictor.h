// The roofline behind the Predictor interface. prepare() forms the runtime's kernels once (they do not
// depend on the device); predict() times them on one device or MIG slice. Learned predictors correct this
// one, so they reuse its prepared plan and its timing (time()).
#pragma once

#include "perfcard/predictor.h"
#include "perfcard/roofline.h"

namespace perfcard {

class RooflinePrepared : public Prepared {
 public:
  RooflinePrepared(PredictorSubject s, KernelPlan p) : Prepared(std::move(s)), plan(std::move(p)) {}
  KernelPlan plan;
};

class RooflinePredictor final : public Predictor {
 public:
  explicit RooflinePredictor(RooflineConstants c) : c_(std::move(c)) {}
  std::string name() const override { return "roofline"; }
  std::string version() const override { return c_.version; }
  std::unique_ptr<Prepared> prepare(const PredictorSubject& subject) const override;
  PredictorOutput predict(const Prepared& prepared, const DeviceQuery& query) const override;

  RooflineResult time(const RooflinePrepared& prepared, const DeviceQuery& query) const;
  // predict()'s row from a time() of the same state and device.
  PredictorOutput output(RooflineResult r, const PredictorSubject& subject, const Device& device) const;
  // The family's held-out relative error under `runtime` (RooflineConstants::runtime_accuracy says how a
  // runtime with its own measured error changes it); 0 and a warning when none is recorded.
  double uncertainty(const Device& device, std::string_view runtime, std::vector<std::string>* warnings) const;
  // A training step's: the family's measured error, else the pooled one (said in `warnings`).
  double training_uncertainty(const Device& device, std::vector<std::string>& warnings) const;
  const RooflineConstants& constants() const { return c_; }

 private:
  RooflineConstants c_;
};

// A host-bound row of any predictor (host_bound()) carries at least the error measured on host-bound rows of
// its runtime (RooflineConstants::host_bound_accuracy): the host's time per kernel differs between machines,
// and no predictor knows the caller's host. Widens `out`'s uncertainty, and a calibrated band to at least
// that. Training steps keep their own figure. Applied where rows leave the core (predict, perfcard eval).
void widen_for_host(PredictorOutput& out, const RooflineConstants& constants, std::string_view runtime, Mode mode);

// The prepared state as a roofline plan, or Error(internal) when another predictor made it.
const RooflinePrepared& as_roofline_prepared(const Prepared& p);

}  // namespace perfcard
