// Shape and cost rules for the compute-heavy ops: convolutions, matrix products, pooling,
// normalizations, reductions and softmax.
#include <algorithm>
#include <cmath>
#include <map>

#include "ops/rule_util.h"
#include "ops/rules.h"

namespace perfcard::ops {
namespace {

struct Window {
  std::vector<std::int64_t> kernel, strides, dilations, pads;  // pads: begins then ends
  std::string auto_pad;
  bool ceil_mode = false;
};

Window window_attrs(ShapeContext& c, std::size_t spatial, std::span<const std::int64_t> kernel_from_weight) {
  Window w;
  const Node& n = c.node();
  w.kernel = n.attr_ints("kernel_shape");
  if (w.kernel.empty()) w.kernel.assign(kernel_from_weight.begin(), kernel_from_weight.end());
  if (w.kernel.size() != spatial)
    c.fail("kernel has " + std::to_string(w.kernel.size()) + " dims for " + std::to_string(spatial) + " spatial dims");
  w.strides = n.attr_ints("strides");
  if (w.strides.empty()) w.strides.assign(spatial, 1);
  w.dilations = n.attr_ints("dilations");
  if (w.dilations.empty()) w.dilations.assign(spatial, 1);
  w.pads = n.attr_ints("pads");
  if (w.pads.empty()) w.pads.assign(2 * spatial, 0);
  w.auto_pad = n.attr_string("auto_pad", "NOTSET");
  w.ceil_mode = n.attr_int("ceil_mode", 0) != 0;
  if (w.strides.size() != spatial || w.dilations.size() != spatial || w.pads.size() != 2 * spatial)
    c.fail("strides/dilations/pads do not match the " + std::to_string(spatial) + " spatial dims");
  for (std::size_t i = 0; i < spatial; ++i) {
    if (w.kernel[i] <= 0 && w.kernel[i] != -1) c.fail("kernel dim " + std::to_string(w.kernel[i]) + " is not positive");
    if (w.strides[i] <= 0 || w.dilations[i] <= 0) c.fail("strides and dilations must be positive");
    if (w.pads[i] < 0 || w.pads[i + spatial] < 0) c.fail("negative padding");
    constexpr std::int64_t big = std::int64_t{1} << 31;  // keeps window arithmetic on dims < 2^50 in range
    if (w.kernel[i] > big || w.strides[i] > big || w.dilations[i] > big || w.pads[i] > big || w.pads[i + spatial] > big)
      c.fail("kernel, strides, dilations and pads must be below 2^31");
  }
  return w;
}

std::vector<std::int64_t> window_out(ShapeContext& c, const Window& w, std::span<const std::int64_t> in_spatial) {
  std::vector<std::int64_t> out;
  std::size_t s = in_spatial.size();
  for (std::size_t i = 0; i < s; ++i) {
    std::int64_t d = in_spatial[i];
    if (d < 0 || w.kernel[i] < 0) { out.push_back(-1); continue; }
    std::int64_t eff = w.dilations[i] * (w.kernel[i] - 1) + 1;
    std::int64_t o;
    if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") {
      o = (d + w.strides[i] - 1) / w.strides[i];
    } else if (w.auto_pad == "VALID") {
      o = d < eff ? 0 : (d - eff) / w.strides[i] + 1;
    } else {
      std::int64_t span = d + w.pads[i] + w.pads[i + s] - eff;
      if (span < 0) c.fail("kernel (" + std::to_string(eff) + ") is larger than the padded input (" + std::to_string(d + w.pads[i] + w.pads[i + s]) + ")");
      o = (w.ceil_mode ? (span + w.strides[i] - 1) / w.strides[i] : span / w.strides[i]) + 1;
      // ceil_mode must not start a window in the right padding only
      if (w.ceil_mode && (o - 1) * w.strides[i] >= d + w.pads[i]) --o;
    }
    out.push_back(o);
  }
  return out;
}

std::int64_t mul_known(std::int64_t a, std::int64_t b) { return a < 0 || b < 0 ? -1 : sat_mul(a, b); }

}  // namespace

