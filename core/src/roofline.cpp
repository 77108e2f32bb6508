#include "perfcard/roofline.h"

#include <algorithm>
#include <cmath>

#include "perfcard/error.h"
#include "perfcard/machine_probe.h"
#include "perfcard/op_registry.h"

namespace perfcard {

const FamilyConstants& RooflineConstants::family_of(const Device& d, std::string* name) const {
  // Longest arch prefix wins ("Ada" vs "Ampere" never collide; "cpu" catches every CPU). Asked several times
  // per predicted row (the roofline, the learned predictors, auto): no string is copied on the way.
  const std::pair<const std::string, std::string>* best = nullptr;
  for (const auto& entry : arch_family) {
    const std::string& arch = entry.first;
    if (best && arch.size() <= best->first.size()) continue;
    if (d.arch.starts_with(arch) || d.id.starts_with(arch) || arch == d.kind) best = &entry;
  }
  if (!best) throw data_error("roofline constants have no family for device '" + d.id + "' (arch '" + d.arch + "')");
  // A probed machine's rates are not peaks: the catalog CPUs' family would time it about 8x too slow
  // (constants older than its stage, given with --constants, lack its family).
  if ((d.arch == kBrowserArch || d.arch == kProbedCpuArch) && best->second != d.arch)
    throw data_error("roofline constants have no '" + d.arch + "' family for the probed device '" + d.id +
                     "' (its rates are measured, not peaks; constants of an older build?)");
  if (name) *name = best->second;
  return families.at(best->second);
}

const RuntimeConstants& RooflineConstants::runtime(std::string_view n) const {
  auto it = runtimes.find(std::string(n));
  if (it != runtimes.end()) return it->second;
  std::string known;
  for (const auto& [k, v] : runtimes) known += (known.empty() ? "" : ", ") + k;
  throw option_error("unknown runtime '" + std::string(n) + "'; known runtimes: " + known);
}

namespace {

bool is_tensor_precision(Precision p) { return p != Precision::FP32; }

struct Kernel {
  PlannedKernel p;
  std::string_view scope;    // module scope of the node that opened the kernel (a view of its name)
  std::vector<int> produced; // values written by member nodes
  bool fuse_target = false;  // can absorb a following pointwise op
};


bool fusable_in_module(OpClass c) {
  return c == OpClass::Elementwise || c == OpClass::Reduction || c == OpClass::Normalization || c == OpClass::Softmax;
}

class Builder {
 public:
  Builder(const RuntimeConstants& rt, Precision p, std::vector<std::vector<int>>* members)
      : rt_(rt), bits_(precision_bits(p)), members_(members) {}

