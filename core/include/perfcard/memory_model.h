// Peak device memory from first principles: weights at the chosen precision, peak live activations for
// the batch, library workspace and the runtime's resident context; training adds gradients, optimizer
// state and the activations saved for the backward pass. No public source measures peak GPU memory, so
// each part is shown and the context/workspace figures carry their sources.
#pragma once

#include "perfcard/analysis.h"
#include "perfcard/device.h"
#include "perfcard/roofline.h"

namespace perfcard {

enum class Mode : std::uint8_t { Inference, Training };
Mode parse_mode(std::string_view s);

struct MemoryBreakdown {
  double weights = 0, activations = 0, workspace = 0, context = 0;
  double gradients = 0, optimizer = 0, saved_activations = 0;  // training only
  double total() const { return weights + activations + workspace + context + gradients + optimizer + saved_activations; }
};

MemoryBreakdown estimate_memory(const Model& model, const Analysis& analysis, Precision precision, Mode mode,
                                const RuntimeConstants& runtime);

}  // namespace perfcard
