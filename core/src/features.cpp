#include "perfcard/features.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "perfcard/error.h"
#include "perfcard/roofline_predictor.h"
#include "perfcard/sha256.h"

namespace perfcard {
namespace {

// Column order is the schema: append, never reorder (and bump kFeatureSchemaVersion on any change).
enum F : std::size_t {
  kLogFlops, kLogBytes, kLogIntensity, kLogParams, kLogWeightBytes, kLogActivations, kLogPeakLive, kLogIoBytes,
  kLogNodes, kLogKernels, kLogFlopsPerKernel, kLogSamples, kUntimedShare,
  kMixFlopsConv, kMixFlopsMatMul, kMixFlopsElementwise, kMixFlopsNormalization, kMixFlopsPooling, kMixFlopsSoftmax,
  kMixFlopsReduction, kMixFlopsDataMovement,
  kMixKernelsConv, kMixKernelsMatMul, kMixKernelsElementwise, kMixKernelsNormalization, kMixKernelsPooling,
  kMixKernelsSoftmax, kMixKernelsReduction, kMixKernelsDataMovement,
  kGemmLogMinDim, kGemmLogK, kRepeatedShare,
  kLogRooflineMs, kLogBusyMs, kBusyShare, kComputeBoundShare, kLaunchBoundShare, kRooflineIntensity,
  kDevIsGpu, kDevLogPeakTflops, kDevLogPeakFp32Tflops, kDevLogBandwidthGbs, kDevLogRidge, kDevLogL2Mb,
  kDevLogUnits, kDevLogTdpW, kDevLogMemoryGb,
  kPrecisionBits, kTensorMath, kRtPytorchEager, kRtOnnxruntime, kRtKernel, kLogThreads, kThreadShare, kMigShare,
  kCount
};

constexpr FeatureDef kSchema[] = {
    {"log_flops", "log1p FLOPs of one batch (the analysis totals)"},
    {"log_bytes", "log1p bytes read + written by all nodes"},
    {"log_intensity", "log((FLOPs + 1) / (bytes + 1))"},
    {"log_params", "log1p parameters"},
    {"log_weight_bytes", "log1p initializer bytes at their stored dtype"},
    {"log_activations", "log1p output elements of conv/linear-like nodes"},
    {"log_peak_live_bytes", "log1p peak bytes of live activations"},
    {"log_io_bytes", "log1p graph input + output bytes"},
    {"log_nodes", "log1p nodes of the main graph"},
    {"log_kernels", "log1p kernels the runtime forms (after its fusion policy)"},
    {"log_flops_per_kernel", "log1p FLOPs / kernels"},
    {"log_samples", "log1p batch bound for this row"},
    {"untimed_share", "nodes with unknown shapes or no cost rule / nodes"},
    {"mix_flops_conv", "share of FLOPs in conv nodes"},
    {"mix_flops_matmul", "share of FLOPs in matmul nodes"},
    {"mix_flops_elementwise", "share of FLOPs in pointwise nodes"},
    {"mix_flops_normalization", "share of FLOPs in normalization nodes"},
    {"mix_flops_pooling", "share of FLOPs in pooling nodes"},
    {"mix_flops_softmax", "share of FLOPs in softmax nodes"},
    {"mix_flops_reduction", "share of FLOPs in reduction nodes"},
    {"mix_flops_data_movement", "share of FLOPs in data-movement nodes"},
    {"mix_kernels_conv", "share of kernels that are conv"},
    {"mix_kernels_matmul", "share of kernels that are matmul"},
    {"mix_kernels_elementwise", "share of kernels that are pointwise"},
    {"mix_kernels_normalization", "share of kernels that are normalization"},
    {"mix_kernels_pooling", "share of kernels that are pooling"},
    {"mix_kernels_softmax", "share of kernels that are softmax"},
    {"mix_kernels_reduction", "share of kernels that are reductions"},
    {"mix_kernels_data_movement", "share of kernels that move data"},
    {"gemm_log_min_dim", "FLOP-weighted mean of log min(M, N) over GEMM-like kernels (small GEMMs run below peak)"},
    {"gemm_log_k", "FLOP-weighted mean of log K over GEMM-like kernels"},
    {"repeated_share", "share of FLOPs in kernels run more than once in a row (recurrent steps, loops)"},
    {"log_roofline_ms", "log1p roofline latency (ms) on this device"},
    {"log_busy_ms", "log1p roofline device-busy time (ms)"},
    {"busy_share", "roofline device-busy time / latency (low: host-bound)"},
    {"compute_bound_share", "of busy time, kernels bound by compute"},
    {"launch_bound_share", "of busy time, kernels at the launch floor"},
    {"roofline_intensity", "time-weighted fraction of the binding roof achieved"},
    {"dev_is_gpu", "1 for a GPU, 0 for a CPU"},
    {"dev_log_peak_tflops", "log1p dense peak TFLOP/s at the precision used"},
    {"dev_log_peak_fp32_tflops", "log1p dense FP32 peak TFLOP/s"},
    {"dev_log_bandwidth_gbs", "log1p memory bandwidth GB/s"},
    {"dev_log_ridge", "log(peak FLOP/s / bandwidth B/s): the roofline ridge point"},
    {"dev_log_l2_mb", "log1p last-level cache MB (L3 on CPUs, else L2)"},
    {"dev_log_units", "log1p SMs (GPU) or cores (CPU)"},
    {"dev_log_tdp_w", "log1p TDP W"},
    {"dev_log_memory_gb", "log1p device memory GB"},
    {"precision_bits", "bits per value of the precision used"},
    {"tensor_math", "1 when matrix kernels run on tensor/matrix units (any precision but fp32)"},
    {"rt_pytorch_eager", "runtime is PyTorch eager (or per-op PyTorch)"},
    {"rt_onnxruntime", "runtime is onnxruntime (native or web)"},
    {"rt_kernel", "runtime is the kernel floor (graph replay, no host dispatch)"},
    {"log_threads", "log1p CPU worker threads (0 on GPUs)"},
    {"thread_share", "CPU worker threads / cores (1 on GPUs)"},
    {"mig_share", "share of the GPU's compute (MIG slice; 1 for the whole device)"},
};
static_assert(std::size(kSchema) == kCount, "one definition per feature");

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

float log1p_or_nan(const Sourced& s) { return s.present && s.value >= 0 ? float(std::log1p(s.value)) : kNaN; }
float lg(double x) { return float(std::log1p(std::max(0.0, x))); }

std::size_t mix_slot(OpClass c) {
  switch (c) {
    case OpClass::Conv: return 0;
    case OpClass::MatMul: return 1;
    case OpClass::Elementwise: return 2;
    case OpClass::Normalization: return 3;
    case OpClass::Pooling: return 4;
    case OpClass::Softmax: return 5;
    case OpClass::Reduction: return 6;
    case OpClass::DataMovement: return 7;
    default: return 8;  // views, metadata, quantize, control, other: in no mix column
  }
}

void add_node_mix(const Graph& g, const GraphCosts& costs, double* flops) {
  for (std::size_t i = 0; i < g.nodes.size() && i < costs.nodes.size(); ++i) {
    const auto& c = costs.nodes[i];
    const OpSpec* spec = find_op(g.nodes[i].domain, g.nodes[i].op_type);
    if (spec) flops[mix_slot(spec->cls)] += c.flops;
  }
}

}  // namespace

std::span<const FeatureDef> feature_schema() { return kSchema; }

const std::string& feature_schema_hash() {
  static const std::string hash = [] {
    std::string text = "perfcard-features/" + std::to_string(kFeatureSchemaVersion);
    for (const auto& f : kSchema) (text += '\n') += f.name;
    return sha256_hex(text);
  }();
  return hash;
}

FeatureBuilder::FeatureBuilder(const PredictorSubject& s, const KernelPlan& plan)
    : base_(kCount, kNaN), runtime_(s.runtime), precision_(s.precision) {
  const ModelTotals& t = s.analysis->totals;
  const double bytes = t.bytes_read + t.bytes_written;
  base_[kLogFlops] = lg(t.flops);
  base_[kLogBytes] = lg(bytes);
  base_[kLogIntensity] = float(std::log((t.flops + 1) / (bytes + 1)));
  base_[kLogParams] = lg(double(t.params));
  base_[kLogWeightBytes] = lg(double(t.weight_bytes));
  base_[kLogActivations] = lg(t.activations);
  base_[kLogPeakLive] = lg(double(s.analysis->liveness.peak_bytes));
  base_[kLogIoBytes] = lg(double(s.analysis->liveness.input_bytes + s.analysis->liveness.output_bytes));
  base_[kLogNodes] = lg(double(t.nodes));
  const double kernels = double(plan.kernels.size());
  base_[kLogKernels] = lg(kernels);
  base_[kLogFlopsPerKernel] = lg(kernels > 0 ? t.flops / kernels : 0);
  base_[kLogSamples] = lg(double(s.samples));
  base_[kUntimedShare] = t.nodes > 0 ? float(double(plan.untimed) / double(t.nodes)) : 0.f;

  double mix_flops[9] = {};
  add_node_mix(s.model->graph, s.analysis->costs, mix_flops);
  double kernel_mix[9] = {}, gemm_flops = 0, gemm_min = 0, gemm_k = 0, plan_flops = 0, repeated = 0;
  for (const auto& k : plan.kernels) {
    kernel_mix[mix_slot(k.cls)] += 1;
    const double f = k.flops * k.repeat;
    plan_flops += f;
    if (k.repeat > 1) repeated += f;
    if (k.gemm_like && f > 0) {
      gemm_flops += f;
      gemm_min += f * std::log(std::max(1.0, std::min(k.gemm_m, k.gemm_n)));
      gemm_k += f * std::log(std::max(1.0, k.gemm_k));
    }
  }
  double node_flops = 0;
  for (double f : mix_flops) node_flops += f;
  for (std::size_t c = 0; c < 8; ++c) {
    base_[kMixFlopsConv + c] = node_flops > 0 ? float(mix_flops[c] / node_flops) : 0.f;
    base_[kMixKernelsConv + c] = kernels > 0 ? float(kernel_mix[c] / kernels) : 0.f;
  }
  base_[kGemmLogMinDim] = gemm_flops > 0 ? float(gemm_min / gemm_flops) : kNaN;
  base_[kGemmLogK] = gemm_flops > 0 ? float(gemm_k / gemm_flops) : kNaN;
  base_[kRepeatedShare] = plan_flops > 0 ? float(repeated / plan_flops) : 0.f;

  base_[kPrecisionBits] = float(precision_bits(s.precision));
  const bool eager = s.runtime == "pytorch-eager" || s.runtime == "pytorch-op";
  const bool ort = s.runtime.rfind("onnxruntime", 0) == 0;
  base_[kRtPytorchEager] = eager ? 1.f : 0.f;
  base_[kRtOnnxruntime] = ort ? 1.f : 0.f;
  base_[kRtKernel] = s.runtime == "kernel" ? 1.f : 0.f;
}

std::vector<float> FeatureBuilder::row(const Device& d, const DeviceQuery& q, const RooflineResult& r) const {
  std::vector<float> f = base_;
  f[kLogRooflineMs] = lg(r.latency_ms);
  f[kLogBusyMs] = lg(r.gpu_busy_ms);
  f[kBusyShare] = r.latency_ms > 0 ? float(std::min(1.0, r.gpu_busy_ms / r.latency_ms)) : kNaN;
  f[kComputeBoundShare] = r.gpu_busy_ms > 0 ? float(r.compute_bound_ms / r.gpu_busy_ms) : kNaN;
  f[kLaunchBoundShare] = r.gpu_busy_ms > 0 ? float(r.launch_bound_ms / r.gpu_busy_ms) : kNaN;
  f[kRooflineIntensity] = float(r.intensity);

  const bool gpu = d.is_gpu();
  f[kDevIsGpu] = gpu ? 1.f : 0.f;
  Precision used = d.supports(precision_) ? precision_ : Precision::FP32;
  const double peak = d.peak(used), peak32 = d.peak(Precision::FP32);
  f[kDevLogPeakTflops] = peak > 0 ? lg(peak) : kNaN;
  f[kDevLogPeakFp32Tflops] = peak32 > 0 ? lg(peak32) : kNaN;
  f[kDevLogBandwidthGbs] = log1p_or_nan(d.memory_bandwidth_gbs);
  f[kDevLogRidge] = peak > 0 && d.memory_bandwidth_gbs.present && d.memory_bandwidth_gbs.value > 0
                        ? float(std::log(peak * 1e3 / d.memory_bandwidth_gbs.value))
                        : kNaN;
  f[kDevLogL2Mb] = d.l3_mb.present ? log1p_or_nan(d.l3_mb) : log1p_or_nan(d.l2_mb);
  f[kDevLogUnits] = gpu ? log1p_or_nan(d.sm_count) : log1p_or_nan(d.cores);
  f[kDevLogTdpW] = log1p_or_nan(d.tdp_w);
  f[kDevLogMemoryGb] = log1p_or_nan(d.memory_gb);
  f[kTensorMath] = gpu && used != Precision::FP32 ? 1.f : 0.f;

  double threads = 0, share = 1;
  if (!gpu) {
    const double cores = d.cores.present ? d.cores.value : 0;
    threads = q.threads > 0 ? (cores > 0 ? std::min<double>(q.threads, cores) : q.threads) : cores;
    share = cores > 0 && threads > 0 ? threads / cores : 1;
  }
  f[kLogThreads] = lg(threads);
  f[kThreadShare] = float(share);
  f[kMigShare] = float(q.compute_scale);
  return f;
}

std::vector<float> feature_row(const Prepared& prepared, const DeviceQuery& q, const RooflinePredictor& roofline) {
  const RooflinePrepared& rp = as_roofline_prepared(prepared);
  const RooflineResult r = roofline.time(rp, q);
  if (const auto* fp = dynamic_cast<const FeaturePrepared*>(&prepared)) return fp->features.row(*q.device, q, r);
  return FeatureBuilder(rp.subject, rp.plan).row(*q.device, q, r);
}

}  // namespace perfcard