  // `runs`: how often this graph runs per inference (the trip counts of the loops around it); `top`: the
  // model's own graph, whose kernels record their nodes when asked.
  void graph(const Graph& g, const GraphShapes& s, const GraphCosts& gc, double runs = 1, bool top = true) {
    std::vector<int> kernel_of_value(g.values.size(), -1);
    std::vector<std::size_t> mine;  // kernels opened by this graph (bodies of control flow open their own)
    for (int ni : g.order) {
      const Node& n = g.nodes[std::size_t(ni)];
      const NodeCost& c = gc.nodes[std::size_t(ni)];
      if (c.cls == OpClass::Control) {
        if (!c.has_bodies) continue;
        if (!c.trips_known) ++per_iteration_;
        const auto& subs = gc.subgraphs[std::size_t(ni)];
        const auto& sub_shapes = s.subgraphs[std::size_t(ni)];
        for (const auto& [body, k] : bodies_that_run(n, sub_shapes, subs)) graph(*body, sub_shapes[k], subs[k], runs * c.trips, false);
        continue;
      }
      if (c.cls == OpClass::View || c.cls == OpClass::Metadata || c.folded) continue;
      if (!c.known) ++untimed_;
      // Fusion: a pointwise op joins the kernel that produced its only-consumed input.
      bool pointwise = c.cls == OpClass::Elementwise || c.cls == OpClass::Quantize;
      int target = -1;
      if (pointwise) {
        for (std::size_t i = 0; i < n.inputs().size() && target < 0; ++i) {
          int v = n.inputs()[i];
          if (v < 0 || kernel_of_value[std::size_t(v)] < 0) continue;
          if (g.values[std::size_t(v)].consumers.size() != 1) continue;
          int k = kernel_of_value[std::size_t(v)];
          const Kernel& kk = kernels_[std::size_t(k)];
          bool bias_add = rt_.fuse_bias && n.op_type == "Add" && kk.p.gemm_like && !kk.p.conv && other_is_weight(g, n, v);
          if (rt_.fuse_elementwise ? kk.fuse_target : bias_add) target = k;
        }
      }
      if (target < 0 && rt_.fuse_decomposed && fusable_in_module(c.cls)) {
        std::string_view sc = module_scope(n.name);
        for (std::size_t i = 0; i < n.inputs().size() && target < 0 && !sc.empty(); ++i) {
          int v = n.inputs()[i];
          if (v < 0 || kernel_of_value[std::size_t(v)] < 0) continue;
          const Kernel& kk = kernels_[std::size_t(kernel_of_value[std::size_t(v)])];
          if (kk.scope == sc && !kk.p.gemm_like && fusable_in_module(kk.p.cls)) target = kernel_of_value[std::size_t(v)];
        }
      }
      if (target >= 0) {
        Kernel& k = kernels_[std::size_t(target)];
        k.p.flops += c.flops;
        for (int v : n.inputs()) {
          if (v < 0) continue;
          if (kernel_of_value[std::size_t(v)] == target) k.p.bytes -= value_bytes(s.values[std::size_t(v)]);  // stays on chip
          else {
            k.p.bytes += value_bytes(s.values[std::size_t(v)]);
            if (target > 0 && kernel_of_value[std::size_t(v)] == target - 1) k.p.reuse_bytes += value_bytes(s.values[std::size_t(v)]);
            if (runs > 1 && invariant(g, v)) k.p.invariant_bytes += value_bytes(s.values[std::size_t(v)]);
          }
        }
        for (int v : n.outputs())
          if (v >= 0) {
            k.p.bytes += value_bytes(s.values[std::size_t(v)]);
            kernel_of_value[std::size_t(v)] = target;
            k.produced.push_back(v);
          }
        if (!rt_.fuse_elementwise) k.fuse_target = false;
        if (members_ && top) (*members_)[std::size_t(target)].push_back(ni);
        continue;
      }
      Kernel k;
      k.p.first = &n;
      k.p.cls = c.cls;
      k.p.flops = c.steps ? c.flops - c.steps->count * c.steps->flops : c.flops;
      k.p.repeat = runs;
      const int previous = int(kernels_.size()) - 1;
      for (std::size_t i = 0; i < n.inputs().size(); ++i) {
        const int v = n.inputs()[i];
        if (v < 0) continue;
        const double b = input_bytes(c, i, s.values[std::size_t(v)]);
        k.p.bytes += b;
        if (previous >= 0 && kernel_of_value[std::size_t(v)] == previous) k.p.reuse_bytes += b;
        if (runs > 1 && invariant(g, v)) k.p.invariant_bytes += b;
      }
      for (int v : n.outputs()) if (v >= 0) k.p.bytes += value_bytes(s.values[std::size_t(v)]);
      shape_gemm(n, s, c, k);
      k.fuse_target = c.cls != OpClass::DataMovement && c.cls != OpClass::Other;
      k.scope = module_scope(n.name);
      int idx = int(kernels_.size());
      for (int v : n.outputs()) if (v >= 0) { kernel_of_value[std::size_t(v)] = idx; k.produced.push_back(v); }
      kernels_.push_back(std::move(k));
      if (members_) members_->push_back(top ? std::vector<int>{ni} : std::vector<int>{});
      mine.push_back(std::size_t(idx));
      if (c.steps && c.steps->count > 0) {
        add_steps(n, *c.steps, c.cls, runs);
        if (members_) members_->emplace_back();
      }
    }
    // A tensor made and used only inside one fused kernel never reaches memory: take back its write
    // (its in-kernel reads were never counted).
    for (std::size_t ki : mine) {
      Kernel& k = kernels_[ki];
      if (k.produced.size() < 2) continue;
      for (int v : k.produced) {
        const Value& val = g.values[std::size_t(v)];
        bool inside = !val.consumers.empty();
        for (int u : val.consumers)
          for (int o : g.nodes[std::size_t(u)].outputs())
            if (o >= 0 && kernel_of_value[std::size_t(o)] != kernel_of_value[std::size_t(v)]) inside = false;
        for (int out : g.outputs) if (out == v) inside = false;
        if (inside) k.p.bytes = std::max(0.0, k.p.bytes - value_bytes(s.values[std::size_t(v)]));
      }
      k.produced.clear();
    }
  }