void rule_conv(ShapeContext& c) {
  const ValueShape& x = c.input(0);
  const std::size_t w_input = c.node().op_type == "QLinearConv" ? 3 : 1;
  const ValueShape& w = c.input(w_input);
  DType out_type = c.node().op_type == "QLinearConv" ? c.input(7).dtype
                   : c.node().op_type == "ConvInteger" ? DType::Int32 : x.dtype;
  if (x.rank < 0 || w.rank < 0) {
    ValueShape s;
    s.dtype = out_type;
    if (x.rank >= 0) { s.rank = x.rank; s.dims.assign(std::size_t(x.rank), -1); }
    return c.set_output(0, std::move(s));
  }
  if (x.rank < 3) c.fail("Conv input has rank " + std::to_string(x.rank) + "; expected N, C and spatial dims");
  if (w.rank != x.rank) c.fail("Conv weight rank " + std::to_string(w.rank) + " differs from input rank " + std::to_string(x.rank));
  std::int64_t group = c.node().attr_int("group", 1);
  if (group <= 0) c.fail("group must be positive");
  if (x.dims[1] >= 0 && w.dims[1] >= 0 && x.dims[1] != sat_mul(w.dims[1], group))
    c.fail("input has " + std::to_string(x.dims[1]) + " channels but weight expects " + std::to_string(w.dims[1]) + " x group " + std::to_string(group));
  std::size_t sp = std::size_t(x.rank - 2);
  Window win = window_attrs(c, sp, std::vector<std::int64_t>(w.dims.begin() + 2, w.dims.end()));
  std::vector<std::int64_t> out = {x.dims[0], w.dims[0]};
  auto o = window_out(c, win, std::vector<std::int64_t>(x.dims.begin() + 2, x.dims.end()));
  out.insert(out.end(), o.begin(), o.end());
  c.set_output(0, ValueShape::of(out_type, out));
}

void rule_conv_transpose(ShapeContext& c) {
  const ValueShape& x = c.input(0);
  const ValueShape& w = c.input(1);
  if (x.rank < 0 || w.rank < 0) return c.set_output(0, ValueShape{x.dtype, x.rank, std::vector<std::int64_t>(std::size_t(std::max(0, x.rank)), -1), nullptr, false});
  if (x.rank < 3 || w.rank != x.rank) c.fail("ConvTranspose expects input and weight of equal rank >= 3");
  std::int64_t group = c.node().attr_int("group", 1);
  if (group <= 0) c.fail("group must be positive");
  std::size_t sp = std::size_t(x.rank - 2);
  Window win = window_attrs(c, sp, std::vector<std::int64_t>(w.dims.begin() + 2, w.dims.end()));
  std::vector<std::int64_t> out = {x.dims[0], mul_known(w.dims[1], group)};
  std::vector<std::int64_t> output_shape = c.node().attr_ints("output_shape");
  std::vector<std::int64_t> out_pad = c.node().attr_ints("output_padding");
  if (out_pad.empty()) out_pad.assign(sp, 0);
  if (out_pad.size() != sp) c.fail("output_padding has " + std::to_string(out_pad.size()) + " entries for " + std::to_string(sp) + " spatial dims");
  if (!output_shape.empty() && output_shape.size() < sp) c.fail("output_shape has fewer entries than spatial dims");
  for (std::size_t i = 0; i < sp; ++i) {
    if (!output_shape.empty()) { out.push_back(output_shape[output_shape.size() - sp + i]); continue; }
    std::int64_t d = x.dims[2 + i];
    if (d < 0 || win.kernel[i] < 0) { out.push_back(-1); continue; }
    // kernel, dilations and pads are below 2^31 (window_attrs); output_padding can be anything
    std::int64_t full = sat_add(sat_add(sat_mul(win.strides[i], d - 1), (win.kernel[i] - 1) * win.dilations[i] + 1), out_pad[i]);
    if (win.auto_pad == "SAME_UPPER" || win.auto_pad == "SAME_LOWER") out.push_back(sat_mul(d, win.strides[i]));
    else out.push_back(sat_add(full, -(win.pads[i] + win.pads[i + sp])));
    if (out.back() < 0) c.fail("ConvTranspose output dim is negative");
  }
  c.set_output(0, ValueShape::of(x.dtype, out));
}

