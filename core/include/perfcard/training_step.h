// The kernels of one training step, for the roofline to time: the forward as the runtime plans it, then the
// backward pass eager autograd runs (per forward op, in reverse: the gradients of a matrix product's
// operands as two matrix products, a pointwise op's gradient as one pointwise kernel reading what the op
// kept, a normalization's as two passes, the sums where a value feeds several ops), the casts that
// autocast makes of fp32 weights under mixed precision, and the optimizer's update as PyTorch's
// multi-tensor (foreach) passes over the weights. What each op keeps is the registry's `Saved` column, the
// one rule the memory model uses too; which values need a gradient is autograd_memory.h's.
// docs/training-time.md says what is modelled and how it compares with public training measurements.
#pragma once

#include <string_view>

#include "perfcard/protocol.h"
#include "perfcard/roofline.h"

namespace perfcard {

// plan_kernels() for the forward, with the backward and the update appended. Kernels of control-flow
// bodies and recurrent time steps get twice their forward's work as their backward (counted in
// KernelPlan::approximated, which the timing reports).
KernelPlan plan_training_step(const Model& model, const Analysis& analysis, const RooflineConstants& constants,
                              std::string_view runtime, Precision precision, Optimizer optimizer);

}  // namespace perfcard