  std::vector<Kernel>& kernels() { return kernels_; }
  std::size_t untimed() const { return untimed_; }
  std::size_t per_iteration() const { return per_iteration_; }

 private:
  const RuntimeConstants& rt_;
  int bits_;
  std::vector<std::vector<int>>* members_;
  std::vector<Kernel> kernels_;
  std::size_t untimed_ = 0;
  std::size_t per_iteration_ = 0;

  // Floating tensors move at the requested precision; integer tensors (indices, shapes) as they are.
  double value_bytes(const ValueShape& v) const {
    if (dtype_is_float(v.dtype)) return double(v.elements()) * bits_ / 8.0;
    return double(v.bytes());
  }
  // What the node reads of its input i: all of it, or the indexed part (see NodeCost::partial_input).
  double input_bytes(const NodeCost& c, std::size_t i, const ValueShape& v) const {
    if (int(i) != c.partial_input) return value_bytes(v);
    return read_elements(c, i, v) * (dtype_is_float(v.dtype) ? bits_ : dtype_bits(v.dtype)) / 8.0;
  }

  // The sequential part of a recurrent op: one kernel per time step, in order, after its parallel part.
  void add_steps(const Node& n, const SequentialSteps& st, OpClass cls, double runs) {
    Kernel k;
    k.p.first = &n;
    k.p.cls = cls;
    k.p.flops = st.flops;
    k.p.bytes = st.elements * bits_ / 8.0;
    k.p.repeat = runs * st.count;
    k.p.invariant_bytes = st.invariant_elements * bits_ / 8.0;
    k.p.gemm_like = st.gemm_m > 0;
    k.p.gemm_m = st.gemm_m;
    k.p.gemm_n = st.gemm_n;
    k.p.gemm_k = st.gemm_k;
    kernels_.push_back(std::move(k));
  }

  // Read alike by every run of a loop body: weights and values from outside the body.
  static bool invariant(const Graph& g, int v) {
    ValueKind k = g.values[std::size_t(v)].kind;
    return k == ValueKind::Initializer || k == ValueKind::OuterScope;
  }

  static bool other_is_weight(const Graph& g, const Node& n, int v) {
    for (int u : n.inputs())
      if (u >= 0 && u != v && g.values[std::size_t(u)].kind == ValueKind::Initializer) return true;
    return false;
  }

