// What predict() may keep between calls on one open model: each batch's analysis (shape inference, costs,
// liveness) and memory estimate. They depend on the model, its bound dims and (memory) the runtime,
// precision and protocol, never on the devices, the predictor or the settings a page changes most, yet
// they were a fifth of a re-prediction's time (ResNet-50, 16 GPUs x 8 batches). Likewise the roofline's
// time of each MIG slice, which depends on the device and the slice but not on the predictor, the target
// or the carbon settings: the default view's slices cost three times its rows' roofline. The page and the
// JS API keep one per open model; predict() without one analyzes every batch afresh, as the CLI's single
// run does.
// Not thread-safe: one caller at a time, as one page worker or one `perfcard eval` loop.
#pragma once

#include <cstddef>
#include <list>
#include <map>
#include <memory>
#include <tuple>

#include "perfcard/analysis.h"
#include "perfcard/device.h"
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

  // A MIG slice as the roofline times it: of `device`, which must outlive the cache (a catalog's entry;
  // not a device made for one call, as --extra-devices makes them), `compute_slices` and `memory_slices`
  // of the device's, the host's time per kernel `host_us` (< 0: the runtime's own).
  using SliceKey = std::tuple<const RuntimeConstants*, Precision, Mode, Optimizer, const Device*, int, int, double>;
  struct Slice {
    const RuntimeConstants* runtime;
    Precision precision;
    Mode mode;
    Optimizer optimizer;
    const Device* device;
    int compute_slices, memory_slices;
    double host_us;
    SliceKey key() const {
      return {runtime, precision, mode, optimizer, device, compute_slices, memory_slices, host_us};
    }
  };
  // The slice's latency for an analysis this cache returned: `time` on a miss.
  template <class Time>
  double slice_latency(const Analysis& analysis, const Slice& slice, Time&& time) {
    Entry& e = entry_of(analysis, "the time of a MIG slice");
    auto it = e.slices.find(slice.key());
    if (it != e.slices.end()) return it->second;
    // Each distinct host time the caller states makes a set of its own: bounded, as the entries are.
    if (e.slices.size() >= kSlicesKept) e.slices.clear();
    return e.slices.emplace(slice.key(), time()).first->second;
  }

 private:
  struct Entry {
    DimBindings dims;
    std::shared_ptr<const Analysis> analysis;
    std::map<std::tuple<const RuntimeConstants*, Precision, Mode, Optimizer>, MemoryBreakdown> memories;
    std::map<SliceKey, double> slices;
  };
  Entry& entry_of(const Analysis& analysis, const char* what);
  static constexpr std::size_t kSlicesKept = 4096;
  // A sweep's 8 batches and the table's, with room for a second set of dims (sequence length).
  static constexpr std::size_t kKept = 12;
  const Model* model_;
  std::list<Entry> kept_;  // most recently used first
};

}  // namespace perfcard