void rule_pool(ShapeContext& c) {
  const ValueShape& x = c.input(0);
  if (x.rank < 0) return c.set_output(0, ValueShape{x.dtype, -1, {}, nullptr, false});
  if (x.rank < 3) c.fail("pooling input has rank " + std::to_string(x.rank) + "; expected N, C and spatial dims");
  std::size_t sp = std::size_t(x.rank - 2);
  Window win = window_attrs(c, sp, {});
  std::vector<std::int64_t> out = {x.dims[0], x.dims[1]};
  auto o = window_out(c, win, std::vector<std::int64_t>(x.dims.begin() + 2, x.dims.end()));
  out.insert(out.end(), o.begin(), o.end());
  c.set_output(0, ValueShape::of(x.dtype, out));
  c.set_output(1, ValueShape::of(DType::Int64, out));  // MaxPool indices
}

void rule_global_pool(ShapeContext& c) {
  const ValueShape& x = c.input(0);
  if (x.rank < 0) return c.set_output(0, ValueShape{x.dtype, -1, {}, nullptr, false});
  if (x.rank < 2) c.fail("global pooling needs N and C dims");
  std::vector<std::int64_t> out = {x.dims[0], x.dims[1]};
  out.resize(std::size_t(x.rank), 1);
  c.set_output(0, ValueShape::of(x.dtype, out));
}

void rule_matmul(ShapeContext& c) {
  const std::string op(c.node().op_type);
  std::size_t ia = 0, ib = op == "QLinearMatMul" ? 3 : 1;
  const ValueShape& a = c.input(ia);
  const ValueShape& b = c.input(ib);
  DType t = op == "QLinearMatMul" ? c.input(7).dtype : op == "MatMulInteger" ? DType::Int32 : a.dtype;
  // A scalar operand is wrong whatever the other's rank (numpy's matmul refuses it), and checking it
  // first keeps a declared output shape from carrying a rank-0 operand on to the cost rule.
  for (auto [s, name] : {std::pair{&a, "A"}, std::pair{&b, "B"}})
    if (s->rank == 0) c.fail("input " + std::string(name) + " is a scalar (rank 0); " + op + " needs rank >= 1");
  if (a.rank < 0 || b.rank < 0) return c.set_output(0, ValueShape{t, -1, {}, nullptr, false});
  std::vector<std::int64_t> da = a.dims.vec(), db = b.dims.vec();
  bool va = da.size() == 1, vb = db.size() == 1;
  if (va) da.insert(da.begin(), 1);
  if (vb) db.push_back(1);
  std::int64_t ka = da.back(), kb = db[db.size() - 2];
  if (ka >= 0 && kb >= 0 && ka != kb) c.fail("MatMul inner dims differ: " + std::to_string(ka) + " vs " + std::to_string(kb));
  std::vector<std::int64_t> batch = broadcast(c, std::vector<std::int64_t>(da.begin(), da.end() - 2),
                                              std::vector<std::int64_t>(db.begin(), db.end() - 2));
  std::vector<std::int64_t> out = batch;
  if (!va) out.push_back(da[da.size() - 2]);
  if (!vb) out.push_back(db.back());
  ValueShape s = ValueShape::of(t, out);
  s.estimated = a.estimated || b.estimated;
  c.set_output(0, std::move(s));
}

void rule_gemm(ShapeContext& c) {
  const ValueShape& a = c.input(0);
  const ValueShape& b = c.input(1);
  if (a.rank >= 0 && a.rank != 2) c.fail("Gemm A has rank " + std::to_string(a.rank) + ", expected 2");
  if (b.rank >= 0 && b.rank != 2) c.fail("Gemm B has rank " + std::to_string(b.rank) + ", expected 2");
  bool ta = c.node().attr_int("transA", 0) != 0, tb = c.node().attr_int("transB", 0) != 0;
  std::int64_t m = a.rank == 2 ? a.dims[ta ? 1 : 0] : -1, ka = a.rank == 2 ? a.dims[ta ? 0 : 1] : -1;
  std::int64_t kb = b.rank == 2 ? b.dims[tb ? 1 : 0] : -1, n = b.rank == 2 ? b.dims[tb ? 0 : 1] : -1;
  if (ka >= 0 && kb >= 0 && ka != kb) c.fail("Gemm inner dims differ: " + std::to_string(ka) + " vs " + std::to_string(kb));
  c.set_output(0, ValueShape::of(a.dtype, {m, n}));
}

