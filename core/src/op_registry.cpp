// The op registry: one row per ONNX op type. The last column is the FLOP constant of the cost rule:
//   cost_per_output: FLOPs per output element      cost_per_input / cost_reduce: per input element
//   cost_pool: per output element and window tap   cost_conv / cost_matmul / cost_einsum: unused (MACs)
// Pointwise constants follow the usual counting conventions (fvcore, ptflops): 1 for a plain arithmetic op
// or compare, a few for activations built from exp/div (sigmoid ~ exp + add + div + neg = 4), softmax 5
// (max, subtract, exp, sum, divide). They matter little: such ops are bound by memory traffic.
#include "perfcard/op_registry.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>

#include "ops/rule_util.h"
#include "ops/rules.h"

namespace perfcard {

using namespace ops;
using C = OpClass;

namespace {

constexpr OpSpec kOps[] = {
    // ---- convolution and matrix products
    {"", "Conv", C::Conv, rule_conv, cost_conv, 0, Saved::Operands},
    {"", "ConvInteger", C::Conv, rule_conv, cost_conv, 0},
    {"", "QLinearConv", C::Conv, rule_conv, cost_conv, 0},
    {"", "ConvTranspose", C::Conv, rule_conv_transpose, cost_conv_transpose, 0, Saved::Operands},
    {"", "MatMul", C::MatMul, rule_matmul, cost_matmul, 0, Saved::Operands},
    {"", "MatMulInteger", C::MatMul, rule_matmul, cost_matmul, 0},
    {"", "QLinearMatMul", C::MatMul, rule_matmul, cost_matmul, 0},
    {"", "Gemm", C::MatMul, rule_gemm, cost_matmul, 0, Saved::Operands},
    {"", "Einsum", C::MatMul, rule_einsum, cost_einsum, 0, Saved::Operands},
    // recurrent layers: per gate element, bias adds + activation + state update (~ 4 FLOPs)
    {"", "RNN", C::MatMul, rule_rnn, cost_rnn, 3},
    {"", "GRU", C::MatMul, rule_rnn, cost_rnn, 4},
    {"", "LSTM", C::MatMul, rule_rnn, cost_rnn, 4},
    // ---- pooling
    {"", "MaxPool", C::Pooling, rule_pool, cost_pool, 1, Saved::WithIndices},
    {"", "AveragePool", C::Pooling, rule_pool, cost_pool, 1, Saved::Input},
    {"", "LpPool", C::Pooling, rule_pool, cost_pool, 2, Saved::Input},
    {"", "GlobalAveragePool", C::Pooling, rule_global_pool, cost_global_pool, 1, Saved::Input},
    {"", "GlobalMaxPool", C::Pooling, rule_global_pool, cost_global_pool, 1, Saved::WithIndices},
    {"", "GlobalLpPool", C::Pooling, rule_global_pool, cost_global_pool, 2, Saved::Input},
    // ---- normalization (per input element: mean, variance, scale, shift)
    {"", "BatchNormalization", C::Normalization, rule_batch_norm, cost_per_input, 2, Saved::Normalized},
    {"", "InstanceNormalization", C::Normalization, rule_same_as_first, cost_per_input, 5, Saved::Normalized},
    {"", "LayerNormalization", C::Normalization, rule_layer_norm, cost_per_input, 5, Saved::Normalized},
    {"", "GroupNormalization", C::Normalization, rule_same_as_first, cost_per_input, 5, Saved::Normalized},
    {"", "LpNormalization", C::Normalization, rule_same_as_first, cost_per_input, 3, Saved::Input},
    {"", "MeanVarianceNormalization", C::Normalization, rule_same_as_first, cost_per_input, 5, Saved::Normalized},
    {"", "LRN", C::Normalization, rule_same_as_first, cost_per_input, 5, Saved::Normalized},
    {"com.microsoft", "SimplifiedLayerNormalization", C::Normalization, rule_layer_norm, cost_per_input, 4, Saved::Normalized},
    {"com.microsoft", "SkipLayerNormalization", C::Normalization, rule_layer_norm, cost_per_input, 6, Saved::Normalized},
    // ---- softmax family
    {"", "Softmax", C::Softmax, rule_same_as_first, cost_per_input, 5, Saved::Output},
    {"", "LogSoftmax", C::Softmax, rule_same_as_first, cost_per_input, 6, Saved::Output},
    {"", "Hardmax", C::Softmax, rule_same_as_first, cost_per_input, 2},
    // ---- reductions
    {"", "ReduceMean", C::Reduction, rule_reduce, cost_reduce, 1, Saved::Input},
    {"", "ReduceSum", C::Reduction, rule_reduce, cost_reduce, 1},
    {"", "ReduceMax", C::Reduction, rule_reduce, cost_reduce, 1, Saved::InputAndOutput},
    {"", "ReduceMin", C::Reduction, rule_reduce, cost_reduce, 1, Saved::InputAndOutput},
    {"", "ReduceProd", C::Reduction, rule_reduce, cost_reduce, 1, Saved::Input},
    {"", "ReduceL1", C::Reduction, rule_reduce, cost_reduce, 2, Saved::Input},
    {"", "ReduceL2", C::Reduction, rule_reduce, cost_reduce, 2, Saved::InputAndOutput},
    {"", "ReduceSumSquare", C::Reduction, rule_reduce, cost_reduce, 2, Saved::Input},
    {"", "ReduceLogSum", C::Reduction, rule_reduce, cost_reduce, 1, Saved::Input},
    {"", "ReduceLogSumExp", C::Reduction, rule_reduce, cost_reduce, 3, Saved::InputAndOutput},
    {"", "ArgMax", C::Reduction, rule_arg_reduce, cost_reduce, 1},
    {"", "ArgMin", C::Reduction, rule_arg_reduce, cost_reduce, 1},
    {"", "TopK", C::Reduction, rule_topk, cost_reduce, 2},
    {"", "CumSum", C::Reduction, rule_same_as_first, cost_per_input, 1},
    // ---- pointwise arithmetic (per output element)
    {"", "Add", C::Elementwise, rule_binary, cost_per_output, 1},
    {"", "Sub", C::Elementwise, rule_binary, cost_per_output, 1},
    {"", "Mul", C::Elementwise, rule_binary, cost_per_output, 1, Saved::Operands},
    {"", "Div", C::Elementwise, rule_binary, cost_per_output, 1, Saved::Divisor},
    {"", "Pow", C::Elementwise, rule_binary, cost_per_output, 1, Saved::InputAndOutput},
    {"", "Mod", C::Elementwise, rule_binary, cost_per_output, 1},
    {"", "Max", C::Elementwise, rule_binary, cost_per_output, 1, Saved::Input},
    {"", "Min", C::Elementwise, rule_binary, cost_per_output, 1, Saved::Input},
    {"", "Sum", C::Elementwise, rule_binary, cost_per_output, 1},
    {"", "Mean", C::Elementwise, rule_binary, cost_per_output, 1},
    {"", "PRelu", C::Elementwise, rule_binary, cost_per_output, 2, Saved::Input},
    {"", "BitShift", C::Elementwise, rule_binary, cost_per_output, 1},
    {"", "BitwiseAnd", C::Elementwise, rule_binary, cost_per_output, 1},
    {"", "BitwiseOr", C::Elementwise, rule_binary, cost_per_output, 1},
    {"", "BitwiseXor", C::Elementwise, rule_binary, cost_per_output, 1},
    {"", "Equal", C::Elementwise, rule_compare, cost_per_output, 1},
    {"", "Less", C::Elementwise, rule_compare, cost_per_output, 1},
    {"", "Greater", C::Elementwise, rule_compare, cost_per_output, 1},
    {"", "LessOrEqual", C::Elementwise, rule_compare, cost_per_output, 1},
    {"", "GreaterOrEqual", C::Elementwise, rule_compare, cost_per_output, 1},
    {"", "And", C::Elementwise, rule_compare, cost_per_output, 1},
    {"", "Or", C::Elementwise, rule_compare, cost_per_output, 1},
    {"", "Xor", C::Elementwise, rule_compare, cost_per_output, 1},
    {"", "Where", C::Elementwise, rule_where, cost_per_output, 1, Saved::Condition},
    {"", "Not", C::Elementwise, rule_unary_bool, cost_per_output, 1},
    {"", "IsNaN", C::Elementwise, rule_unary_bool, cost_per_output, 1},
    {"", "IsInf", C::Elementwise, rule_unary_bool, cost_per_output, 1},
    {"", "BitwiseNot", C::Elementwise, rule_unary, cost_per_output, 1},
    {"", "Cast", C::Elementwise, rule_cast, cost_per_output, 0},
    {"", "CastLike", C::Elementwise, rule_cast_like, cost_per_output, 0},
    // ---- pointwise maths and activations
    {"", "Relu", C::Elementwise, rule_unary, cost_per_output, 1, Saved::Output},
    {"", "LeakyRelu", C::Elementwise, rule_unary, cost_per_output, 2, Saved::Input},
    {"", "Elu", C::Elementwise, rule_unary, cost_per_output, 3, Saved::Input},
    {"", "Selu", C::Elementwise, rule_unary, cost_per_output, 4, Saved::Input},
    {"", "Celu", C::Elementwise, rule_unary, cost_per_output, 4, Saved::Input},
    {"", "ThresholdedRelu", C::Elementwise, rule_unary, cost_per_output, 1, Saved::Input},
    {"", "Sigmoid", C::Elementwise, rule_unary, cost_per_output, 4, Saved::Output},
    {"", "HardSigmoid", C::Elementwise, rule_unary, cost_per_output, 3, Saved::Input},
    {"", "HardSwish", C::Elementwise, rule_unary, cost_per_output, 4, Saved::Input},
    {"", "Softplus", C::Elementwise, rule_unary, cost_per_output, 3, Saved::Input},
    {"", "Softsign", C::Elementwise, rule_unary, cost_per_output, 3, Saved::Input},
    {"", "Mish", C::Elementwise, rule_unary, cost_per_output, 6, Saved::Input},
    {"", "Gelu", C::Elementwise, rule_unary, cost_per_output, 8, Saved::Input},
    {"", "Tanh", C::Elementwise, rule_unary, cost_per_output, 5, Saved::Output},
    {"", "Erf", C::Elementwise, rule_unary, cost_per_output, 5, Saved::Input},
    {"", "Exp", C::Elementwise, rule_unary, cost_per_output, 1, Saved::Output},
    {"", "Log", C::Elementwise, rule_unary, cost_per_output, 1, Saved::Input},
    {"", "Sqrt", C::Elementwise, rule_unary, cost_per_output, 1, Saved::Output},
    {"", "Reciprocal", C::Elementwise, rule_unary, cost_per_output, 1, Saved::Output},
    {"", "Neg", C::Elementwise, rule_unary, cost_per_output, 1},
    {"", "Abs", C::Elementwise, rule_unary, cost_per_output, 1, Saved::Input},
    {"", "Sign", C::Elementwise, rule_unary, cost_per_output, 1},
    {"", "Floor", C::Elementwise, rule_unary, cost_per_output, 1},
    {"", "Ceil", C::Elementwise, rule_unary, cost_per_output, 1},
    {"", "Round", C::Elementwise, rule_unary, cost_per_output, 1},
    {"", "Sin", C::Elementwise, rule_unary, cost_per_output, 1, Saved::Input},
    {"", "Cos", C::Elementwise, rule_unary, cost_per_output, 1, Saved::Input},
    {"", "Tan", C::Elementwise, rule_unary, cost_per_output, 1, Saved::Input},
    {"", "Asin", C::Elementwise, rule_unary, cost_per_output, 1, Saved::Input},
    {"", "Acos", C::Elementwise, rule_unary, cost_per_output, 1, Saved::Input},
    {"", "Atan", C::Elementwise, rule_unary, cost_per_output, 1, Saved::Input},
    {"", "Sinh", C::Elementwise, rule_unary, cost_per_output, 1, Saved::Input},
    {"", "Cosh", C::Elementwise, rule_unary, cost_per_output, 1, Saved::Input},
    {"", "Asinh", C::Elementwise, rule_unary, cost_per_output, 1, Saved::Input},
    {"", "Acosh", C::Elementwise, rule_unary, cost_per_output, 1, Saved::Input},
    {"", "Atanh", C::Elementwise, rule_unary, cost_per_output, 1, Saved::Input},
    {"", "Clip", C::Elementwise, rule_unary, cost_per_output, 2, Saved::Input},
    {"", "Shrink", C::Elementwise, rule_unary, cost_per_output, 2, Saved::Input},
    {"", "Trilu", C::Elementwise, rule_same_as_first, cost_per_output, 0},
    {"com.microsoft", "Gelu", C::Elementwise, rule_unary, cost_per_output, 8, Saved::Input},
    {"com.microsoft", "FastGelu", C::Elementwise, rule_unary, cost_per_output, 8, Saved::Input},
    {"com.microsoft", "QLinearAdd", C::Elementwise, rule_qlinear_binary, cost_per_output, 4},
    {"com.microsoft", "QLinearMul", C::Elementwise, rule_qlinear_binary, cost_per_output, 4},
    // ---- data movement (bytes, no arithmetic)
    {"", "Transpose", C::DataMovement, rule_transpose, cost_none, 0},
    {"", "Concat", C::DataMovement, rule_concat, cost_none, 0},
    {"", "Split", C::DataMovement, rule_split, cost_none, 0},
    {"", "Slice", C::DataMovement, rule_slice, cost_indexed_read, 0},
    {"", "Gather", C::DataMovement, rule_gather, cost_indexed_read, 0, Saved::Indices},
    {"", "GatherElements", C::DataMovement, rule_gather_elements, cost_indexed_read, 0, Saved::DataAndIndices},
    {"", "GatherND", C::DataMovement, rule_gather_nd, cost_indexed_read, 0, Saved::Indices},
    {"", "ScatterND", C::DataMovement, rule_same_as_first, cost_none, 0},
    {"", "ScatterElements", C::DataMovement, rule_same_as_first, cost_none, 0},
    {"", "Scatter", C::DataMovement, rule_same_as_first, cost_none, 0},
    {"", "Expand", C::DataMovement, rule_expand, cost_none, 0},
    {"", "Tile", C::DataMovement, rule_tile, cost_none, 0},
    {"", "Pad", C::DataMovement, rule_pad, cost_none, 0},
    {"", "Resize", C::DataMovement, rule_resize, cost_per_output, 4},
    {"", "Upsample", C::DataMovement, rule_resize, cost_per_output, 4},
    {"", "GridSample", C::DataMovement, rule_grid_sample, cost_per_output, 8},
    {"", "RoiAlign", C::DataMovement, rule_roi_align, cost_per_output, 8},
    {"", "DepthToSpace", C::DataMovement, rule_depth_space, cost_none, 0},
    {"", "SpaceToDepth", C::DataMovement, rule_depth_space, cost_none, 0},
    {"", "OneHot", C::DataMovement, rule_one_hot, cost_none, 0},
    {"", "ReverseSequence", C::DataMovement, rule_same_as_first, cost_none, 0},
    {"", "ConstantOfShape", C::DataMovement, rule_constant_of_shape, cost_none, 0},
    {"", "EyeLike", C::DataMovement, rule_eye_like, cost_none, 0},
    {"", "Range", C::DataMovement, rule_range, cost_per_output, 1},
    {"", "NonZero", C::DataMovement, rule_nonzero, cost_none, 0},
    {"", "Compress", C::DataMovement, rule_compress, cost_none, 0},
    {"", "Unique", C::DataMovement, rule_unique, cost_per_input, 2},
    {"", "NonMaxSuppression", C::Other, rule_nms, cost_none, 0},
    {"", "MaxRoiPool", C::Pooling, rule_max_roi_pool, cost_per_output, 1},
    {"", "MaxUnpool", C::DataMovement, rule_max_unpool, cost_none, 0},
    // ---- generators and signal ops
    {"", "RandomNormal", C::Elementwise, rule_random, cost_per_output, 4},
    {"", "RandomUniform", C::Elementwise, rule_random, cost_per_output, 2},
    {"", "RandomNormalLike", C::Elementwise, rule_random, cost_per_output, 4},
    {"", "RandomUniformLike", C::Elementwise, rule_random, cost_per_output, 2},
    {"", "Bernoulli", C::Elementwise, rule_random, cost_per_output, 3},
    {"", "Multinomial", C::Other, rule_random, cost_per_input, 2},
    {"", "HannWindow", C::Elementwise, rule_window, cost_per_output, 3},
    {"", "HammingWindow", C::Elementwise, rule_window, cost_per_output, 3},
    {"", "BlackmanWindow", C::Elementwise, rule_window, cost_per_output, 5},
    {"", "DFT", C::Other, rule_dft, cost_dft, 0},
    {"", "Det", C::Other, rule_det, cost_det, 0},
    // ---- views: no data moved in eager runtimes
    {"", "Reshape", C::View, rule_reshape, cost_none, 0},
    {"", "Flatten", C::View, rule_flatten, cost_none, 0},
    {"", "Squeeze", C::View, rule_squeeze, cost_none, 0},
    {"", "Unsqueeze", C::View, rule_unsqueeze, cost_none, 0},
    {"", "Identity", C::View, rule_unary, cost_none, 0},
    {"", "Dropout", C::View, rule_dropout, cost_none, 0},
    // ---- metadata: no kernel
    {"", "Shape", C::Metadata, rule_shape, cost_none, 0},
    {"", "Size", C::Metadata, rule_size, cost_none, 0},
    {"", "Constant", C::Metadata, rule_constant, cost_none, 0},
    // ---- quantization (per element: scale, round, shift, clamp)
    {"", "QuantizeLinear", C::Quantize, rule_quantize, cost_per_output, 4},
    {"", "DequantizeLinear", C::Quantize, rule_dequantize, cost_per_output, 2},
    {"", "DynamicQuantizeLinear", C::Quantize, rule_dynamic_quantize, cost_per_output, 6},
    // ---- control flow: bodies are costed as subgraphs
    {"", "If", C::Control, rule_if, cost_none, 0},
    {"", "Loop", C::Control, rule_loop, cost_loop, 0},
    {"", "Scan", C::Control, rule_scan, cost_scan, 0},
};

}  // namespace

std::string_view op_class_name(OpClass c) {
  switch (c) {
    case C::Conv: return "conv";
    case C::MatMul: return "matmul";
    case C::Elementwise: return "elementwise";
    case C::Reduction: return "reduction";
    case C::Normalization: return "normalization";
    case C::Softmax: return "softmax";
    case C::Pooling: return "pooling";
    case C::DataMovement: return "data_movement";
    case C::View: return "view";
    case C::Metadata: return "metadata";
    case C::Quantize: return "quantize";
    case C::Control: return "control";
    case C::Other: return "other";
  }
  return "other";
}

namespace {

constexpr std::uint32_t fnv1a(std::string_view s) {
  std::uint32_t h = 2166136261u;
  for (char c : s) h = (h ^ std::uint8_t(c)) * 16777619u;
  return h;
}

// Shape inference, costing and liveness each look every node up once per analysis, and the page
// re-analyzes on every setting change: a hash index keeps that off the profile (a linear scan over the
// table was ~15% of a re-prediction, a binary search ~13%). Open addressing over row indices, built at
// compile time, so no call ever allocates it (the wasm tests check that no state survives a call). Rows
// are inserted in table order, so a probe meets the first row of a key first.
constexpr std::size_t kSlots = 512;
static_assert(std::size(kOps) <= kSlots / 2, "the op index would be too full: double kSlots");
constexpr auto kOpSlots = [] {
  std::array<std::int16_t, kSlots> t{};
  for (auto& x : t) x = -1;
  for (std::size_t i = 0; i < std::size(kOps); ++i) {
    std::size_t h = fnv1a(kOps[i].op_type) & (kSlots - 1);
    while (t[h] >= 0) h = (h + 1) & (kSlots - 1);
    t[h] = std::int16_t(i);
  }
  return t;
}();

}  // namespace

const OpSpec* find_op(std::string_view domain, std::string_view op_type) {
  if (domain == "ai.onnx") domain = "";
  for (std::size_t h = fnv1a(op_type) & (kSlots - 1); kOpSlots[h] >= 0; h = (h + 1) & (kSlots - 1)) {
    const OpSpec& op = kOps[std::size_t(kOpSlots[h])];
    if (op.op_type == op_type && op.domain == domain) return &op;
  }
  return nullptr;
}

std::span<const OpSpec> all_ops() { return kOps; }
std::size_t op_count() { return std::size(kOps); }

}  // namespace perfcard
