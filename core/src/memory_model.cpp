#include "perfcard/memory_model.h"

#include <algorithm>

#include "perfcard/autograd_memory.h"
#include "perfcard/error.h"
#include "perfcard/liveness.h"

namespace perfcard {

namespace {

// conv (may be null): of the total, the bytes convolutions read as their weights.
void weight_bytes(const Graph& g, int bits, double& total, double& param_elems, double* conv = nullptr) {
  for (const auto& t : g.initializers) {
    double n = double(t.num_elements());
    const double b = dtype_is_float(t.dtype) ? n * bits / 8.0 : n * dtype_bits(t.dtype) / 8.0;
    total += b;
    if (dtype_is_float(t.dtype)) param_elems += n;
    if (!conv) continue;
    const auto v = g.value_index.find(t.name);
    if (v == g.value_index.end()) continue;
    for (int u : g.values[std::size_t(v->second)].consumers) {
      const Node& node = g.nodes[std::size_t(u)];
      if ((node.op_type == "Conv" || node.op_type == "ConvTranspose") && node.inputs.size() > 1 && node.inputs[1] == v->second) {
        *conv += b;
        break;
      }
    }
  }
  for (const auto& n : g.nodes)
    for (const auto& a : n.attributes)
      for (const auto& sub : a.graphs) weight_bytes(sub, bits, total, param_elems, conv);
}

}  // namespace

MemoryBreakdown estimate_memory(const Model& model, const Analysis& a, Precision p, Mode mode, Optimizer optimizer,
                                const RuntimeConstants& rt) {
  MemoryBreakdown m;
  const int bits = precision_bits(p);
  double params = 0;
  m.workspace = rt.workspace_mb * 1024 * 1024;
  m.context = rt.context_mb * 1024 * 1024;
  const double overhead = 1 + rt.allocator_overhead;
  if (mode == Mode::Inference) {
    double conv = 0;
    weight_bytes(model.graph, bits, m.weights, params, &conv);
    m.weights = (m.weights - conv) * rt.weight_copies + conv * rt.conv_weight_copies;
    const FusedOps fused = eager_ops(model.graph, a.costs, rt.module_frames);
    LivenessResult live = peak_live_memory(model.graph, a.shapes.graph, bits, /*inputs_held=*/true, &fused, rt.module_frames);
    m.activations = double(live.peak_bytes) * overhead;
    m.complete = live.complete;
    return m;
  }
  // Gradients need fp32 weights: below 32 bits this is mixed precision (autocast), which keeps the fp32
  // weights and, while the step runs, their low-precision copies.
  const bool mixed = bits < 32;
  weight_bytes(model.graph, mixed ? 32 : bits, m.weights, params);
  if (mixed) {
    double low = 0, ignored = 0;
    weight_bytes(model.graph, bits, low, ignored);
    m.weights += low;
  }
  const double grad_bytes = mixed ? 4.0 : bits / 8.0;
  const AutogradMemory ag = autograd_memory(model.graph, a.shapes.graph, a.costs, bits, grad_bytes, rt.module_frames);
  m.saved_activations = ag.saved_bytes;
  m.complete = ag.complete;
  if (mode == Mode::InferenceGrad) {
    m.activations = ag.inference_grad_peak * overhead;
    return m;
  }
  const double state_per_element = optimizer == Optimizer::Adam ? 8 : optimizer == Optimizer::Sgd ? 4 : 0;
  m.optimizer = params * state_per_element;
  // The step's peak is the forward's end, a moment of the backward, or the optimizer's update: every
  // gradient alive, plus the update's temporaries. PyTorch's default on CUDA is the multi-tensor
  // (foreach) path: Adam forms sqrt(v) for every weight at once, one fp32 copy of the weights (PyTorch
  // 2.x divides and adds eps in place; 1.13 kept a second copy, measured); SGD's momentum is updated in
  // place.
  const double all_grads = ag.weight_grad_elements * grad_bytes;
  const double temporaries = optimizer == Optimizer::Adam ? params * 4 : 0;
  const double io = double(a.liveness.input_bytes);
  double acts = ag.inference_grad_peak, grads = 0;
  if (ag.backward_peak > std::max(acts, all_grads + temporaries)) {
    acts = ag.backward_peak - ag.backward_peak_weight_grads;
    grads = ag.backward_peak_weight_grads;
  } else if (all_grads + temporaries > acts) {
    acts = io;
    grads = all_grads;
    m.optimizer_update = temporaries;
  }
  m.activations = acts * overhead;
  m.gradients = grads;
  return m;
}

}  // namespace perfcard