namespace {

struct EinsumSpec {
  std::vector<std::string> inputs;
  std::string output;
};

// Parses an einsum equation for operands of the given ranks (-1: unknown); ellipses become the reserved
// letters '0'..'9' (up to 10 broadcast dims). Returns what is wrong, "" when nothing is. Shared by the
// shape rule and the cost rule, so that both read the same letters.
std::string parse_einsum(const std::string& equation, const std::vector<int>& ranks, EinsumSpec& s) {
  constexpr std::size_t ell_rank_max = 10;
  std::string eq;
  for (char ch : equation) if (ch != ' ') eq += ch;
  if (eq.empty()) return "Einsum without an equation";
  std::string lhs = eq, rhs;
  bool explicit_out = false;
  if (auto p = eq.find("->"); p != std::string::npos) { lhs = eq.substr(0, p); rhs = eq.substr(p + 2); explicit_out = true; }
  std::size_t start = 0;
  while (true) {
    auto p = lhs.find(',', start);
    s.inputs.push_back(lhs.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) break;
    start = p + 1;
  }
  if (s.inputs.size() != ranks.size())
    return "Einsum equation names " + std::to_string(s.inputs.size()) + " operands for " + std::to_string(ranks.size()) + " inputs";
  std::size_t ell_rank = 0;
  for (std::size_t i = 0; i < s.inputs.size(); ++i) {
    auto& term = s.inputs[i];
    auto p = term.find("...");
    if (p == std::string::npos) continue;
    std::size_t letters = term.size() - 3;
    std::size_t k = ranks[i] >= 0 && std::size_t(ranks[i]) >= letters ? std::size_t(ranks[i]) - letters : 0;
    if (k > ell_rank_max) return "Einsum ellipsis covers too many dims";
    ell_rank = std::max(ell_rank, k);
    std::string rep;
    for (std::size_t j = 0; j < k; ++j) rep += char('0' + (ell_rank_max - k + j));
    term = term.substr(0, p) + rep + term.substr(p + 3);
  }
  std::string ell_all;
  for (std::size_t j = 0; j < ell_rank; ++j) ell_all += char('0' + (ell_rank_max - ell_rank + j));
  if (explicit_out) {
    if (auto p = rhs.find("..."); p != std::string::npos) rhs = rhs.substr(0, p) + ell_all + rhs.substr(p + 3);
    s.output = rhs;
  } else {
    std::map<char, int> count;
    for (auto& t : s.inputs) for (char ch : t) ++count[ch];
    s.output = ell_all;
    for (auto& [ch, n] : count) if (n == 1 && std::isalpha(static_cast<unsigned char>(ch))) s.output += ch;
  }
  return {};
}

std::map<char, std::int64_t> einsum_sizes(ShapeContext& c, const EinsumSpec& s) {
  std::map<char, std::int64_t> size;
  for (std::size_t i = 0; i < s.inputs.size(); ++i) {
    const ValueShape& in = c.input(i);
    if (in.rank < 0) continue;
    if (std::size_t(in.rank) != s.inputs[i].size())
      c.fail("Einsum operand " + std::to_string(i) + " has rank " + std::to_string(in.rank) + " but its term '" + s.inputs[i] + "' has " + std::to_string(s.inputs[i].size()) + " letters");
    for (std::size_t k = 0; k < s.inputs[i].size(); ++k) {
      char ch = s.inputs[i][k];
      std::int64_t d = in.dims[k];
      auto it = size.find(ch);
      if (it == size.end() || it->second == 1 || it->second < 0) size[ch] = d;
      else if (d >= 0 && d != 1 && d != it->second) c.fail(std::string("Einsum letter '") + ch + "' has sizes " + std::to_string(it->second) + " and " + std::to_string(d));
    }
  }
  return size;
}

}  // namespace

