#include "perfcard/predict_cache.h"

#include <algorithm>
#include <string>

#include "perfcard/error.h"

namespace perfcard {

std::shared_ptr<const Analysis> PredictCache::analysis(const Model& model, const DimBindings& dims) {
  if (&model != model_) throw internal_error("a predict cache was handed another model than its own");
  auto same = [&](const Entry& e) { return e.dims.values == dims.values && e.dims.unbound_default == dims.unbound_default; };
  auto it = std::find_if(kept_.begin(), kept_.end(), same);
  if (it != kept_.end()) {
    kept_.splice(kept_.begin(), kept_, it);
    return kept_.front().analysis;
  }
  AnalyzeOptions ao;
  ao.dims = dims;
  auto made = std::make_shared<const Analysis>(analyze(model, ao));
  kept_.push_front(Entry{dims, made, {}, {}});
  if (kept_.size() > kKept) kept_.pop_back();
  return made;
}

PredictCache::Entry& PredictCache::entry_of(const Analysis& analysis, const char* what) {
  auto it = std::find_if(kept_.begin(), kept_.end(), [&](const Entry& e) { return e.analysis.get() == &analysis; });
  if (it == kept_.end())
    throw internal_error(std::string("a predict cache was asked for ") + what + " of an analysis it does not hold");
  return *it;
}

const MemoryBreakdown& PredictCache::memory(const Analysis& analysis, Precision precision, Mode mode,
                                            Optimizer optimizer, const RuntimeConstants& runtime) {
  Entry& e = entry_of(analysis, "the memory");
  const auto key = std::make_tuple(&runtime, precision, mode, optimizer);
  auto m = e.memories.find(key);
  if (m == e.memories.end())
    m = e.memories.emplace(key, estimate_memory(*model_, analysis, precision, mode, optimizer, runtime)).first;
  return m->second;
}

}  // namespace perfcard
