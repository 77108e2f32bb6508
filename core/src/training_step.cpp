#include "perfcard/training_step.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <unordered_set>

#include "perfcard/autograd_memory.h"
#include "perfcard/op_registry.h"

namespace perfcard {

std::string_view kernel_phase_name(KernelPhase p) {
  switch (p) {
    case KernelPhase::Forward: return "forward";
    case KernelPhase::Backward: return "backward";
    case KernelPhase::Update: return "update";
  }
  return "forward";
}

namespace {

bool matrix_op(const Node& n) {
  return n.domain.empty() && (n.op_type == "Conv" || n.op_type == "ConvTranspose" || n.op_type == "MatMul" ||
                              n.op_type == "Gemm" || n.op_type == "Einsum");
}

// PyTorch's multi_tensor_apply (ATen's MultiTensorApply.cuh): a launch takes at most this many tensors of
// each list depth and 320 blocks of 65,536-element chunks; a foreach op over many weights is several launches.
constexpr double kMaxTensors[] = {110, 64, 48, 36, 30};
constexpr double kMaxBlocks = 320, kChunk = 65536;

struct Pass {
  const char* label;
  int depth;            // tensor lists the kernel walks
  double bytes;         // per weight element, fp32 state
};

// The update's passes as torch 2.x's foreach optimizers run them (no weight decay; step counters on the host).
constexpr Pass kAdam[] = {
    {"adam: exp_avg.lerp_(grad)", 2, 12},
    {"adam: exp_avg_sq.mul_(beta2)", 1, 8},
    {"adam: exp_avg_sq.addcmul_(grad, grad)", 3, 12},
    {"adam: sqrt(exp_avg_sq)", 2, 8},
    {"adam: denom.div_(bias_correction2)", 1, 8},
    {"adam: denom.add_(eps)", 1, 8},
    {"adam: param.addcdiv_(exp_avg, denom)", 3, 16},
};
constexpr Pass kSgd[] = {
    {"sgd: buf.mul_(momentum)", 1, 8},
    {"sgd: buf.add_(grad)", 2, 12},
    {"sgd: param.add_(buf, -lr)", 2, 12},
};
// No optimizer state: plain SGD, the weights stepped by their gradients.
constexpr Pass kPlainSgd = {"sgd (no momentum): param.add_(grad, -lr)", 2, 12};
// fp16 mixed precision steps through a GradScaler (PyTorch's AMP recipe): the gradients are unscaled and
// checked for inf/NaN in one pass before the update.
constexpr Pass kUnscale = {"amp: unscale and check the gradients", 1, 8};

class Backward {
 public:
  Backward(const Model& m, const Analysis& a, Precision p, std::vector<std::vector<int>> members, KernelPlan forward)
      : g_(m.graph), s_(a.shapes.graph), c_(a.costs), bits_(precision_bits(p)), members_(std::move(members)),
        fwd_(std::move(forward)), flags_(gradient_flags(g_, s_, c_)), kernel_of_(g_.nodes.size(), -1),
        returned_(g_.values.size(), false), stamp_(g_.values.size(), -1), passes_(g_.nodes.size(), false) {
    for (std::size_t k = 0; k < members_.size(); ++k)
      for (int n : members_[k]) kernel_of_[std::size_t(n)] = int(k);
    for (int v : g_.outputs)
      if (v >= 0) returned_[std::size_t(v)] = true;
    for (std::size_t n = 0; n < g_.nodes.size(); ++n)
      for (int o : g_.nodes[n].outputs()) passes_[n] = passes_[n] || grad(o);
  }