  static void shape_gemm(const Node& n, const GraphShapes& s, const NodeCost& c, Kernel& k) {
    if (c.steps && c.steps->proj_m > 0) {  // a recurrent op's parallel part: the input projection
      k.p.gemm_like = true;
      k.p.gemm_m = c.steps->proj_m;
      k.p.gemm_n = c.steps->proj_n;
      k.p.gemm_k = c.steps->proj_k;
      return;
    }
    if (c.macs <= 0 || n.outputs().empty() || n.outputs()[0] < 0) return;
    const ValueShape& y = s.values[std::size_t(n.outputs()[0])];
    if (!y.fully_known() || y.elements() == 0) return;
    k.p.gemm_like = true;
    const double out = double(y.elements());
    if (c.cls == OpClass::Conv && y.rank >= 3) {
      double group = double(std::max<std::int64_t>(1, n.attr_int("group", 1)));
      double cout = double(y.dims[1]);
      k.p.conv = true;
      k.p.gemm_batch = group;
      k.p.gemm_n = cout / group;
      k.p.gemm_m = out / cout;
      k.p.gemm_k = c.macs / out;
    } else if (y.rank >= 2) {
      k.p.gemm_m = double(y.dims[std::size_t(y.rank - 2)]);
      k.p.gemm_n = double(y.dims[std::size_t(y.rank - 1)]);
      k.p.gemm_batch = out / (k.p.gemm_m * k.p.gemm_n);
      k.p.gemm_k = c.macs / out;
    } else {
      k.p.gemm_m = 1;
      k.p.gemm_n = out;
      k.p.gemm_k = c.macs / out;
    }
  }
};

}  // namespace

KernelPlan plan_kernels(const Model& model, const Analysis& analysis, const RooflineConstants& constants,
                        std::string_view runtime, Precision precision, std::vector<std::vector<int>>* members,
                        bool fuse_pointwise) {
  require_node_costs(model, analysis);
  RuntimeConstants rt = constants.runtime(runtime);
  rt.fuse_elementwise = rt.fuse_elementwise && fuse_pointwise;
  if (members) members->clear();
  Builder b(rt, precision, members);
  b.graph(model.graph, analysis.shapes.graph, analysis.costs);
  KernelPlan plan;
  plan.runtime = rt.name;
  plan.precision = precision;
  plan.untimed = b.untimed();
  plan.per_iteration = b.per_iteration();
  plan.kernels.reserve(b.kernels().size());
  for (auto& k : b.kernels()) plan.kernels.push_back(k.p);
  return plan;
}

RooflineResult roofline_latency(const Model& model, const Analysis& analysis, const Device& device,
                                const RooflineConstants& constants, const RooflineOptions& opt) {
  return roofline_latency(plan_kernels(model, analysis, constants, opt.runtime, opt.precision), device, constants, opt);
}

RooflineResult roofline_latency(const KernelPlan& plan, const Device& device, const RooflineConstants& constants,
                                const RooflineOptions& opt) {
  RooflineResult r;
  const FamilyConstants& fam = constants.family_of(device);
  const RuntimeConstants& rt = constants.runtime(opt.runtime);
  if (plan.runtime != rt.name || plan.precision != opt.precision)
    throw Error("kernel plan for " + plan.runtime + "/" + std::string(precision_name(plan.precision)) + " used for " +
                    rt.name + "/" + std::string(precision_name(opt.precision)),
                {}, ErrorCode::Internal);
  if ((rt.kind == "cpu") != (device.kind == "cpu"))
    throw option_error("runtime '" + rt.name + "' runs on " + rt.kind + "s, but '" + device.id + "' is a " + device.kind);
  if (plan.untimed > 0)
    r.warnings.push_back(std::to_string(plan.untimed) + " nodes have unknown shapes or no cost rule; their time is not counted");
  if (plan.per_iteration > 0)
    r.warnings.push_back(std::to_string(plan.per_iteration) +
                         " loops run an unknown number of times; their bodies are timed once (per iteration)");

  for (const auto& n : plan.notes) r.warnings.push_back(n);
  if (plan.approximated > 0)
    r.warnings.push_back(std::to_string(plan.approximated) +
                         " kernels (control-flow bodies, recurrent steps) have their backward taken as twice their forward's work");
  const bool cpu_runtime = rt.kind == "cpu";
  double compute_scale = opt.compute_scale, bandwidth_scale = opt.bandwidth_scale;
  if (opt.threads < 0) throw option_error("threads must be >= 0 (0: every core)");
  if (cpu_runtime && opt.threads > 0 && device.cores.present && device.cores.value > 0) {
    const double share = std::min(double(opt.threads), device.cores.value) / device.cores.value;
    compute_scale *= share;
    bandwidth_scale *= share;
  }
  const double sms = device.sm_count.present ? device.sm_count.value * compute_scale : 0;
  const double bw = device.memory_bandwidth_gbs.present
                        ? device.memory_bandwidth_gbs.value * 1e9 * bandwidth_scale * fam.bandwidth_ratio : 0;
  const bool bw_known = bw > 0;
  if (!bw_known)
    r.warnings.push_back("the catalog has no memory bandwidth for '" + device.id + "': memory time is not counted (compute and dispatch only)");
  const double clock = fam.clock_ratio * (device.clock_ratio.present ? device.clock_ratio.value : 1.0);
  const double fp32_peak = device.peak(Precision::FP32) * 1e12 * compute_scale * clock;
  // The math precision of matrix kernels depends only on (conv or not, runtime policy, device): resolved
  // once here, not per kernel (this loop runs for every device, batch and MIG slice the page shows).
  struct GemmRoof {
    double peak, eff;
  } gemm_roof[2];
  for (int conv = 0; conv < 2; ++conv) {
    Precision p = opt.precision;
    bool tf32_policy = conv ? rt.conv_fp32_as_tf32 : rt.matmul_fp32_as_tf32;
    if (p == Precision::FP32 && tf32_policy && device.supports(Precision::TF32)) p = Precision::TF32;
    if (!device.supports(p)) p = Precision::FP32;
    bool tensor = is_tensor_precision(p);
    gemm_roof[conv] = {device.peak(p) * 1e12 * compute_scale * clock,
                       conv ? (tensor ? fam.conv_eff_tensor : fam.conv_eff_fp32)
                            : (tensor ? fam.gemm_eff_tensor : fam.gemm_eff_fp32)};
  }
  // Reciprocals hoisted: this loop runs for every kernel x device x batch x MIG slice the page shows.
  // Divisions that feed a ceil() stay divisions, so that wave counts are exact at tile multiples.
  const double ms_per_byte = bw_known ? 1e3 / (bw * fam.mem_eff) : 0, inv_bw = bw_known ? 1 / bw : 0;
  const double inv_fp32_peak = 1 / fp32_peak;
  // L2 term: of the bytes a kernel reads from its predecessor, the share that fits in L2 (all of them
  // when they fit, L2/reuse otherwise) costs 1/l2_bw_ratio of a DRAM byte. Off when L2 is unknown.
  const double l2_bytes = device.l2_mb.present ? device.l2_mb.value * 1048576.0 : 0;
  const bool l2_on = l2_bytes > 0 && fam.l2_bw_ratio > 1;
  const double l2_saving = l2_on ? 1 - 1 / fam.l2_bw_ratio : 0;
  const double vector_ms_per_flop = 1e3 / (fp32_peak * fam.vector_eff);
  // Runs after the first of a repeated kernel find what every run reads (weights, the recurrent matrix)
  // still in the largest cache when it fits there, and pay only for the rest.
  const double cache_bytes = device.l3_mb.present ? device.l3_mb.value * 1048576.0
                             : device.l2_mb.present ? device.l2_mb.value * 1048576.0 : 0;
  const double launch_ms = fam.launch_us / 1e3, dispatch_ms = (opt.dispatch_us >= 0 ? opt.dispatch_us : rt.dispatch_us) / 1e3;
  double cpu_t = 0, gpu_t = 0, weighted_intensity = 0;
  if (opt.keep_kernels) r.kernels.reserve(plan.kernels.size());
  for (const auto& k : plan.kernels) {
    double ms_per_flop = vector_ms_per_flop, inv_peak = inv_fp32_peak;
    if (k.gemm_like) {
      const GemmRoof& roof = gemm_roof[k.conv];
      double util = 1;
      double reduce = k.gemm_k;
      if (fam.tile > 0 && sms > 0) {
        double tiles = std::ceil(k.gemm_m / fam.tile) * std::ceil(k.gemm_n / fam.tile) * k.gemm_batch;
        if (k.split_k && tiles < sms) {
          // as many slices of the reduction as fill one wave, each at least a tile deep
          const double split = std::max(1.0, std::min(std::floor(sms / tiles), std::floor(k.gemm_k / fam.tile)));
          tiles *= split;
          reduce = k.gemm_k / split;
        }
        double waves = std::ceil(tiles / sms);
        util *= tiles / (waves * sms);
      }
      if (fam.k_half > 0) util *= reduce / (reduce + fam.k_half);
      ms_per_flop = 1e3 / (roof.peak * roof.eff * util);
      inv_peak = 1 / roof.peak;
    }
    const double flops = k.flops, bytes = k.bytes;
    const double compute_ms = flops > 0 ? flops * ms_per_flop : 0;
    double dram_bytes = bytes;
    if (l2_on && k.reuse_bytes > 0) dram_bytes -= std::min({k.reuse_bytes, l2_bytes, bytes}) * l2_saving;
    const double memory_ms = dram_bytes * ms_per_byte;
    const double first_ms = std::max({compute_ms, memory_ms, launch_ms});
    const double n = k.repeat;
    double time_ms = n * first_ms;
    if (n > 1 && k.invariant_bytes > 0 && k.invariant_bytes <= cache_bytes) {
      const double rest_ms = std::max({compute_ms, std::max(0.0, dram_bytes - k.invariant_bytes) * ms_per_byte, launch_ms});
      time_ms = first_ms + (n - 1) * rest_ms;
    }
    const double one_ms = n > 0 ? time_ms / n : first_ms;
    double intensity = one_ms > 0 ? std::max(flops * inv_peak, bytes * inv_bw) * 1e3 / one_ms : 0;
    weighted_intensity += std::min(1.0, intensity) * time_ms;
    r.gpu_busy_ms += time_ms;
    r.busy_ms_by_phase[std::size_t(k.phase)] += time_ms;
    if (launch_ms >= std::max(compute_ms, memory_ms)) r.launch_bound_ms += time_ms;
    else if (compute_ms >= memory_ms) r.compute_bound_ms += time_ms;
    // The host issues kernels one after another; a kernel starts when issued and the device is free.
    // n runs in a row: the device finishes at the latest of its own queue, the first issue, or the last
    // issue, each followed by the runs still to do (the closed form of n single steps).
    if (cpu_runtime || rt.serial_issue) {
      cpu_t += n * dispatch_ms;
      gpu_t += n * (dispatch_ms + one_ms);
    } else if (n > 0) {
      const double issued = cpu_t;
      cpu_t += n * dispatch_ms;
      gpu_t = std::max({gpu_t + n * one_ms, issued + dispatch_ms + n * one_ms, cpu_t + one_ms});
    }
    if (opt.keep_kernels) {
      KernelTime t;
      if (k.first) {
        t.name = k.first->name.empty() ? k.first->display_name() : std::string(k.first->name);
        t.op_type = k.first->op_type;
      } else {
        t.name = std::string(k.label);
      }
      t.phase = k.phase;
      t.cls = k.cls;
      t.flops = flops;
      t.bytes = bytes;
      t.repeat = n;
      t.compute_ms = compute_ms;
      t.memory_ms = memory_ms;
      t.time_ms = time_ms;
      t.compute_bound = compute_ms >= memory_ms;
      r.kernels.push_back(std::move(t));
    }
  }
  r.dispatch_ms = cpu_t;
  r.latency_ms = gpu_t + (plan.kernels.empty() ? 0 : rt.step_us / 1e3);
  if (rt.serial_issue && r.busy_ms_by_phase[std::size_t(KernelPhase::Forward)] < r.gpu_busy_ms)
    r.warnings.push_back("runtime '" + rt.name + "': its issue times were fitted on no_grad inference only; a training "
                         "step's backward and update kernels are assumed to replay the same way");
  r.intensity = r.gpu_busy_ms > 0 ? weighted_intensity / r.gpu_busy_ms : 0;
  return r;
}

}  // namespace perfcard
