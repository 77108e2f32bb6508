// The physics-based predictor: every kernel takes max(compute, memory, launch floor) at achievable
// (fitted) throughput, kernels are formed by the runtime's fusion policy, and the runtime's per-op CPU
// dispatch is simulated against the GPU queue. Its constants come from weights/roofline.json, which
// scripts/calibration/calibrate_roofline.py fits on public measurements and stamps with provenance.
#pragma once

#include <array>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "perfcard/analysis.h"
#include "perfcard/device.h"
#include "perfcard/power_model.h"
#include "perfcard/predictor.h"

namespace perfcard {

// Achievable fractions of datasheet peaks for one device family ("ampere", "hopper", "cpu-x86", ...).
struct FamilyConstants {
  double gemm_eff_tensor = 0;   // matmul-like kernels on tensor cores (fp16/bf16/tf32/fp8/int8)
  double gemm_eff_fp32 = 0;     // matmul-like kernels on FP32 CUDA cores / CPU FMA units
  double conv_eff_tensor = 0;
  double conv_eff_fp32 = 0;
  double vector_eff = 0;        // pointwise, reductions, normalization: fraction of FP32 peak
  double mem_eff = 0;           // fraction of datasheet bandwidth achieved by streaming kernels
  double k_half = 0;            // reduction length at which a GEMM reaches half its efficiency
  double tile = 0;              // output tile edge used for wave quantization (0: no wave model)
  double launch_us = 0;         // shortest kernel, GPU side
  // Bytes a kernel reads straight after the previous kernel wrote them are still in L2 when they fit:
  // they move at l2_bw_ratio x the DRAM roof. 1 (the default when the file omits it) turns the term off.
  double l2_bw_ratio = 1;
  // Sustained over catalog clock: CPU catalog peaks are derived at the base (or VM-reported) clock, while
  // a lightly loaded core runs at boost. Multiplies every compute peak of the family; 1 when omitted.
  double clock_ratio = 1;
  // The same for memory bandwidth. A family whose devices carry measured rates instead of datasheet figures
  // (cpu-probed: the one-thread read of PerfCard's probe times the cores) maps the measured read to what
  // onnxruntime's kernels stream; 1 when omitted.
  double bandwidth_ratio = 1;
};

// How a runtime turns a graph into kernels and what it costs to issue them.
struct RuntimeConstants {
  std::string name;             // "pytorch-eager", "onnxruntime", "onnxruntime-web", "tensorrt"
  std::string kind;             // "gpu" or "cpu": the device kind it runs on
  double dispatch_us = 0;       // time to issue one kernel: eager's host dispatcher; graph replay's node gap
  // Graph replay (CUDA graphs): the device starts a node only after its predecessor finished, so each
  // kernel's issue time (dispatch_us) adds to its run time instead of hiding behind the previous kernel's.
  bool serial_issue = false;
  double step_us = 0;           // once per step: the wrapper's own cost (torch.compile's guards, graph launch)
  bool fuse_elementwise = false;  // pointwise chains and activations join their producer kernel
  bool fuse_bias = true;          // MatMul + bias Add is one kernel (linear/addmm)
  // Exporters decompose modules that eager runs as one kernel (LayerNorm, GELU at opset < 17); the
  // pointwise and reduction nodes of one module scope (node name "/block/norm/Sub") become one kernel.
  bool fuse_decomposed = false;
  bool conv_fp32_as_tf32 = false; // cuDNN's default in PyTorch: fp32 convolutions run as TF32
  bool matmul_fp32_as_tf32 = false;
  double context_mb = 0;        // runtime + CUDA context resident before the model (sourced estimate)
  double workspace_mb = 0;      // library workspaces (cuBLAS/cuDNN) held during inference
  double allocator_overhead = 0;  // caching-allocator rounding and fragmentation, fraction of activations
  // Resident bytes per byte of weights: onnxruntime keeps a convolution's weights reordered for its
  // blocked kernels beside the loaded ones, and uses the others in place.
  double weight_copies = 1;
  double conv_weight_copies = 1;
  // The runtime runs the model's Python code (eager PyTorch): a module's inputs stay referenced by its
  // caller's frame until it returns, past their last reader (liveness.h), and what the exporter computed
  // from weights alone is never made (eager_ops).
  bool module_frames = false;
  // PyTorch's CUDA caching allocator holds tensors in segments of documented sizes (caching_allocator.h):
  // the memory figures add what the segments hold beyond the tensors, as the device reports it.
  bool caching_allocator = false;
  std::string source;           // where the memory figures come from
};

struct AccuracyNote {           // held-out accuracy of this predictor, from scripts/calibration/evaluate_roofline.py
  double mape = 0;
  std::size_t rows = 0;
  std::string source;
};

struct RooflineConstants {
  std::string version;          // e.g. "roofline-1.0"
  std::string provenance;       // who fitted the constants and when (the fit's record stays in the file)
  std::map<std::string, FamilyConstants> families;
  std::map<std::string, RuntimeConstants> runtimes;
  std::map<std::string, std::string> arch_family;  // device arch (e.g. "Hopper GH100 sm90") prefix -> family
  PowerConstants power;
  std::map<std::string, AccuracyNote> accuracy;    // by family; the relative uncertainty shown
  // A training step's held-out error by family, "all" pooled over every measured training row
  // (scripts/training/evaluate_training_time.py --write); empty when none was measured.
  std::map<std::string, AccuracyNote> training_accuracy;
  // By runtime: the held-out error of rows the roofline predicts host-bound (host_bound() below): eager's
  // with every source weighing the same (scripts/calibration/evaluate_roofline.py), CUDA graphs' held out by
  // family (calibrate_cuda_graphs.py). Eager's host cost per kernel differs between machines more than any
  // GPU family's constants do, so a host-bound row carries at least this.
  std::map<std::string, AccuracyNote> host_bound_accuracy;
  // By runtime, for one that `accuracy` does not measure (it is eager's on GPUs, onnxruntime's on CPUs): the
  // held-out error of the runtime's own rows, and the device families they ran on (CUDA graphs: stage H,
  // calibrate_cuda_graphs.py). Its rows are timed by other constants than eager's, so eager's error says
  // little about theirs: on a family it was measured on the runtime's error is shown, on another the larger
  // of the two.
  struct RuntimeAccuracy {
    AccuracyNote note;
    std::vector<std::string> families;
  };
  std::map<std::string, RuntimeAccuracy> runtime_accuracy;