  KernelPlan build(Optimizer optimizer, bool mixed, bool scaler) {
    KernelPlan plan;
    plan.runtime = fwd_.runtime;
    plan.precision = fwd_.precision;
    plan.untimed = fwd_.untimed;
    plan.per_iteration = fwd_.per_iteration;
    const auto weights = trainable_weights();
    // Autocast casts each fp32 weight a matrix product reads to 16 bits once per forward; the cast's
    // backward widens its gradient again.
    std::vector<PlannedKernel> widen;
    if (mixed)
      for (const auto& [v, n] : weights) {
        if (!read_by_matrix_op(v)) continue;
        plan.kernels.push_back(pointwise(nullptr, "autocast: fp32 weight to 16 bits", n * 4 + n * bits_ / 8.0,
                                         KernelPhase::Forward));
        widen.push_back(pointwise(nullptr, "autocast: weight gradient to fp32", n * bits_ / 8.0 + n * 4,
                                  KernelPhase::Backward));
      }
    for (std::size_t i = 0; i < fwd_.kernels.size(); ++i) {
      const PlannedKernel& k = fwd_.kernels[i];
      // In training a BatchNorm normalizes with the batch's own statistics: a reduction over its input
      // comes first (and the running averages are updated), where inference reads stored ones.
      if (k.first && k.first->op_type == "BatchNormalization" && !members_[i].empty() && grad(input(*k.first, 0))) {
        PlannedKernel stats = pointwise(k.first, nullptr, bytes(input(*k.first, 0)), KernelPhase::Forward);
        stats.cls = OpClass::Reduction;
        stats.flops = 2 * bytes(input(*k.first, 0)) * 8.0 / bits_;
        stats.repeat = k.repeat;
        plan.kernels.push_back(stats);
      }
      plan.kernels.push_back(k);
    }
    for (std::size_t i = fwd_.kernels.size(); i-- > 0;) backward_of(i, plan.kernels);
    for (auto& k : widen) plan.kernels.push_back(k);
    double elements = 0, chunks = 0;
    for (const auto& [v, n] : weights) {
      elements += n;
      chunks += std::ceil(n / kChunk);
    }
    auto run = [&](const Pass& p) {
      if (weights.empty()) return;
      const double launches = std::max(std::ceil(double(weights.size()) / kMaxTensors[p.depth - 1]), std::ceil(chunks / kMaxBlocks));
      PlannedKernel k = pointwise(nullptr, p.label, p.bytes * elements / launches, KernelPhase::Update);
      k.flops = elements / launches;
      k.repeat = launches;
      plan.kernels.push_back(k);
    };
    if (scaler) run(kUnscale);
    if (optimizer == Optimizer::Adam) for (const auto& p : kAdam) run(p);
    if (optimizer == Optimizer::Sgd) for (const auto& p : kSgd) run(p);
    if (optimizer == Optimizer::None) run(kPlainSgd);
    plan.approximated = approximated_;
    return plan;
  }

 private:
  const Graph& g_;
  const GraphShapes& s_;
  const GraphCosts& c_;
  int bits_;
  std::vector<std::vector<int>> members_;
  KernelPlan fwd_;
  GradientFlags flags_;
  std::vector<int> kernel_of_;  // by node: the forward kernel that runs it, -1 for views and the like
  std::vector<bool> returned_;  // by value: a graph output
  std::vector<int> stamp_;      // by value: the last kernel whose boundary listed it
  std::vector<bool> passes_;    // by node: some output needs a gradient (its backward runs)
  std::size_t approximated_ = 0;

  // Floating tensors move at the run's precision, others as they are (as the forward's planner counts).
  double bytes(int v) const {
    if (v < 0) return 0;
    const ValueShape& vs = s_.values[std::size_t(v)];
    if (!vs.fully_known()) return 0;
    return dtype_is_float(vs.dtype) ? double(vs.elements()) * bits_ / 8.0 : double(vs.bytes());
  }
  bool grad(int v) const { return v >= 0 && flags_.grad[std::size_t(v)]; }
  int input(const Node& n, std::size_t i) const { return i < n.inputs().size() ? n.inputs()[i] : -1; }