void rule_einsum(ShapeContext& c) {
  std::vector<int> ranks;
  for (std::size_t i = 0; i < c.num_inputs(); ++i) ranks.push_back(c.input_if(i) ? c.input_if(i)->rank : -1);
  EinsumSpec s;
  if (std::string problem = parse_einsum(c.node().attr_string("equation", ""), ranks, s); !problem.empty()) c.fail(problem);
  auto size = einsum_sizes(c, s);
  std::vector<std::int64_t> out;
  for (char ch : s.output) {
    auto it = size.find(ch);
    if (it == size.end()) c.fail(std::string("Einsum output letter '") + ch + "' appears in no input");
    out.push_back(it->second);
  }
  c.set_output(0, ValueShape::of(c.input(0).dtype, out));
}

void rule_batch_norm(ShapeContext& c) {
  c.set_output(0, like_input(c, 0));
  const ValueShape& x = c.input(0);
  std::int64_t ch = x.rank >= 2 ? x.dims[1] : -1;
  for (std::size_t i = 1; i < c.num_outputs(); ++i) c.set_output(i, ValueShape::of(x.dtype, {ch}));
}

void rule_layer_norm(ShapeContext& c) {
  const ValueShape& x = c.input(0);
  c.set_output(0, like_input(c, 0));
  if (x.rank < 0) return;
  std::int64_t axis = c.normalize_axis(c.node().attr_int("axis", -1), x.rank);
  std::vector<std::int64_t> stat = x.dims.vec();
  for (std::size_t i = std::size_t(axis); i < stat.size(); ++i) stat[i] = 1;
  DType st = DType(c.node().attr_int("stash_type", 1));
  for (std::size_t i = 1; i < c.num_outputs(); ++i) c.set_output(i, ValueShape::of(st, stat));
}

void rule_reduce(ShapeContext& c) {
  const ValueShape& x = c.input(0);
  std::vector<std::int64_t> axes;
  bool have = axes_from(c, "axes", 1, axes);
  bool keep = c.node().attr_int("keepdims", 1) != 0;
  bool noop_empty = c.node().attr_int("noop_with_empty_axes", 0) != 0;
  if (x.rank < 0) return c.set_output(0, ValueShape{x.dtype, -1, {}, nullptr, false});
  if (!have && c.has_input(1)) {  // axes computed at run time
    ValueShape s;
    s.dtype = x.dtype;
    if (keep) { s.rank = x.rank; s.dims.assign(std::size_t(x.rank), -1); }
    return c.set_output(0, std::move(s));
  }
  std::vector<bool> red(std::size_t(x.rank), axes.empty() && !noop_empty);
  for (auto a : axes) red[std::size_t(c.normalize_axis(a, x.rank))] = true;
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < red.size(); ++i) {
    if (!red[i]) out.push_back(x.dims[i]);
    else if (keep) out.push_back(1);
  }
  ValueShape s = ValueShape::of(x.dtype, out);
  s.estimated = x.estimated;
  // Fold reductions of known small contents (ReduceProd of a shape, ReduceMax of float sizes in
  // detection transforms, ...).
  const std::string_view op = c.node().op_type;
  bool foldable_op = op == "ReduceProd" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin" ||
                     op == "ReduceMean";
  if (foldable_op && x.value && x.fully_known() && x.elements() > 0 && x.elements() <= kFoldLimit &&
      x.value->size() == x.elements()) {
    std::int64_t n_out = product(out);
    bool fl = x.value->is_float || op == "ReduceMean";
    std::vector<double> accf(std::size_t(n_out), op == "ReduceProd" ? 1.0 : 0.0);
    std::vector<std::int64_t> acci(std::size_t(n_out), op == "ReduceProd" ? 1 : 0);
    std::vector<std::int64_t> count(std::size_t(n_out), 0);
    std::size_t r = red.size();
    for (std::size_t flat = 0; flat < x.elements(); ++flat) {
      // output index: the input coordinates with the reduced axes dropped (or set to 0)
      std::size_t rem = flat, oi = 0, stride = 1;
      for (std::size_t k = r; k-- > 0;) {
        std::size_t dim = std::size_t(x.dims[k]);
        std::size_t coord = rem % dim;
        rem /= dim;
        if (!red[k]) { oi += coord * stride; stride *= dim; }
      }
      double vf = x.value->is_float ? x.value->floats[flat] : double(x.value->ints[flat]);
      std::int64_t vi = x.value->is_float ? 0 : x.value->ints[flat];
      bool first = count[oi]++ == 0;
      if (op == "ReduceProd") { accf[oi] *= vf; acci[oi] = wrap_mul(acci[oi], vi); }
      else if (op == "ReduceSum" || op == "ReduceMean") { accf[oi] += vf; acci[oi] = wrap_add(acci[oi], vi); }
      else if (op == "ReduceMax") { accf[oi] = first ? vf : std::max(accf[oi], vf); acci[oi] = first ? vi : std::max(acci[oi], vi); }
      else { accf[oi] = first ? vf : std::min(accf[oi], vf); acci[oi] = first ? vi : std::min(acci[oi], vi); }
    }
    ConstData d;
    d.is_float = dtype_is_float(x.dtype);
    for (std::size_t i = 0; i < std::size_t(n_out); ++i) {
      double v = op == "ReduceMean" ? (count[i] ? accf[i] / double(count[i]) : 0.0) : accf[i];
      if (d.is_float) d.floats.push_back(fl ? v : double(acci[i]));
      else d.ints.push_back(fl ? to_int64(v) : acci[i]);
    }
    return c.set_output_value(0, x.dtype, out, std::move(d));
  }
  c.set_output(0, std::move(s));
}

