// What predict() may keep between calls on one open model: each batch's analysis (shape inference, costs,
// liveness) and memory estimate. They depend on the model, its bound dims and (memory) the runtime,
// precision and protocol, never on the devices, the predictor or the settings a page changes most, yet
// they were a fifth of a re-prediction's time (ResNet-50, 16 GPUs x 8 batches). The page and the JS API
// keep one per open model; predict() without one analyzes every batch afresh, as the CLI's single run does.
// Not thread-safe: one caller at a time, as one page worker or one `perfcard eval` loop.
#pragma once

#include <cstddef>
#include <list>
#include <map>
#include <memory>
#include <tuple>

#include "perfcard/analysis.h"
#include "perfcard/graph.h"
#include "perfcard/memory_model.h"
#include "perfcard/protocol.h"
#include "perfcard/roofline.h"

namespace perfcard {

class PredictCache {
 public:
  // Entries for one model only (the one it was created for): another model is refused (Error, internal).
  explicit PredictCache(const Model& model) : model_(&model) {}
  PredictCache(const PredictCache&) = delete;
  PredictCache& operator=(const PredictCache&) = delete;

  // The analysis of the model with `dims` bound (node costs kept), made on a miss.
  std::shared_ptr<const Analysis> analysis(const Model& model, const DimBindings& dims);
  // The memory estimate for an analysis this cache returned, made on a miss. `runtime` must outlive the
  // cache (a RooflineConstants' entries do).
  const MemoryBreakdown& memory(const Analysis& analysis, Precision precision, Mode mode, Optimizer optimizer,
                                const RuntimeConstants& runtime);

 private:
  struct Entry {
    DimBindings dims;
    std::shared_ptr<const Analysis> analysis;
    std::map<std::tuple<const RuntimeConstants*, Precision, Mode, Optimizer>, MemoryBreakdown> memories;
  };
  // A sweep's 8 batches and the table's, with room for a second set of dims (sequence length).
  static constexpr std::size_t kKept = 12;
  const Model* model_;
  std::list<Entry> kept_;  // most recently used first
};

}  // namespace perfcard
