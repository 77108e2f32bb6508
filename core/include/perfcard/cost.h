// Per-node costs: MACs, FLOPs, bytes moved, parameters; and model-level totals.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "perfcard/graph.h"
#include "perfcard/op_registry.h"
#include "perfcard/shape_inference.h"

namespace perfcard {

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
  bool subgraph_once = false; // control flow whose bodies were counted once
};

// What cost rules see: the node with its inferred input and output types.
class CostContext {
 public:
  CostContext(const Graph& g, const Node& n, const std::vector<ValueShape>& values) : g_(g), n_(n), v_(values) {}
  const Node& node() const { return n_; }
  std::size_t num_inputs() const { return n_.inputs.size(); }
  bool has_input(std::size_t i) const { return i < n_.inputs.size() && n_.inputs[i] >= 0; }
  // An omitted or absent input/output reads as an unknown shape.
  const ValueShape& input(std::size_t i) const { return has_input(i) ? v_[std::size_t(n_.inputs[i])] : none(); }
  const ValueShape& output(std::size_t i) const { return has_output(i) ? v_[std::size_t(n_.outputs[i])] : none(); }
  bool has_output(std::size_t i) const { return i < n_.outputs.size() && n_.outputs[i] >= 0; }
  double output_elements(std::size_t i = 0) const { return has_output(i) ? double(output(i).elements()) : 0; }
  double input_elements(std::size_t i = 0) const { return has_input(i) ? double(input(i).elements()) : 0; }

 private:
  static const ValueShape& none() { static const ValueShape s; return s; }
  const Graph& g_;
  const Node& n_;
  const std::vector<ValueShape>& v_;
};

struct GraphCosts {
  std::vector<NodeCost> nodes;                       // indexed like Graph::nodes
  std::vector<std::vector<GraphCosts>> subgraphs;    // per node, per graph attribute
};

GraphCosts compute_costs(const Graph& graph, const GraphShapes& shapes);

}  // namespace perfcard
