#include "ops/rule_util.h"

#include <algorithm>

namespace perfcard::ops {

namespace {

// Two known sizes that do not broadcast. Where one is a dim the caller bound (sequence = 8192) and the
// other is fixed in the graph (a table of 512 learned positions), the setting is what is wrong: the
// message names it and the size the graph allows there.
[[noreturn]] void broadcast_failure(const ShapeContext& c, std::int64_t x, std::int64_t y) {
  std::string msg = "cannot broadcast dims " + std::to_string(x) + " and " + std::to_string(y);
  const auto bx = c.symbols_bound_to(x), by = c.symbols_bound_to(y);
  if (bx.empty() == by.empty()) c.fail(msg);
  const std::int64_t bound = bx.empty() ? y : x, fixed = bx.empty() ? x : y;
  std::string names;
  for (const auto& n : bx.empty() ? by : bx) names += (names.empty() ? "'" : "' or '") + n;
  names += "'";
  const std::string b = std::to_string(bound), f = std::to_string(fixed);
  if (bound > fixed)
    msg += ": dim " + names + " = " + b + " exceeds the " + f + " the graph fixes here (a table of " + f +
           " learned positions, say): the model takes " + names + " up to " + f;
  else
    msg += ": dim " + names + " = " + b + " meets a size the graph fixes at " + f + " here: the model takes " +
           names + " = " + f;
  c.fail(msg);
}

}  // namespace

std::vector<std::int64_t> broadcast(ShapeContext& c, std::span<const std::int64_t> a, std::span<const std::int64_t> b) {
  std::size_t r = std::max(a.size(), b.size());
  std::vector<std::int64_t> out(r, 1);
  for (std::size_t i = 0; i < r; ++i) {
    std::int64_t x = i < r - a.size() ? 1 : a[i - (r - a.size())];
    std::int64_t y = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (x == 1) out[i] = y;
    else if (y == 1) out[i] = x;
    else if (x < 0 || y < 0) out[i] = x < 0 ? y : x;  // one unknown: the other (non-1) dim must win
    else if (x == y) out[i] = x;
    else broadcast_failure(c, x, y);
  }
  return out;
}

ValueShape broadcast_inputs(ShapeContext& c, DType out_type, std::size_t first, std::size_t last) {
  ValueShape s;
  s.dtype = out_type;
  std::vector<std::int64_t> dims;
  bool any = false;
  for (std::size_t i = first; i < c.num_inputs() && i < last; ++i) {
    if (!c.has_input(i)) continue;
    const ValueShape& in = c.input(i);
    if (in.rank < 0) return s;
    dims = any ? broadcast(c, dims, in.dims) : in.dims.vec();
    any = true;
    s.estimated |= in.estimated;
  }
  if (any) { s.rank = int(dims.size()); s.dims = std::move(dims); }
  return s;
}

ValueShape like_input(ShapeContext& c, std::size_t i) {
  ValueShape s = c.input(i);
  s.value.reset();
  return s;
}

std::int64_t product(std::span<const std::int64_t> dims, std::size_t from, std::size_t to) {
  std::int64_t p = 1;
  for (std::size_t i = from; i < dims.size() && i < to; ++i) {
    if (dims[i] < 0) return -1;
    p = sat_mul(p, dims[i]);
  }
  return p;
}

std::int64_t sat_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

std::int64_t sat_add(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

std::int64_t to_int64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return INT64_MAX;
  if (v <= -9.2233720368547758e18) return INT64_MIN;
  return std::int64_t(v);
}

bool fold_binary(ShapeContext& c, DType out_type, BinaryFn f, BinaryIntFn fi) {
  if (c.num_inputs() < 2 || !c.has_input(0) || !c.has_input(1)) return false;
  const ValueShape& a = c.input(0);
  const ValueShape& b = c.input(1);
  if (!a.value || !b.value || !a.fully_known() || !b.fully_known()) return false;
  std::vector<std::int64_t> dims = broadcast(c, a.dims, b.dims);
  std::int64_t n = product(dims);
  if (n < 0 || n > std::int64_t(kFoldLimit)) return false;  // int64: a size_t cast wraps on wasm32
  auto index = [&](const ValueShape& s, std::int64_t flat) {
    // maps a flat index of the broadcast result to the flat index in s
    std::int64_t idx = 0, stride = 1;
    for (std::size_t k = dims.size(); k-- > 0;) {
      std::int64_t coord = flat % dims[k];
      flat /= dims[k];
      std::size_t off = dims.size() - s.dims.size();
      if (k >= off) {
        std::int64_t d = s.dims[k - off];
        idx += (d == 1 ? 0 : coord) * stride;
        stride *= d;
      }
    }
    return idx;
  };
  ConstData r;
  bool as_float = a.value->is_float || b.value->is_float;
  r.is_float = dtype_is_float(out_type);
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t ia = index(a, i), ib = index(b, i);
    if (as_float) {
      double x = a.value->is_float ? a.value->floats[std::size_t(ia)] : double(a.value->ints[std::size_t(ia)]);
      double y = b.value->is_float ? b.value->floats[std::size_t(ib)] : double(b.value->ints[std::size_t(ib)]);
      double v = f(x, y);
      if (r.is_float) r.floats.push_back(v);
      else r.ints.push_back(to_int64(v));
    } else {
      const std::int64_t x = a.value->ints[std::size_t(ia)], y = b.value->ints[std::size_t(ib)];
      const std::int64_t v = fi ? fi(x, y) : std::int64_t(f(double(x), double(y)));
      if (r.is_float) r.floats.push_back(double(v));
      else r.ints.push_back(v);
    }
  }
  c.set_output_value(0, out_type, dims, std::move(r));
  return true;
}

std::vector<std::int64_t> unknown_dims(ShapeContext& c, std::int64_t rank) {
  if (rank > 64) c.fail("output would have rank " + std::to_string(rank) + ", above the limit of 64");
  return std::vector<std::int64_t>(std::size_t(std::max<std::int64_t>(rank, 0)), -1);
}

bool axes_from(ShapeContext& c, const char* name, std::size_t input, std::vector<std::int64_t>& out) {
  if (const Attribute* a = c.node().attr(name)) {
    out = a->ints;
    return true;
  }
  if (c.has_input(input)) {
    if (!c.input_ints(input, out)) return false;
    return true;
  }
  return false;
}

void cost_none(const CostContext&, double, NodeCost&) {}

void cost_per_output(const CostContext& c, double k, NodeCost& out) {
  double n = 0;
  for (std::size_t i = 0; i < c.node().outputs().size(); ++i) n = std::max(n, c.output_elements(i));
  out.flops = k * n;
}

void cost_per_input(const CostContext& c, double k, NodeCost& out) { out.flops = k * c.input_elements(0); }

}  // namespace perfcard::ops
