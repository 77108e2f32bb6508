// Peak live activation memory over the execution order, control-flow bodies included. View ops (Reshape, Squeeze, ...) alias their
// input, as in eager runtimes, so they extend a buffer's life instead of allocating a new one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "perfcard/graph.h"
#include "perfcard/shape_inference.h"

namespace perfcard {

struct LivenessResult {
  std::uint64_t peak_bytes = 0;     // activations alive at once, graph inputs and outputs included
  int peak_step = -1;               // index into Graph::order
  std::uint64_t input_bytes = 0;
  std::uint64_t output_bytes = 0;
  bool complete = true;             // false when some activation's size is unknown
  bool saturated = false;           // a figure passed 2^64 bytes and stopped there
  double peak_reserved = 0;         // what PyTorch's caching allocator reserves for the buffers alive at the
                                    // peak, segments packed full (caching_allocator.h)
};

// Nodes a runtime runs as one op (an exporter's decomposition of one eager op, autograd_memory.h): values
// made inside never become buffers, and what the members read stays alive until the op's last member.
// Under eager, values the exporter computed from weights alone are no buffers either (eager_ops).
struct FusedOps {
  std::vector<bool> internal;    // by value: no buffer at run time
  std::vector<int> last_member;  // by node: the op's last node, or -1 outside such ops
};

// Where each value's bytes live and for how long, over Graph::order. Views share their input's buffer
// (`owner`); a buffer lives from the step that makes it (graph inputs: step 0) to the last step that
// reads it through any of its views (graph outputs: the last step). first/last are -1 for values that are
// not buffers of their own (views, initializers, outer-scope values).
// `held`: how long the forward keeps the buffer. With `module_frames` (eager PyTorch), a tensor passed into
// a module stays referenced by the caller's Python frame until that module returns, past its last reader
// inside: the exporter's node names carry the module scopes ("/layer1/layer1.0/conv1/Conv"), and a value
// read inside a module it was made outside of is held to the module's last node. Else held = last, and
// `held_later` stays empty (a million-node graph would feel a copy of `last`).
struct BufferIntervals {
  std::vector<int> owner;    // by value
  std::vector<int> first, last;  // by value
  std::vector<int> held_later;  // by value, only with module frames: last, or later where a caller holds it
  std::vector<int> step_of;  // by node
  bool is_buffer(std::size_t v) const { return first[v] >= 0; }
  int held(std::size_t v) const { return held_later.empty() ? last[v] : held_later[v]; }
};
BufferIntervals buffer_intervals(const Graph& graph, const FusedOps* fused = nullptr, bool module_frames = false);

// float_bits > 0 counts floating tensors at that width (the precision a predictor runs the model at).
// inputs_held: the caller owns the inputs for the whole run (as with PyTorch and onnxruntime); false
// follows the graph alone, where an input dies after its last reader (the learned predictors' feature).
// fused (may be null): ops the runtime runs as one (their inner values are no buffers). module_frames:
// eager PyTorch's Python frames hold a module's inputs until it returns (BufferIntervals::held).
LivenessResult peak_live_memory(const Graph& graph, const GraphShapes& shapes, int float_bits = 0,
                                bool inputs_held = false, const FusedOps* fused = nullptr, bool module_frames = false);

}  // namespace perfcard
