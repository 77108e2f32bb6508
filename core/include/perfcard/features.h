// The features the learned predictors read, computed here and nowhere else: the training tables get them
// from `perfcard features` / `perfcard eval` (features: true), the predictors from this module, so a
// formula cannot drift between training and inference.
//
// One whole-model row per (model bound to a batch, runtime, precision, device): the model's costs and op
// mix, the kernels its runtime forms, the roofline's time for it on the device and what binds, the
// device's datasheet figures, and the context (batch, threads, precision, runtime). Magnitudes are log1p;
// an unknown figure is NaN (trees send it down the split's default branch), never a made-up 0.
//
// The list is versioned: its hash (feature_schema_hash) is stored in every predictor file, and a file
// trained on another list is refused.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "perfcard/predictor.h"
#include "perfcard/roofline.h"
#include "perfcard/roofline_predictor.h"

namespace perfcard {

inline constexpr int kFeatureSchemaVersion = 1;

struct FeatureDef {
  std::string_view name;
  std::string_view meaning;
};

std::span<const FeatureDef> feature_schema();
// sha256 (hex) of "perfcard-features/<version>" and the names, one per line.
const std::string& feature_schema_hash();

// The device-independent part is computed once per prepared subject; row() adds one device.
class FeatureBuilder {
 public:
  FeatureBuilder(const PredictorSubject& subject, const KernelPlan& plan);
  std::vector<float> row(const Device& device, const DeviceQuery& query, const RooflineResult& roofline) const;

 private:
  std::vector<float> base_;
  std::string runtime_;
  Precision precision_;
};

// The prepared state of a learned correction of the roofline: the roofline's kernels and the subject's
// feature builder (the trees use it as it is; the GNN adds its graph embedding). feature_row() reuses
// its builder.
class FeaturePrepared : public RooflinePrepared {
 public:
  FeaturePrepared(PredictorSubject s, KernelPlan p) : RooflinePrepared(std::move(s), std::move(p)), features(subject, plan) {}
  FeatureBuilder features;
};

// The row of one device for a prepared subject: any predictor's state built on a roofline plan (all of
// them today), timed by `roofline`.
std::vector<float> feature_row(const Prepared& prepared, const DeviceQuery& query, const RooflinePredictor& roofline);

}  // namespace perfcard
