#include "perfcard/memory_model.h"

#include "perfcard/error.h"
#include "perfcard/liveness.h"
#include "perfcard/op_registry.h"

namespace perfcard {

Mode parse_mode(std::string_view s) {
  if (s == "inference") return Mode::Inference;
  if (s == "training") return Mode::Training;
  throw option_error("unknown mode '" + std::string(s) + "' (use inference or training)");
}

namespace {

void weight_bytes(const Graph& g, int bits, double& total, double& param_elems) {
  for (const auto& t : g.initializers) {
    double n = double(t.num_elements());
    if (dtype_is_float(t.dtype)) { total += n * bits / 8.0; param_elems += n; }
    else total += n * dtype_bits(t.dtype) / 8.0;
  }
  for (const auto& n : g.nodes)
    for (const auto& a : n.attributes)
      for (const auto& sub : a.graphs) weight_bytes(sub, bits, total, param_elems);
}

double saved_for_backward(const Graph& g, const GraphShapes& s, const GraphCosts& c, int bits) {
  double total = 0;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    OpClass cls = c.nodes[i].cls;
    if (cls == OpClass::View || cls == OpClass::Metadata || c.nodes[i].folded) continue;
    for (int v : g.nodes[i].outputs)
      if (v >= 0 && dtype_is_float(s.values[std::size_t(v)].dtype)) total += double(s.values[std::size_t(v)].elements()) * bits / 8.0;
  }
  return total;
}

}  // namespace

MemoryBreakdown estimate_memory(const Model& model, const Analysis& a, Precision p, Mode mode, const RuntimeConstants& rt) {
  MemoryBreakdown m;
  const int bits = precision_bits(p);
  double params = 0;
  weight_bytes(model.graph, bits, m.weights, params);
  LivenessResult live = peak_live_memory(model.graph, a.shapes.graph, bits);
  m.activations = double(live.peak_bytes) * (1 + rt.allocator_overhead);
  m.workspace = rt.workspace_mb * 1024 * 1024;
  m.context = rt.context_mb * 1024 * 1024;
  if (mode == Mode::Training) {
    m.gradients = params * bits / 8.0;
    // Adam keeps two fp32 moments per parameter; below 32 bits mixed precision adds an fp32 master copy.
    m.optimizer = params * (8.0 + (bits < 32 ? 4.0 : 0.0));
    m.saved_activations = saved_for_backward(model.graph, a.shapes.graph, a.costs, bits);
  }
  return m;
}

}  // namespace perfcard