void rule_arg_reduce(ShapeContext& c) {
  const ValueShape& x = c.input(0);
  if (x.rank < 0) return c.set_output(0, ValueShape{DType::Int64, -1, {}, nullptr, false});
  std::size_t ax = std::size_t(c.normalize_axis(c.node().attr_int("axis", 0), x.rank));
  std::vector<std::int64_t> out = x.dims.vec();
  if (c.node().attr_int("keepdims", 1) != 0) out[ax] = 1;
  else out.erase(out.begin() + std::ptrdiff_t(ax));
  c.set_output(0, ValueShape::of(DType::Int64, out));
}

// ---- cost rules ----

void cost_conv(const CostContext& c, double, NodeCost& out) {
  const bool q = c.node().op_type == "QLinearConv";
  const ValueShape& w = c.input(q ? 3 : 1);
  const ValueShape& y = c.output(0);
  if (!w.fully_known() || !y.fully_known()) { out.known = false; return; }
  double per_out = 1;  // (Cin/group) * prod(kernel) MACs per output element
  for (std::size_t i = 1; i < w.dims.size(); ++i) per_out *= double(w.dims[i]);
  out.macs = double(y.elements()) * per_out;
  out.flops = 2 * out.macs + (c.has_input(q ? 8 : 2) ? double(y.elements()) : 0);
  out.activation_elems = double(y.elements());
}

void cost_conv_transpose(const CostContext& c, double, NodeCost& out) {
  const ValueShape& x = c.input(0);
  const ValueShape& w = c.input(1);
  if (!x.fully_known() || !w.fully_known() || !c.output(0).fully_known()) { out.known = false; return; }
  // Every input element scatters into (Cout/group) * prod(kernel) outputs.
  double per_in = 1;
  for (std::size_t i = 1; i < w.dims.size(); ++i) per_in *= double(w.dims[i]);
  out.macs = double(x.elements()) * per_in;
  out.flops = 2 * out.macs + (c.has_input(2) ? double(c.output(0).elements()) : 0);
  out.activation_elems = double(c.output(0).elements());
}

