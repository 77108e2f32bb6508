// Peak device memory from first principles, for one of three protocols: `inference` (no_grad /
// inference_mode), `inference-grad` (a forward with autograd on, as people often run inference: what the
// backward would need stays alive until the output is dropped) and `training` (forward, backward and an
// optimizer step; the optimizer's state already exists). Parts: weights at the chosen precision, the
// activations (and gradients) live at the peak, library workspace and the runtime's resident context.
// What autograd keeps is autograd_memory.h's; scripts/measure/autograd_memory.py measures it.
#pragma once

#include <string>

#include "perfcard/analysis.h"
#include "perfcard/device.h"
#include "perfcard/protocol.h"
#include "perfcard/roofline.h"

namespace perfcard {

struct MemoryBreakdown {
  double weights = 0, activations = 0, workspace = 0, context = 0;
  double gradients = 0, optimizer = 0;  // training: weight gradients live at the peak, optimizer state
  double optimizer_update = 0;          // training: the update's temporaries, when the update is the peak
  double saved_activations = 0;         // inference-grad and training: kept for backward (part of activations)
  // PyTorch's caching allocator: what its segments hold beyond the tensors at the peak (documented
  // segment sizes packed full: a lower bound, not measured yet; caching_allocator.h)
  double allocator = 0;
  bool complete = true;                 // false: some sizes unknown, or control-flow bodies' saved tensors
  double total() const {
    return weights + activations + workspace + context + gradients + optimizer + optimizer_update + allocator;
  }
};

MemoryBreakdown estimate_memory(const Model& model, const Analysis& analysis, Precision precision, Mode mode,
                                Optimizer optimizer, const RuntimeConstants& runtime);

}  // namespace perfcard
