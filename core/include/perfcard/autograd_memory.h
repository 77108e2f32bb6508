// What eager PyTorch holds while it runs a model with autograd on: the tensors saved for the backward pass
// (per op kind, from the registry's `Saved` rule, with the exporter's decompositions of eager ops taken
// back), the peak of a forward that keeps them (inference with gradients on), and the peak of a training
// step's backward, where saved tensors are released and gradients appear in reverse order. Measured
// against PyTorch itself by scripts/measure/autograd_memory.py; docs/memory.md.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "perfcard/cost.h"
#include "perfcard/graph.h"
#include "perfcard/liveness.h"
#include "perfcard/shape_inference.h"

namespace perfcard {

struct AutogradMemory {
  double saved_bytes = 0;           // activations (and indices) kept for backward, unique buffers, inputs included
  double inference_grad_peak = 0;   // live during a forward with autograd on (saved kept to the end), inputs included
  double backward_peak = 0;         // live during the backward: saved not yet released, activation and weight
                                    // gradients; inputs included, weights and optimizer state not
  double backward_peak_weight_grads = 0;  // of backward_peak: the weights' gradients at that moment
  double weight_grad_elements = 0;  // every trainable weight element (its gradient exists after the backward)
  std::vector<double> weight_elements;  // each trainable weight's elements (its gradient and optimizer state)
  // What PyTorch's caching allocator reserves for the tensors alive at each peak (caching_allocator.h)
  double inference_grad_reserved = 0;
  double backward_reserved = 0;
  int eager_ops_taken_back = 0;     // exporter decompositions counted as the one eager op (GELU, LayerNorm, SiLU, hardswish)
  bool complete = true;             // false: unknown sizes, or control-flow bodies (not counted)
};

// What a training step computes gradients for: trainable weights (float initializers of more than one
// element read as parameters; BatchNorm's running statistics are buffers) and every float value computed
// from them. Graph inputs, integer tensors and exported Python scalars need none.
struct GradientFlags {
  std::vector<bool> grad;       // by value
  std::vector<bool> trainable;  // by value: the weights themselves
};
GradientFlags gradient_flags(const Graph& graph, const GraphShapes& shapes, const GraphCosts& costs);

// The ops that read a weight, through what the exporter computed from it alone (a tied head reads the
// embedding through a folded Transpose; eager reads the weight itself there): how many distinct ops, and
// the first and last of their steps (-1 when none).
struct WeightReaders {
  int first = -1, last = -1, ops = 0;
};
class ReadersThroughFolds {
 public:
  ReadersThroughFolds(const Graph& g, const GraphCosts& c, const std::vector<int>& step_of)
      : g_(g), c_(c), step_of_(step_of) {}
  WeightReaders of(int value) const;

 private:
  const Graph& g_;
  const GraphCosts& c_;
  const std::vector<int>& step_of_;
  mutable std::unordered_map<int, WeightReaders> memo_;
  static constexpr int kMaxFoldDepth = 256;
  void read(int node, int depth, WeightReaders& r) const;
  const WeightReaders& folded(int node, int depth) const;
};

// The exporter's decompositions that eager runs as one op (GELU, LayerNorm, SiLU, hardswish): their inner
// values (the Erf of a GELU, the centred input of a LayerNorm) are never tensors of their own. `eager`:
// the runtime runs the model's Python, which never makes what the exporter computed from weights alone.
FusedOps eager_ops(const Graph& graph, const GraphCosts& costs, bool eager = false);

// `float_bits`: the width activations are kept at (the run's precision); `weight_grad_bytes`: bytes of a
// weight's gradient per element (4: fp32 weights, mixed precision's master weights included).
// `module_frames`: eager's Python frames hold a module's inputs until it returns (liveness.h), in the forward.
AutogradMemory autograd_memory(const Graph& graph, const GraphShapes& shapes, const GraphCosts& costs, int float_bits,
                               double weight_grad_bytes, bool module_frames = false);

}  // namespace perfcard
