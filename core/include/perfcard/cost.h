// Per-node costs: MACs, FLOPs, bytes moved, parameters; and model-level totals.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "perfcard/graph.h"
#include "perfcard/node_bodies.h"
#include "perfcard/op_registry.h"
#include "perfcard/shape_inference.h"

namespace perfcard {

// A recurrent op as runtimes run it (cuDNN, onnxruntime): one GEMM projects every time step's input (its
// parallel part), then `count` step kernels of this size follow one after another. Elements are those a
// step moves, at the model's dtypes.
struct SequentialSteps {
  double proj_m = 0, proj_n = 0, proj_k = 0;  // the projection's matrix product
  double count = 0;
  double flops = 0;
  double elements = 0;
  double invariant_elements = 0;  // of elements: read alike by every step (the recurrent weights)
  double gemm_m = 0, gemm_n = 0, gemm_k = 0;  // the step's matrix product
};

struct NodeCost {
  double macs = 0;            // multiply-accumulates of conv/matmul-like work
  double flops = 0;           // all floating/integer arithmetic, 2 per MAC
  double bytes_read = 0;      // inputs, weights included, at their dtypes
  double bytes_written = 0;   // outputs
  std::uint64_t params = 0;   // weight elements first used by this node
  double activation_elems = 0;  // output elements of conv/linear-like nodes (timm's "activations")
  OpClass cls = OpClass::Other;
  bool known = true;          // false: no rule, or unknown shapes; the figures are a lower bound
  bool folded = false;        // every input is constant: a runtime folds it at load time
  // Ops that read only the indexed part of one input (a Gather from an embedding table, a Slice of a
  // constant table): that input moves `partial_elements` of its elements, not all of them.
  int partial_input = -1;
  double partial_elements = 0;
  // Recurrent ops only (a pointer: the other nodes of a million-node graph should not carry it).
  std::shared_ptr<const SequentialSteps> steps;
  // Control flow: the bodies that run, run `trips` times (Loop trip count, Scan length, 1 for If).
  // trips_known false: the count is not known before running; bodies are counted once (per iteration).
  double trips = 1;
  bool trips_known = true;
  bool has_bodies = false;    // control flow with graph attributes
};

// Whether a constant read by `n` at `input` is a parameter: BatchNormalization's running mean and
// variance are buffers (as torchvision counts), everything else a weight.
bool counts_as_param(const Node& n, std::size_t input);

// Elements of input `i` (shape `v`) that the node reads: all of them unless the cost rule says otherwise.
inline double read_elements(const NodeCost& c, std::size_t i, const ValueShape& v) {
  const double all = double(v.elements());
  return int(i) == c.partial_input && c.partial_elements < all ? c.partial_elements : all;
}

// What cost rules see: the node with its inferred input and output types.
class CostContext {
 public:
  CostContext(const Node& n, const std::vector<ValueShape>& values) : n_(n), v_(values) {}
  const Node& node() const { return n_; }
  std::size_t num_inputs() const { return n_.inputs().size(); }
  bool has_input(std::size_t i) const { return i < n_.inputs().size() && n_.inputs()[i] >= 0; }
  // An omitted or absent input/output reads as an unknown shape.
  const ValueShape& input(std::size_t i) const { return has_input(i) ? v_[std::size_t(n_.inputs()[i])] : none(); }
  const ValueShape& output(std::size_t i) const { return has_output(i) ? v_[std::size_t(n_.outputs()[i])] : none(); }
  bool has_output(std::size_t i) const { return i < n_.outputs().size() && n_.outputs()[i] >= 0; }
  double output_elements(std::size_t i = 0) const { return has_output(i) ? double(output(i).elements()) : 0; }
  double input_elements(std::size_t i = 0) const { return has_input(i) ? double(input(i).elements()) : 0; }

 private:
  static const ValueShape& none() { static const ValueShape s; return s; }
  const Node& n_;
  const std::vector<ValueShape>& v_;
};

struct GraphCosts {
  std::vector<NodeCost> nodes;                       // indexed like Graph::nodes
  NodeBodies<GraphCosts> subgraphs;                  // per node, per graph attribute
};

GraphCosts compute_costs(const Graph& graph, const GraphShapes& shapes);

// The same costs one node at a time, for walks that need no table of them (a million-node graph's costs
// are 100 MB). Call next() for the nodes in graph.order: a weight read by two nodes is counted at the first.
class NodeCoster {
 public:
  NodeCoster(const Graph& graph, const GraphShapes& shapes);
  // `bodies` receives the costs of the node's graph attributes (one per attribute, in order).
  NodeCost next(int node, std::vector<GraphCosts>& bodies);

 private:
  const Graph& g_;
  const GraphShapes& s_;
  std::vector<bool> seen_weight_;  // by value: a weight shared by two nodes counts once
};

// The graph attributes of a control-flow node that run: Loop's and Scan's body; for If the costlier of
// then_branch and else_branch that shape inference kept (it drops the branch a known condition never
// takes). Graph attributes the op does not define never run. `shapes` and `costs` are the node's per-body
// results; `index` is the body's position among the node's graphs (attribute order), which indexes them.
struct BodyThatRuns {
  const Graph* body;
  std::size_t index;
};
std::vector<BodyThatRuns> bodies_that_run(const Node& n, const std::vector<GraphShapes>& shapes,
                                          const std::vector<GraphCosts>& costs);

}  // namespace perfcard
