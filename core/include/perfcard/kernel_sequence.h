// The kernel sequence as sequence predictors read it (a transformer over the kernels, in the spirit of TLP
// and CDMPP): the kernels a runtime runs for one subject, in execution order, after its fusion (the
// roofline's plan, roofline.h), each with an op id, a class id and device-independent numeric features.
// Computed here and nowhere else: the training tables get it from `perfcard eval` (queries with
// "sequence": true), the predictors from this module.
//
// Unlike the operator graph's per-sample node features, a kernel's features are its sizes as the runtime
// runs it at the bound batch (FLOPs, bytes, GEMM extents): whether a kernel is launch-, memory- or
// compute-bound depends on its absolute size, and fusion has already made it the runtime's unit of work.
// The per-sample figures are there as well, so the model can tell growth with the batch from weight reads.
// Magnitudes are log1p.
//
// Versioned: sequence_schema_hash() covers the kernel features' names, the op vocabulary and the class
// names (the operator graph's ids: op_id(), op_class_count()); a predictor file trained on another schema
// is refused.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "perfcard/features.h"
#include "perfcard/graph.h"
#include "perfcard/roofline.h"

namespace perfcard {

inline constexpr int kSequenceSchemaVersion = 1;

std::span<const FeatureDef> kernel_feature_schema();
const std::string& sequence_schema_hash();

struct KernelSequence {
  std::size_t kernels = 0;
  std::size_t features = 0;              // kernel_feature_schema().size()
  std::vector<std::int32_t> op;          // [kernels]: op id of the node that opened the kernel
  std::vector<std::int32_t> op_class;    // [kernels]
  std::vector<float> x;                  // [kernels * features], row-major
  std::size_t unknown_ops = 0;           // nodes of the model whose op type the registry does not know

  bool operator==(const KernelSequence&) const = default;
};

// The plan's kernels in order. `samples` is the batch the plan's analysis is bound to (>= 1).
KernelSequence kernel_sequence(const Model& model, const KernelPlan& plan, std::int64_t samples);

// Nodes of the main graph whose op type the registry does not know (an op id of 0).
std::size_t unknown_op_count(const Model& model);

}  // namespace perfcard