void cost_matmul(const CostContext& c, double, NodeCost& out) {
  const std::string_view op = c.node().op_type;
  const ValueShape& a = c.input(0);
  const ValueShape& y = c.output(0);
  // The rank tests guard declared shapes that filled in where the rule could not tell (unknown operand
  // ranks): the cost must not read dims the operand does not have.
  const bool gemm = op == "Gemm";
  if (!a.fully_known() || !y.fully_known() || (gemm ? a.rank != 2 : a.rank < 1)) { out.known = false; return; }
  double k;
  if (gemm) k = double(a.dims[c.node().attr_int("transA", 0) ? 0 : 1]);
  else k = double(a.dims.back());
  out.macs = double(y.elements()) * k;
  out.flops = 2 * out.macs;
  if (op == "Gemm" && c.has_input(2)) out.flops += double(y.elements());
  out.activation_elems = double(y.elements());
}

void cost_einsum(const CostContext& c, double, NodeCost& out) {
  // MACs = product of the sizes of every letter of the equation, the ellipsis' dims included (each output
  // element sums over the rest), as for the MatMul the equation stands for.
  std::vector<int> ranks;
  for (std::size_t i = 0; i < c.num_inputs(); ++i) {
    if (!c.input(i).fully_known()) { out.known = false; return; }
    ranks.push_back(c.input(i).rank);
  }
  EinsumSpec s;
  if (!parse_einsum(c.node().attr_string("equation", ""), ranks, s).empty()) { out.known = false; return; }
  std::map<char, std::int64_t> size;
  for (std::size_t i = 0; i < s.inputs.size(); ++i) {
    if (s.inputs[i].size() != c.input(i).dims.size()) { out.known = false; return; }
    for (std::size_t k = 0; k < s.inputs[i].size(); ++k)
      size[s.inputs[i][k]] = std::max(size[s.inputs[i][k]], c.input(i).dims[k]);
  }
  double m = 1;
  for (auto& [ch, d] : size) m *= double(d);
  out.macs = c.num_inputs() >= 2 ? m : 0;
  out.flops = c.num_inputs() >= 2 ? 2 * m : m;
  out.activation_elems = c.output_elements(0);
}

void cost_pool(const CostContext& c, double k, NodeCost& out) {
  std::vector<std::int64_t> kernel = c.node().attr_ints("kernel_shape");
  double window = 1;
  for (auto d : kernel) window *= double(d);
  out.flops = k * window * c.output_elements(0);
  if (!c.output(0).fully_known()) out.known = false;
}

void cost_global_pool(const CostContext& c, double k, NodeCost& out) { out.flops = k * c.input_elements(0); }

void cost_reduce(const CostContext& c, double k, NodeCost& out) {
  out.flops = k * c.input_elements(0);
  if (!c.input(0).fully_known()) out.known = false;
}

}  // namespace perfcard::ops