  std::vector<std::pair<int, double>> trainable_weights() const {
    std::vector<std::pair<int, double>> w;
    for (std::size_t v = 0; v < g_.values.size(); ++v)
      if (flags_.trainable[v]) w.emplace_back(int(v), double(s_.values[v].elements()));
    return w;
  }
  // Read by a matrix product, directly or through what the exporter folded from it (a tied head's
  // transpose), as autocast sees the weight.
  bool read_by_matrix_op(int v) const {
    for (int u : g_.values[std::size_t(v)].consumers) {
      const Node& n = g_.nodes[std::size_t(u)];
      if (matrix_op(n)) return true;
      if (!c_.nodes[std::size_t(u)].folded) continue;
      for (int o : n.outputs())
        if (o >= 0)
          for (int w : g_.values[std::size_t(o)].consumers)
            if (matrix_op(g_.nodes[std::size_t(w)])) return true;
    }
    return false;
  }
  // A weight, or what the exporter folded from one (the transpose a tied head reads).
  bool weight_like(int v) const {
    if (v < 0) return false;
    if (flags_.trainable[std::size_t(v)]) return true;
    const int p = g_.values[std::size_t(v)].producer;
    return p >= 0 && c_.nodes[std::size_t(p)].folded && grad(v);
  }

  static PlannedKernel pointwise(const Node* first, const char* label, double bytes, KernelPhase phase) {
    PlannedKernel k;
    k.first = first;
    if (label) k.label = label;
    k.cls = OpClass::Elementwise;
    k.bytes = bytes;
    k.phase = phase;
    return k;
  }
  static PlannedKernel matrix(const PlannedKernel& fwd, double m, double n, double kk, double batch, double bytes,
                              bool split) {
    PlannedKernel k;
    k.first = fwd.first;
    k.cls = fwd.cls;
    k.phase = KernelPhase::Backward;
    k.gemm_like = true;
    k.conv = fwd.conv;
    k.gemm_m = m;
    k.gemm_n = n;
    k.gemm_k = kk;
    k.gemm_batch = batch;
    k.flops = 2 * m * n * kk * batch;
    k.bytes = bytes;
    k.split_k = split;
    k.repeat = fwd.repeat;
    return k;
  }

  // Values a kernel reads from outside itself, and values it makes that others read (or the graph returns).
  void boundary(std::size_t k, std::vector<int>& ins, std::vector<int>& outs) {
    for (int n : members_[k]) {
      const Node& node = g_.nodes[std::size_t(n)];
      for (int v : node.inputs()) {
        if (v < 0 || stamp_[std::size_t(v)] == int(k)) continue;
        stamp_[std::size_t(v)] = int(k);
        const int p = g_.values[std::size_t(v)].producer;
        if (p < 0 || kernel_of_[std::size_t(p)] != int(k)) ins.push_back(v);
      }
      for (int v : node.outputs()) {
        if (v < 0) continue;
        bool outside = returned_[std::size_t(v)];
        for (int u : g_.values[std::size_t(v)].consumers) outside = outside || kernel_of_[std::size_t(u)] != int(k);
        if (outside) outs.push_back(v);
      }
    }
  }

  // A value read by several ops on the gradient's path gets a gradient from each: autograd sums them,
  // one accumulation (read two, write one) per extra reader.
  double accumulations(int v) const {
    std::unordered_set<long long> readers;
    for (int u : g_.values[std::size_t(v)].consumers) {
      if (!passes_[std::size_t(u)]) continue;
      const int k = kernel_of_[std::size_t(u)];
      readers.insert(k >= 0 ? k : -1LL - u);
    }
    return readers.size() > 1 ? double(readers.size() - 1) : 0;
  }

