#include "perfcard/kernel_sequence.h"

#include <algorithm>
#include <cmath>

#include "perfcard/error.h"
#include "perfcard/op_registry.h"
#include "perfcard/operator_graph.h"
#include "perfcard/sha256.h"

namespace perfcard {
namespace {

// Column order is the schema: append, never reorder (and bump kSequenceSchemaVersion on any change).
enum K : std::size_t {
  kLogFlops, kLogBytes, kLogFlopsPerSample, kLogBytesPerSample, kLogIntensity, kReuseShare, kGemmLike, kConv,
  kLogGemmM, kLogGemmN, kLogGemmK, kLogGemmBatch, kLogRepeat, kInvariantShare, kCount
};

constexpr FeatureDef kKernelSchema[] = {
    {"log_flops", "log1p FLOPs of one run of the kernel at the bound batch"},
    {"log_bytes", "log1p bytes it reads and writes at the bound batch (fused intermediates excluded)"},
    {"log_flops_per_sample", "log1p FLOPs per sample"},
    {"log_bytes_per_sample", "log1p bytes per sample (weights read once per batch make it fall with the batch)"},
    {"log_intensity", "log1p FLOPs per byte"},
    {"reuse_share", "share of its bytes written by the kernel just before (candidates for cache hits)"},
    {"gemm_like", "1 when it runs as a GEMM or convolution"},
    {"conv", "1 when it is a convolution"},
    {"log_gemm_m", "log1p GEMM rows (output pixels for a convolution)"},
    {"log_gemm_n", "log1p GEMM columns (output channels per group)"},
    {"log_gemm_k", "log1p GEMM reduction length"},
    {"log_gemm_batch", "log1p GEMMs side by side (groups, batched matmul)"},
    {"log_repeat", "log1p runs one after another (recurrent steps, loop iterations)"},
    {"invariant_share", "share of its bytes read alike by every run (weights of a loop body or recurrent step)"},
};
static_assert(std::size(kKernelSchema) == kCount, "one definition per kernel feature");

float lg(double x) { return float(std::log1p(std::max(0.0, x))); }
float share(double part, double whole) { return whole > 0 ? float(std::clamp(part / whole, 0.0, 1.0)) : 0.0f; }

}  // namespace

std::span<const FeatureDef> kernel_feature_schema() { return kKernelSchema; }

const std::string& sequence_schema_hash() {
  static const std::string hash = [] {
    std::string s = "perfcard-sequence/" + std::to_string(kSequenceSchemaVersion) + "\n";
    for (const auto& f : kKernelSchema) (s += f.name) += "\n";
    return sha256_hex(std::string_view(s + op_vocabulary_text()));
  }();
  return hash;
}

std::size_t unknown_op_count(const Model& model) {
  std::size_t n = 0;
  for (const Node& node : model.graph.nodes) n += op_id(node.domain, node.op_type) == 0;
  return n;
}

KernelSequence kernel_sequence(const Model& model, const KernelPlan& plan, std::int64_t samples) {
  if (samples < 1) throw option_error("kernel_sequence: samples must be >= 1, got " + std::to_string(samples));
  const double per = 1.0 / double(samples);
  KernelSequence ks;
  ks.kernels = plan.kernels.size();
  ks.features = kCount;
  ks.op.resize(ks.kernels);
  ks.op_class.resize(ks.kernels);
  ks.x.assign(ks.kernels * kCount, 0.0f);
  ks.unknown_ops = unknown_op_count(model);
  for (std::size_t i = 0; i < ks.kernels; ++i) {
    const PlannedKernel& k = plan.kernels[i];
    if (!k.first) throw internal_error("kernel_sequence: kernel " + std::to_string(i) + " has no node");
    ks.op[i] = op_id(k.first->domain, k.first->op_type);
    ks.op_class[i] = std::int32_t(k.cls);
    float* x = ks.x.data() + i * kCount;
    x[kLogFlops] = lg(k.flops);
    x[kLogBytes] = lg(k.bytes);
    x[kLogFlopsPerSample] = lg(k.flops * per);
    x[kLogBytesPerSample] = lg(k.bytes * per);
    x[kLogIntensity] = k.bytes > 0 ? lg(k.flops / k.bytes) : 0.0f;
    x[kReuseShare] = share(k.reuse_bytes, k.bytes);
    x[kGemmLike] = k.gemm_like ? 1.0f : 0.0f;
    x[kConv] = k.conv ? 1.0f : 0.0f;
    if (k.gemm_like) {
      x[kLogGemmM] = lg(k.gemm_m);
      x[kLogGemmN] = lg(k.gemm_n);
      x[kLogGemmK] = lg(k.gemm_k);
      x[kLogGemmBatch] = lg(k.gemm_batch);
    }
    x[kLogRepeat] = lg(k.repeat - 1);
    x[kInvariantShare] = share(k.invariant_bytes, k.bytes);
  }
  return ks;
}

}  // namespace perfcard
