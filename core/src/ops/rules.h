// Declarations of every shape and cost rule; the registry (op_registry.cpp) maps op types onto them.
#pragma once

#include "perfcard/cost.h"
#include "perfcard/op_registry.h"

namespace perfcard::ops {

// elementwise.cpp
void rule_unary(ShapeContext&);
void rule_unary_bool(ShapeContext&);
void rule_dropout(ShapeContext&);
void rule_cast(ShapeContext&);
void rule_cast_like(ShapeContext&);
void rule_binary(ShapeContext&);
void rule_compare(ShapeContext&);
void rule_where(ShapeContext&);
void rule_same_as_first(ShapeContext&);

// tensor.cpp
void rule_shape(ShapeContext&);
void rule_size(ShapeContext&);
void rule_constant(ShapeContext&);
void rule_constant_of_shape(ShapeContext&);
void rule_reshape(ShapeContext&);
void rule_flatten(ShapeContext&);
void rule_squeeze(ShapeContext&);
void rule_unsqueeze(ShapeContext&);
void rule_transpose(ShapeContext&);
void rule_concat(ShapeContext&);
void rule_split(ShapeContext&);
void rule_slice(ShapeContext&);
void rule_gather(ShapeContext&);
void rule_gather_elements(ShapeContext&);
void rule_gather_nd(ShapeContext&);
void rule_expand(ShapeContext&);
void rule_tile(ShapeContext&);
void rule_range(ShapeContext&);
void rule_pad(ShapeContext&);
void rule_resize(ShapeContext&);
void rule_depth_space(ShapeContext&);
void rule_one_hot(ShapeContext&);
void rule_eye_like(ShapeContext&);
void rule_nonzero(ShapeContext&);
void rule_compress(ShapeContext&);
void rule_unique(ShapeContext&);
void rule_nms(ShapeContext&);
void rule_topk(ShapeContext&);
void rule_grid_sample(ShapeContext&);
void rule_roi_align(ShapeContext&);
void rule_random(ShapeContext&);
void rule_window(ShapeContext&);
void rule_dft(ShapeContext&);
void rule_det(ShapeContext&);
void rule_max_roi_pool(ShapeContext&);
void rule_max_unpool(ShapeContext&);
void cost_indexed_read(const CostContext&, double, NodeCost&);

// linalg.cpp
void rule_conv(ShapeContext&);
void rule_conv_transpose(ShapeContext&);
void rule_pool(ShapeContext&);
void rule_global_pool(ShapeContext&);
void rule_matmul(ShapeContext&);
void rule_gemm(ShapeContext&);
void rule_einsum(ShapeContext&);
void rule_batch_norm(ShapeContext&);
void rule_layer_norm(ShapeContext&);
void rule_reduce(ShapeContext&);
void rule_arg_reduce(ShapeContext&);
void rule_rnn(ShapeContext&);
void cost_rnn(const CostContext&, double, NodeCost&);
void cost_dft(const CostContext&, double, NodeCost&);
void cost_det(const CostContext&, double, NodeCost&);
void cost_conv(const CostContext&, double, NodeCost&);
void cost_conv_transpose(const CostContext&, double, NodeCost&);
void cost_matmul(const CostContext&, double, NodeCost&);
void cost_einsum(const CostContext&, double, NodeCost&);
void cost_pool(const CostContext&, double, NodeCost&);
void cost_global_pool(const CostContext&, double, NodeCost&);
void cost_reduce(const CostContext&, double, NodeCost&);

// quant_control.cpp
void rule_quantize(ShapeContext&);
void rule_dequantize(ShapeContext&);
void rule_dynamic_quantize(ShapeContext&);
void rule_qlinear_binary(ShapeContext&);
void rule_if(ShapeContext&);
void rule_loop(ShapeContext&);
void rule_scan(ShapeContext&);
void cost_loop(const CostContext&, double, NodeCost&);
void cost_scan(const CostContext&, double, NodeCost&);

}  // namespace perfcard::ops