  void backward_of(std::size_t i, std::vector<PlannedKernel>& out) {
    const PlannedKernel& f = fwd_.kernels[i];
    if (members_[i].empty()) {
      // A recurrent op's time steps (their node is the graph's own) run backward only when the op does.
      const bool own = f.first && f.first >= g_.nodes.data() && f.first < g_.nodes.data() + g_.nodes.size();
      if (own && !passes_[std::size_t(f.first - g_.nodes.data())]) return;
      // A control-flow body or a recurrent op's time steps: the textbook estimate, twice the forward's
      // work (a matrix product's two operand gradients are two products of its size).
      ++approximated_;
      PlannedKernel b = f;
      b.phase = KernelPhase::Backward;
      b.split_k = false;
      if (f.gemm_like) {
        out.push_back(b);
        out.push_back(b);
      } else {
        b.flops *= 2;
        b.bytes *= 2;
        out.push_back(b);
      }
      return;
    }
    std::vector<int> ins, outs;
    boundary(i, ins, outs);
    bool any = false, out_grad = false;
    for (int v : ins) any = any || grad(v);
    for (int v : outs) out_grad = out_grad || grad(v);
    if (!any || !out_grad) return;  // off the gradient's path, or no float result (ArgMax, a comparison)
    double dy = 0;
    for (int v : outs)
      if (grad(v)) {
        dy += bytes(v);
        for (double a = accumulations(v); a > 0; --a) out.push_back(pointwise(f.first, nullptr, 3 * bytes(v), KernelPhase::Backward));
      }
    const Node& n = *f.first;
    const std::size_t before = out.size();
    if (f.gemm_like && matrix_op(n)) {
      matrix_backward(f, n, ins, dy, out);
    } else if (f.gemm_like) {
      ++approximated_;  // a recurrent op's input projection: its two products
      PlannedKernel b = f;
      b.phase = KernelPhase::Backward;
      out.push_back(b);
      out.push_back(b);
    } else {
      pointwise_backward(f, n, i, ins, dy, out);
    }
    for (std::size_t k = before; k < out.size(); ++k) out[k].repeat = f.repeat;
  }

  void matrix_backward(const PlannedKernel& f, const Node& n, const std::vector<int>& ins, double dy,
                       std::vector<PlannedKernel>& out) const {
    const int a = input(n, 0), w = input(n, 1);
    // A weight shared by every row of a batched product is one 2-D product over all rows, as F.linear runs.
    const bool weight = weight_like(w);
    const bool flat = weight && !f.conv;
    const double m = flat ? f.gemm_m * f.gemm_batch : f.gemm_m, batch = flat ? 1 : f.gemm_batch;
    // The operand's gradient: dY times the other operand, written at the operand's size.
    if (grad(a)) out.push_back(matrix(f, m, f.gemm_k, f.gemm_n, batch, dy + bytes(w) + bytes(a), false));
    // The other's: the first operand against dY, reduced over the rows (a weight: over the whole batch).
    if (grad(w)) out.push_back(matrix(f, f.gemm_k, f.gemm_n, m, batch, bytes(a) + dy + bytes(w), weight));
    // A bias (Conv's or Gemm's third input, or the Add fused with a product): dY summed over the rows.
    for (int v : ins) {
      if (v == a || v == w || !grad(v)) continue;
      PlannedKernel r = pointwise(f.first, nullptr, dy + bytes(v), KernelPhase::Backward);
      r.cls = OpClass::Reduction;
      r.flops = dy * 8.0 / bits_;
      out.push_back(r);
    }
  }