  static RooflineConstants parse(std::string_view json_text);  // rejects a wrong major version
  const FamilyConstants& family_of(const Device& d, std::string* name = nullptr) const;
  const RuntimeConstants& runtime(std::string_view name) const;
};

// A row is host-bound when its device is busy less than half of its latency: the host's dispatch sets the
// time, and a faster device would not change it. Under a serial-issue runtime (CUDA graphs) the idle share
// is the device's own gaps between graph nodes and the step's fixed cost, not a host's: issue-bound. One
// rule for the predict document, `perfcard eval`'s answers (the evaluations read it there) and the
// uncertainty of host-bound rows (per runtime: host_bound_accuracy).
constexpr double kHostBoundBusyFraction = 0.5;
inline bool host_bound(double busy_ms, double latency_ms) {
  return latency_ms > 0 && busy_ms < kHostBoundBusyFraction * latency_ms;
}

struct RooflineResult {
  double latency_ms = 0;        // one batch, end to end on the device
  double gpu_busy_ms = 0;       // sum of kernel times
  std::array<double, 3> busy_ms_by_phase{};  // of gpu_busy_ms: forward, backward, update (KernelPhase order)
  double dispatch_ms = 0;       // sum of issue times (dispatch_us x kernels)
  double intensity = 0;         // time-weighted fraction of the binding roofline achieved
  double compute_bound_ms = 0;  // of gpu_busy_ms: kernels whose compute time binds
  double launch_bound_ms = 0;   // of gpu_busy_ms: kernels at the launch floor (the rest bind on memory)
  std::vector<KernelTime> kernels;
  std::vector<std::string> warnings;
};

struct RooflineOptions {
  Precision precision = Precision::FP16;
  std::string runtime = "pytorch-eager";
  double compute_scale = 1;     // MIG: the profile's share of compute
  double bandwidth_scale = 1;   // MIG: the profile's share of memory bandwidth
  // CPUs: worker threads of the runtime (onnxruntime intra-op threads); 0 = every core in the catalog
  // entry. Compute and bandwidth scale by the share of cores used (one thread cannot draw a socket's
  // bandwidth). Ignored on GPUs.
  int threads = 0;
  bool keep_kernels = false;
  double dispatch_us = -1;      // >= 0: the host time per kernel instead of the runtime's dispatch_us
};

RooflineResult roofline_latency(const Model& model, const Analysis& analysis, const Device& device,
                                const RooflineConstants& constants, const RooflineOptions& options);

// The kernels of a model bound to one analysis, as a runtime forms them at one precision. They do not
// depend on the device, so a prediction for many devices and MIG slices forms them once and only times
// them per device: roofline_latency(plan_kernels(...), device, ...) equals the call above. A plan points
// into the model's nodes, so it must not outlive the model.
struct PlannedKernel {
  const Node* first = nullptr;  // the node that opened the kernel (a backward kernel: its forward's); the
                                // optimizer's update has none and names itself in `label`
  std::string_view label;
  KernelPhase phase = KernelPhase::Forward;
  OpClass cls = OpClass::Other;
  double flops = 0, bytes = 0;
  double reuse_bytes = 0;       // of bytes: inputs written by the kernel just before (candidates for L2 hits)
  double gemm_m = 0, gemm_n = 0, gemm_k = 0, gemm_batch = 1;
  bool gemm_like = false;
  bool conv = false;
  // A weight gradient reduces over the batch into a small output: libraries split that reduction across
  // the device when the output has too few tiles to fill it (split-K), instead of leaving SMs idle.
  bool split_k = false;
  double repeat = 1;            // runs one after another: recurrent time steps, loop iterations
  double invariant_bytes = 0;   // of bytes: read alike by every run (weights, outer-scope values)
};

struct KernelPlan {
  std::string runtime;
  Precision precision = Precision::FP16;
  std::vector<PlannedKernel> kernels;
  std::size_t untimed = 0;      // nodes with unknown shapes or no cost rule
  std::size_t per_iteration = 0;  // loops with an unknown trip count: bodies timed once
  std::size_t approximated = 0;   // training: kernels whose backward is taken as twice their forward's work
  std::vector<std::string> notes; // what the plan assumes, for the prediction's warnings
};

// `members` (may be null): for each kernel, the top-level graph's nodes it runs (empty for kernels of
// control-flow bodies and a recurrent op's time steps); a training step derives its backward from them.
// `fuse_pointwise` false keeps every pointwise op its own kernel even where the runtime fuses them.
KernelPlan plan_kernels(const Model& model, const Analysis& analysis, const RooflineConstants& constants,
                        std::string_view runtime, Precision precision,
                        std::vector<std::vector<int>>* members = nullptr, bool fuse_pointwise = true);
RooflineResult roofline_latency(const KernelPlan& plan, const Device& device, const RooflineConstants& constants,
                                const RooflineOptions& options);

}  // namespace perfcard