namespace perfcard::ops {

namespace {
std::int64_t rnn_gates(std::string_view op) { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }
}  // namespace

// RNN, GRU, LSTM: X [seq, batch, input] (layout 1: [batch, seq, input]), W [dirs, gates * hidden, input].
// Y [seq, dirs, batch, hidden] (layout 1: [batch, seq, dirs, hidden]), Y_h / Y_c [dirs, batch, hidden]
// (layout 1: [batch, dirs, hidden]).
void rule_rnn(ShapeContext& c) {
  const ValueShape& x = c.input(0);
  const ValueShape& w = c.input(1);
  const Node& n = c.node();
  std::int64_t hidden = n.attr_int("hidden_size", -1);
  if (hidden < 0 && w.rank == 3 && w.dims[1] >= 0) hidden = w.dims[1] / rnn_gates(n.op_type);
  std::int64_t dirs = n.attr_string("direction", "forward") == "bidirectional" ? 2 : 1;
  bool layout1 = n.attr_int("layout", 0) != 0;
  std::int64_t seq = -1, batch = -1;
  if (x.rank >= 0) {
    if (x.rank != 3) c.fail(std::string(n.op_type) + " input X must have rank 3");
    seq = x.dims[layout1 ? 1 : 0];
    batch = x.dims[layout1 ? 0 : 1];
  }
  if (layout1) {
    c.set_output(0, ValueShape::of(x.dtype, {batch, seq, dirs, hidden}));
    c.set_output(1, ValueShape::of(x.dtype, {batch, dirs, hidden}));
    c.set_output(2, ValueShape::of(x.dtype, {batch, dirs, hidden}));
  } else {
    c.set_output(0, ValueShape::of(x.dtype, {seq, dirs, batch, hidden}));
    c.set_output(1, ValueShape::of(x.dtype, {dirs, batch, hidden}));
    c.set_output(2, ValueShape::of(x.dtype, {dirs, batch, hidden}));
  }
}

// Per step and direction: gates x hidden x (input + hidden) MACs for the input and recurrent products,
// plus k FLOPs per gate element for the bias adds, activations and state updates.
void cost_rnn(const CostContext& c, double k, NodeCost& out) {
  const ValueShape& x = c.input(0);
  const ValueShape& w = c.input(1);
  const ValueShape& r = c.input(2);
  if (!x.fully_known() || !w.fully_known() || !r.fully_known() || x.rank != 3 || w.rank != 3 || r.rank != 3) {
    out.known = false;
    return;
  }
  bool layout1 = c.node().attr_int("layout", 0) != 0;
  double seq = double(x.dims[layout1 ? 1 : 0]), batch = double(x.dims[layout1 ? 0 : 1]);
  double dirs = double(w.dims[0]), gate_rows = double(w.dims[1]), input = double(w.dims[2]), hidden = double(r.dims[2]);
  out.macs = seq * batch * dirs * gate_rows * (input + hidden);
  out.flops = 2 * out.macs + k * seq * batch * dirs * gate_rows;
  out.activation_elems = c.output_elements(0);
  // Runtimes (cuDNN, onnxruntime) project every time step's input in one GEMM, then run the recurrence
  // one step after another: per step a [batch x hidden] by [hidden x gates*hidden] product per direction
  // and the gate maths, reading R and the state and writing the new state (and this step's Y).
  if (seq < 1) return;
  auto st = std::make_shared<SequentialSteps>();
  st->proj_m = seq * batch;
  st->proj_n = dirs * gate_rows;
  st->proj_k = input;
  st->count = seq;
  st->gemm_m = batch;
  st->gemm_n = dirs * gate_rows;
  st->gemm_k = hidden;
  st->flops = 2 * batch * dirs * gate_rows * hidden + k * batch * dirs * gate_rows;
  const double state = batch * dirs * hidden * (c.node().op_type == "LSTM" ? 2 : 1);
  st->invariant_elements = dirs * gate_rows * hidden;
  st->elements = st->invariant_elements + batch * dirs * gate_rows + 2 * state + batch * dirs * hidden;
  out.steps = std::move(st);
}

// DFT: an FFT's 5 n log2(n) FLOPs per transformed signal of length n (n = the longer of input and output
// along the axis), for every signal.
void cost_dft(const CostContext& c, double, NodeCost& out) {
  const ValueShape& x = c.input(0);
  const ValueShape& y = c.output(0);
  if (!x.fully_known() || !y.fully_known() || x.rank < 3) { out.known = false; return; }
  std::int64_t axis = c.node().attr_int("axis", 1);
  if (axis < 0) axis += x.rank;
  if (axis <= 0 || axis >= x.rank - 1) { out.known = false; return; }
  double n = double(std::max(x.dims[std::size_t(axis)], y.dims[std::size_t(axis)]));
  double per_signal = double(y.dims[std::size_t(axis)]) * double(y.dims.back());
  double signals = per_signal > 0 ? double(y.elements()) / per_signal : 0;
  out.flops = n > 1 ? 5 * n * std::log2(n) * signals : 0;
}

// Det: an LU factorization, 2/3 M^3 FLOPs per matrix.
void cost_det(const CostContext& c, double, NodeCost& out) {
  const ValueShape& x = c.input(0);
  if (!x.fully_known() || x.rank < 2) { out.known = false; return; }
  double m = double(x.dims.back());
  out.flops = double(c.output_elements(0) > 0 ? c.output_elements(0) : 1) * 2.0 / 3.0 * m * m * m;
}

}  // namespace perfcard::ops
