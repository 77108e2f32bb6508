// The op registry: one entry per ONNX op type, holding its shape rule, its cost rule and the per-element
// FLOP constant that the cost rule uses. Everything op-specific lives behind this table.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "perfcard/shape_inference.h"

namespace perfcard {

class ShapeContext;
class CostContext;
struct NodeCost;

// How a node turns into work on a device. The predictors key on this.
enum class OpClass : std::uint8_t {
  Conv,          // convolutions (MACs-dominated)
  MatMul,        // MatMul, Gemm, Einsum
  Elementwise,   // pointwise maths, activations, comparisons, casts
  Reduction,     // reductions, ArgMax, TopK
  Normalization, // BatchNorm, LayerNorm, GroupNorm, ...
  Softmax,
  Pooling,
  DataMovement,  // copies: Concat, Transpose, Gather, Slice, Pad, Resize, ...
  View,          // no data moved in eager runtimes: Reshape, Squeeze, Flatten, Identity, ...
  Metadata,      // Shape, Size, Constant: no kernel
  Quantize,      // (De)QuantizeLinear and friends
  Control,       // If, Loop, Scan: their bodies are costed separately
  Other,
};

std::string_view op_class_name(OpClass c);

// What eager PyTorch's autograd keeps for the backward pass of the eager op an ONNX op stands for (as
// torch.autograd.graph.saved_tensors_hooks sees it; scripts/measure/autograd_memory.py --ops prints the
// table). Tensors are kept only for inputs on the gradient's path; weights are resident anyway and are
// not counted again.
enum class Saved : std::uint8_t {
  Nothing,        // Add, Sub, Neg, views, copies, sums: the backward needs shapes only
  Input,          // input 0 (Gelu, Erf, Log, pools, ReduceMean, ...)
  Output,         // the result (Relu, Sigmoid, Tanh, Softmax, Exp, Sqrt, ...)
  InputAndOutput, // ReduceMax/Min, Pow with a tensor exponent
  Operands,       // products (Conv, MatMul, Gemm, Mul, Einsum): each operand when the other needs a gradient
  Divisor,        // Div: the divisor, and the dividend too when the divisor needs a gradient
  Normalized,     // Batch/Layer/Group/InstanceNorm: input 0 (and per-row statistics, too small to count)
  WithIndices,    // MaxPool, GlobalMaxPool: input 0 and int64 indices of the output's shape
  Indices,        // Gather, GatherND: the indices (an embedding's table is a weight)
  DataAndIndices, // GatherElements: the data and the indices
  Condition,      // Where: the condition
};

using ShapeRule = void (*)(ShapeContext&);
using CostRule = void (*)(const CostContext&, double flops_per_element, NodeCost&);

struct OpSpec {
  std::string_view domain;    // "" for the default ONNX domain
  std::string_view op_type;
  OpClass cls;
  ShapeRule shape;
  CostRule cost;
  double flops_per_element;   // meaning depends on the cost rule (per output / input / window element)
  Saved saved = Saved::Nothing;  // what eager autograd keeps for it (training memory)
};

// nullptr when the op is not in the registry.
const OpSpec* find_op(std::string_view domain, std::string_view op_type);
std::span<const OpSpec> all_ops();
// all_ops().size(), without a reference to the table: the learned runtime's module checks its op vocabulary
// by this count and links none of the rules.
std::size_t op_count();

// What shape rules see: the node, the inferred types of its inputs, and slots for its outputs.
class ShapeContext {
 public:
  ShapeContext(const Model& model, const Graph& graph, const Node& node, std::vector<ValueShape>& values,
               NodeBodies<GraphShapes>& subgraphs, const DimBindings& bindings,
               std::vector<Diagnostic>& warnings, std::vector<std::string>& unknown_ops,
               const GraphShapes* const* scopes, int scope_depth, InferenceWork& work);

  const Node& node() const { return node_; }
  std::int64_t opset() const { return opset_; }
  std::size_t num_inputs() const { return node_.inputs().size(); }
  std::size_t num_outputs() const { return node_.outputs().size(); }
  bool has_input(std::size_t i) const { return i < node_.inputs().size() && node_.inputs()[i] >= 0; }
  bool has_output(std::size_t i) const { return i < node_.outputs().size() && node_.outputs()[i] >= 0; }
  const ValueShape& input(std::size_t i) const;            // fails when absent
  const ValueShape* input_if(std::size_t i) const;         // nullptr when absent
  // Contents of a constant-valued input as integers, or false when not known.
  bool input_ints(std::size_t i, std::vector<std::int64_t>& out) const;
  void set_output(std::size_t i, ValueShape s);           // ignores omitted outputs
  void set_output_value(std::size_t i, DType t, Dims dims, ConstData v);

  // Runs inference over a subgraph attribute with the given input types; returns its output types.
  // Warnings and unknown ops of the body join the top-level lists.
  std::vector<ValueShape> run_subgraph(const Graph& body, const std::vector<ValueShape>& inputs);
  // Drops the inferred types of a body that never runs with these shapes (the untaken branch of an If whose
  // condition is known), so that costing and the per-node listing skip it.
  void discard_subgraph(const Graph& body);
  // Whether a second pass over `body` (a Loop's growth check) still fits the walk's work budget: nested
  // loops that each pass twice would otherwise take 2^depth passes.
  bool may_rerun(const Graph& body) const;

  [[noreturn]] void fail(const std::string& message) const;
  // The symbolic dims the caller bound to `value` (batch=8, sequence=8192), by name, for messages that
  // tell which setting a failing size came from.
  std::vector<std::string> symbols_bound_to(std::int64_t value) const;
  void warn(const std::string& message);
  std::int64_t normalize_axis(std::int64_t axis, std::int64_t rank) const;  // fails when out of range

 private:
  const Model& model_;
  const Graph& graph_;
  const Node& node_;
  std::vector<ValueShape>& values_;
  NodeBodies<GraphShapes>& subgraphs_;  // the graph's: this node's are made when a body runs
  const DimBindings& bindings_;
  std::vector<Diagnostic>& warnings_;
  std::vector<std::string>& unknown_ops_;
  const GraphShapes* const* scopes_;
  int scope_depth_;
  InferenceWork& work_;
  std::int64_t opset_;
};

}  // namespace perfcard