  void pointwise_backward(const PlannedKernel& f, const Node& n, std::size_t k, const std::vector<int>& ins, double dy,
                          std::vector<PlannedKernel>& out) const {
    const OpSpec* spec = find_op(n.domain, n.op_type);
    const Saved saved = spec ? spec->saved : Saved::Nothing;
    // An exporter's decomposition of one eager op (GELU, LayerNorm, ...), which the runtime's plan keeps
    // as one kernel: one backward, keeping the op's input.
    const bool module = members_[k].size() > 1;
    bool norm = f.cls == OpClass::Normalization;
    if (module)
      for (int m : members_[k]) norm = norm || c_.nodes[std::size_t(m)].cls == OpClass::Reduction;
    double dx = 0, largest = 0;
    for (int v : ins)
      if (grad(v)) {
        dx += bytes(v);
        largest = std::max(largest, bytes(v));
      }
    if (!module && saved == Saved::Nothing) {
      // Sums, differences, views and copies: the gradient passes through as it is (Concat's are views of
      // it); a broadcast input gets dY summed down to its shape, a copy's gradient is copied back.
      if (f.cls == OpClass::Elementwise) {
        for (int v : ins)
          if (grad(v) && bytes(v) < dy) out.push_back(pointwise(f.first, nullptr, dy + bytes(v), KernelPhase::Backward));
        return;
      }
      if (n.op_type == "Concat") return;
      out.push_back(pointwise(f.first, nullptr, dy + dx, KernelPhase::Backward));
      return;
    }
    const int x = input(n, 0), y = n.outputs().empty() ? -1 : n.outputs()[0];
    if (norm) {
      // statistics of x and dY, then dX from them: two passes over the activation
      const double xb = module ? largest : bytes(x);
      PlannedKernel r = pointwise(f.first, nullptr, xb + dy, KernelPhase::Backward);
      r.cls = OpClass::Reduction;
      r.flops = f.flops;
      out.push_back(r);
      PlannedKernel p = pointwise(f.first, nullptr, xb + dy + dx, KernelPhase::Backward);
      p.cls = f.cls;
      p.flops = f.flops;
      out.push_back(p);
      return;
    }
    double reads = 0;  // what the backward formula reads besides dY
    if (module) {
      reads = largest;
    } else {
      switch (saved) {
        case Saved::Nothing: break;
        case Saved::Input:  // a pool or a mean keeps its input for its shape; its backward spreads dY
          reads = f.cls == OpClass::Pooling || f.cls == OpClass::Reduction ? 0 : bytes(x);
          break;
        case Saved::Output: reads = bytes(y); break;
        case Saved::InputAndOutput: reads = bytes(x) + bytes(y); break;
        case Saved::Operands:
          for (int v : ins)
            if (grad(v))
              for (int o : ins) reads += o == v ? 0 : bytes(o);
          break;
        case Saved::Divisor: reads = bytes(input(n, 1)) + (grad(input(n, 1)) ? bytes(x) : 0); break;
        case Saved::Normalized: reads = bytes(x); break;
        case Saved::WithIndices:
          reads = y >= 0 && s_.values[std::size_t(y)].fully_known() ? double(s_.values[std::size_t(y)].elements()) * 8 : 0;
          break;
        case Saved::Indices:  // an embedding: the whole table's gradient is zeroed, then dY's rows added
          reads = bytes(input(n, 1)) + dy;
          break;
        case Saved::DataAndIndices: reads = bytes(x) + bytes(input(n, 1)); break;
        case Saved::Condition: reads = bytes(x); break;
      }
    }
    PlannedKernel b = pointwise(f.first, nullptr, dy + reads + dx, KernelPhase::Backward);
    b.cls = f.cls;
    b.flops = 2 * f.flops;
    out.push_back(b);
  }
};

}  // namespace

KernelPlan plan_training_step(const Model& model, const Analysis& analysis, const RooflineConstants& constants,
                              std::string_view runtime, Precision precision, Optimizer optimizer) {
  std::vector<std::vector<int>> members;
  // A runtime that fuses pointwise ops into their producers (onnxruntime) models no training: the step is
  // timed as a training framework runs it, one op a kernel, with that runtime's costs otherwise.
  const bool fuses = constants.runtime(runtime).fuse_elementwise;
  KernelPlan forward = plan_kernels(model, analysis, constants, runtime, precision, &members, /*fuse_pointwise=*/false);
  const bool mixed = precision == Precision::FP16 || precision == Precision::BF16;
  Backward b(model, analysis, precision, std::move(members), std::move(forward));
  KernelPlan plan = b.build(optimizer, mixed, precision == Precision::FP16);
  if (fuses)
    plan.notes.push_back("training on " + std::string(runtime) + ": timed one op a kernel, as a training framework runs "
                         "it (the runtime's pointwise fusion is an inference optimization)");
  return plan;
}

}  // namespace perfcard
