#include "perfcard/memory_model.h"

#include <algorithm>

#include "perfcard/autograd_memory.h"
#include "perfcard/caching_allocator.h"
#include "perfcard/error.h"
#include "perfcard/liveness.h"

namespace perfcard {

namespace {

// Every stored tensor of the graph and of its control-flow bodies, with the graph that holds it.
template <class F>
void for_each_initializer(const Graph& g, F&& f) {
  for (const auto& t : g.initializers) f(g, t);
  for (const auto& n : g.nodes)
    for (const auto& a : n.attributes)
      for (const auto& sub : a.graphs) for_each_initializer(sub, f);
}

// conv (may be null): of the total, the bytes convolutions read as their weights.
void weight_bytes(const Graph& graph, int bits, double& total, double& param_elems, double* conv = nullptr) {
  for_each_initializer(graph, [&](const Graph& g, const TensorMeta& t) {
    double n = double(t.num_elements());
    const double b = dtype_is_float(t.dtype) ? n * bits / 8.0 : n * dtype_bits(t.dtype) / 8.0;
    total += b;
    if (dtype_is_float(t.dtype)) param_elems += n;
    if (!conv) return;
    const int v = g.find(t.name);
    if (v < 0) return;
    for (int u : g.values[std::size_t(v)].consumers) {
      const Node& node = g.nodes[std::size_t(u)];
      if ((node.op_type == "Conv" || node.op_type == "ConvTranspose") && node.inputs().size() > 1 && node.inputs()[1] == v) {
        *conv += b;
        break;
      }
    }
  });
}

// The float weights as the allocator holds them, one tensor each at `bits` (the exporter's integer shape
// constants are no tensors on the device under eager).
void pack_weights(const Graph& graph, int bits, SegmentPacking& packing) {
  for_each_initializer(graph, [&](const Graph&, const TensorMeta& t) {
    if (dtype_is_float(t.dtype)) packing.add(double(t.num_elements()) * bits / 8.0);
  });
}

// `copies` fp32 tensors per trainable weight (gradients, optimizer state); the weights' elements are the
// autograd walk's (AutogradMemory::weight_elements).
void pack_trainable(const std::vector<double>& weight_elements, int copies, SegmentPacking& packing) {
  for (double n : weight_elements)
    for (int k = 0; k < copies; ++k) packing.add(n * 4);
}

double slack(const SegmentPacking& p) { return std::max(0.0, p.reserved() - p.allocated()); }

}  // namespace

MemoryBreakdown estimate_memory(const Model& model, const Analysis& a, Precision p, Mode mode, Optimizer optimizer,
                                const RuntimeConstants& rt) {
  require_node_costs(model, a);
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
    if (rt.caching_allocator) {
      SegmentPacking w;
      pack_weights(model.graph, bits, w);
      m.allocator = slack(w) + std::max(0.0, live.peak_reserved - double(live.peak_bytes));
    }
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
  // The weights as allocated: fp32, and under mixed precision each one's low-precision copy too.
  SegmentPacking weights;
  if (rt.caching_allocator) {
    pack_weights(model.graph, mixed ? 32 : bits, weights);
    if (mixed) pack_weights(model.graph, bits, weights);
  }
  if (mode == Mode::InferenceGrad) {
    m.activations = ag.inference_grad_peak * overhead;
    if (rt.caching_allocator) m.allocator = slack(weights) + std::max(0.0, ag.inference_grad_reserved - ag.inference_grad_peak);
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
  // what the peak's own tensors leave unused in the allocator's segments
  double peak_slack = std::max(0.0, ag.inference_grad_reserved - ag.inference_grad_peak);
  if (ag.backward_peak > std::max(acts, all_grads + temporaries)) {
    acts = ag.backward_peak - ag.backward_peak_weight_grads;
    grads = ag.backward_peak_weight_grads;
    peak_slack = std::max(0.0, ag.backward_reserved - ag.backward_peak);
  } else if (all_grads + temporaries > acts) {
    acts = io;
    grads = all_grads;
    m.optimizer_update = temporaries;
    if (rt.caching_allocator) {
      SegmentPacking update;  // every gradient, and Adam's sqrt(v) beside it
      pack_trainable(ag.weight_elements, optimizer == Optimizer::Adam ? 2 : 1, update);
      peak_slack = slack(update);
    }
  }
  m.activations = acts * overhead;
  m.gradients = grads;
  if (rt.caching_allocator) {
    SegmentPacking state;
    pack_trainable(ag.weight_elements, optimizer == Optimizer::Adam ? 2 : optimizer == Optimizer::Sgd ? 1 : 0, state);
    m.allocator = slack(weights) + slack(state) + peak_slack;
  }
  return m;
}

}  // namespace perfcard
