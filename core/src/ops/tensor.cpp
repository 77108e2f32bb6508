// Shape rules for ops that create, reshape, index and rearrange tensors. Where their inputs are known
// small constants (the shape arithmetic of exported graphs), the outputs' contents are computed too.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "ops/rule_util.h"
#include "ops/rules.h"

namespace perfcard::ops {
namespace {

ConstData ints_data(std::vector<std::int64_t> v) {
  ConstData d;
  d.ints = std::move(v);
  return d;
}

// Contents of input i as doubles (floats or ints), false if unknown.
bool input_numbers(ShapeContext& c, std::size_t i, std::vector<double>& out) {
  const ValueShape* s = c.input_if(i);
  if (!s || !s->value) return false;
  out.clear();
  if (s->value->is_float) out = s->value->floats;
  else for (auto v : s->value->ints) out.push_back(double(v));
  return true;
}

std::vector<std::int64_t> strides_of(std::span<const std::int64_t> dims) {
  std::vector<std::int64_t> st(dims.size(), 1);
  for (std::size_t k = dims.size(); k-- > 1;) st[k - 1] = st[k] * dims[k];
  return st;
}

// Copies elements of src (dims sdims) selected by a per-output-element index function.
template <class F>
ConstData gather_contents(const ConstData& src, std::int64_t n, F source_index) {
  ConstData r;
  r.is_float = src.is_float;
  for (std::int64_t i = 0; i < n; ++i) {
    std::size_t j = std::size_t(source_index(i));
    if (r.is_float) r.floats.push_back(src.floats[j]);
    else r.ints.push_back(src.ints[j]);
  }
  return r;
}

bool foldable(const ValueShape& s, std::int64_t out_elems) {
  // Compared as int64: a size_t cast would wrap on wasm32 (2^32 + 5 elements would pass as 5).
  return s.value && s.fully_known() && out_elems >= 0 && out_elems <= std::int64_t(kFoldLimit);
}

}  // namespace

void rule_shape(ShapeContext& c) {
  const ValueShape& in = c.input(0);
  if (in.rank < 0) {
    c.set_output(0, ValueShape::of(DType::Int64, {-1}));
    return;
  }
  std::int64_t r = in.rank;
  std::int64_t start = c.node().attr_int("start", 0), end = c.node().attr_int("end", r);
  auto clampi = [&](std::int64_t v) { return std::clamp(v < 0 ? v + r : v, std::int64_t{0}, r); };
  start = clampi(start);
  end = clampi(end);
  std::vector<std::int64_t> dims(in.dims.begin() + start, in.dims.begin() + std::max(start, end));
  if (std::all_of(dims.begin(), dims.end(), [](std::int64_t d) { return d >= 0; })) {
    std::int64_t n = std::int64_t(dims.size());
    c.set_output_value(0, DType::Int64, {n}, ints_data(std::move(dims)));
  } else {
    c.set_output(0, ValueShape::of(DType::Int64, {std::int64_t(dims.size())}));
  }
}

void rule_size(ShapeContext& c) {
  const ValueShape& in = c.input(0);
  if (in.fully_known()) c.set_output_value(0, DType::Int64, {}, ints_data({std::int64_t(in.elements())}));
  else c.set_output(0, ValueShape::of(DType::Int64, {}));
}

void rule_constant(ShapeContext& c) {
  const Node& n = c.node();
  for (const auto& a : n.attributes) {
    if (a.name == "value" || a.name == "sparse_value") {
      if (a.tensors.empty()) c.fail("Constant attribute '" + std::string(a.name) + "' holds no tensor");
      const TensorMeta& t = a.tensors[0];
      ValueShape s = ValueShape::of(t.dtype, t.dims);
      if (t.data) s.value = SharedConst(*t.data);
      c.set_output(0, std::move(s));
      return;
    }
    if (a.name == "value_int") return c.set_output_value(0, DType::Int64, {}, ints_data({a.i}));
    if (a.name == "value_ints")
      return c.set_output_value(0, DType::Int64, {std::int64_t(a.ints.size())}, ints_data(a.ints));
    if (a.name == "value_float" || a.name == "value_floats") {
      ConstData d;
      d.is_float = true;
      if (a.name == "value_float") d.floats = {a.f};
      else d.floats.assign(a.floats.begin(), a.floats.end());
      std::vector<std::int64_t> dims;
      if (a.name == "value_floats") dims = {std::int64_t(a.floats.size())};
      return c.set_output_value(0, DType::Float, dims, std::move(d));
    }
    if (a.name == "value_string") return c.set_output(0, ValueShape::of(DType::String, {}));
    if (a.name == "value_strings")
      return c.set_output(0, ValueShape::of(DType::String, {std::int64_t(a.strings.size())}));
  }
  c.fail("Constant has no value attribute");
}

void rule_constant_of_shape(ShapeContext& c) {
  DType t = DType::Float;
  ConstData fill;
  fill.is_float = true;
  fill.floats = {0.0};
  if (const Attribute* a = c.node().attr("value")) {
    if (!a->tensors.empty()) {
      t = a->tensors[0].dtype;
      if (a->tensors[0].data) fill = *a->tensors[0].data;
    }
  }
  std::vector<std::int64_t> dims;
  if (!c.input_ints(0, dims)) {
    const ValueShape& in = c.input(0);
    ValueShape s;
    s.dtype = t;
    if (in.rank == 1 && in.dims[0] >= 0) { s.dims = unknown_dims(c, in.dims[0]); s.rank = int(in.dims[0]); }
    c.set_output(0, std::move(s));
    return;
  }
  for (auto d : dims)
    if (d < 0) c.fail("ConstantOfShape with negative dim " + std::to_string(d));
  std::int64_t n = product(dims);
  if (n >= 0 && n <= std::int64_t(kFoldLimit) && fill.size() == 1) {
    ConstData r;
    r.is_float = fill.is_float;
    if (r.is_float) r.floats.assign(std::size_t(n), fill.floats[0]);
    else r.ints.assign(std::size_t(n), fill.ints[0]);
    c.set_output_value(0, t, dims, std::move(r));
    return;
  }
  c.set_output(0, ValueShape::of(t, dims));
}

void rule_reshape(ShapeContext& c) {
  const ValueShape& in = c.input(0);
  std::vector<std::int64_t> shape;
  bool have = c.opset() < 5 ? (shape = c.node().attr_ints("shape"), c.node().has_attr("shape"))
                            : c.input_ints(1, shape);
  if (!have) {
    ValueShape s;
    s.dtype = in.dtype;
    const ValueShape* sh = c.input_if(1);
    if (sh && sh->rank == 1 && sh->dims[0] >= 0) { s.dims = unknown_dims(c, sh->dims[0]); s.rank = int(sh->dims[0]); }
    c.set_output(0, std::move(s));
    return;
  }
  bool allowzero = c.node().attr_int("allowzero", 0) != 0;
  std::vector<std::int64_t> out = shape;
  int infer = -1;
  std::int64_t known = 1;
  bool unknown = false;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && !allowzero) {
      if (in.rank >= 0 && i >= std::size_t(in.rank)) c.fail("Reshape copies dim " + std::to_string(i) + " that the input lacks");
      out[i] = in.rank >= 0 ? in.dims[i] : -1;
    }
    if (out[i] == -1 && shape[i] == -1) {
      if (infer >= 0) c.fail("Reshape has more than one -1 in its shape");
      infer = int(i);
    } else if (out[i] < 0) {
      if (shape[i] < -1) c.fail("Reshape shape has invalid dim " + std::to_string(shape[i]));
      unknown = true;
    } else {
      known = sat_mul(known, out[i]);
      if (known > (std::int64_t{1} << 50)) c.fail("Reshape target shape has more than 2^50 elements");
    }
  }
  std::int64_t total = in.fully_known() ? std::int64_t(in.elements()) : -1;
  if (infer >= 0) {
    if (total >= 0 && !unknown) {
      if (known == 0 || total % known != 0)
        c.fail("cannot reshape " + std::to_string(total) + " elements into a shape with " + std::to_string(known) +
               " elements per -1");
      out[std::size_t(infer)] = total / known;
    }
  } else if (total >= 0 && !unknown && known != total) {
    c.fail("cannot reshape " + std::to_string(total) + " elements into " + std::to_string(known));
  }
  ValueShape s = ValueShape::of(in.dtype, out);
  s.estimated = in.estimated;
  if (in.value && s.fully_known()) s.value = in.value;
  c.set_output(0, std::move(s));
}

void rule_flatten(ShapeContext& c) {
  const ValueShape& in = c.input(0);
  if (in.rank < 0) return c.set_output(0, ValueShape{in.dtype, 2, {-1, -1}, nullptr, false});
  std::int64_t axis = c.node().attr_int("axis", 1);
  if (axis < 0) axis += in.rank;
  if (axis < 0 || axis > in.rank) c.fail("Flatten axis out of range");
  ValueShape s = ValueShape::of(in.dtype, {product(in.dims, 0, std::size_t(axis)), product(in.dims, std::size_t(axis))});
  if (in.value) s.value = in.value;
  c.set_output(0, std::move(s));
}

void rule_squeeze(ShapeContext& c) {
  const ValueShape& in = c.input(0);
  std::vector<std::int64_t> axes;
  bool have_axes = axes_from(c, "axes", 1, axes);
  if (in.rank < 0 || (!have_axes && c.has_input(1))) return c.set_output(0, ValueShape{in.dtype, -1, {}, nullptr, in.estimated});
  std::vector<bool> drop(std::size_t(in.rank), false);
  if (have_axes) {
    for (auto a : axes) {
      auto ax = std::size_t(c.normalize_axis(a, in.rank));
      if (in.dims[ax] > 1) c.fail("Squeeze of axis " + std::to_string(a) + " whose size is " + std::to_string(in.dims[ax]));
      drop[ax] = true;
    }
  } else {
    for (std::size_t i = 0; i < drop.size(); ++i) drop[i] = in.dims[i] == 1;
  }
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < drop.size(); ++i)
    if (!drop[i]) out.push_back(in.dims[i]);
  ValueShape s = ValueShape::of(in.dtype, out);
  s.value = in.value;
  s.estimated = in.estimated;
  c.set_output(0, std::move(s));
}

void rule_unsqueeze(ShapeContext& c) {
  const ValueShape& in = c.input(0);
  std::vector<std::int64_t> axes;
  if (!axes_from(c, "axes", 1, axes) || in.rank < 0) return c.set_output(0, ValueShape{in.dtype, -1, {}, nullptr, in.estimated});
  std::int64_t r = in.rank + std::int64_t(axes.size());
  std::vector<bool> added(std::size_t(r), false);
  for (auto a : axes) {
    auto ax = std::size_t(c.normalize_axis(a, r));
    if (added[ax]) c.fail("Unsqueeze lists axis " + std::to_string(a) + " twice");
    added[ax] = true;
  }
  std::vector<std::int64_t> out;
  std::size_t k = 0;
  for (std::size_t i = 0; i < std::size_t(r); ++i) out.push_back(added[i] ? 1 : in.dims[k++]);
  ValueShape s = ValueShape::of(in.dtype, out);
  s.value = in.value;
  s.estimated = in.estimated;
  c.set_output(0, std::move(s));
}

void rule_transpose(ShapeContext& c) {
  const ValueShape& in = c.input(0);
  if (in.rank < 0) return c.set_output(0, ValueShape{in.dtype, -1, {}, nullptr, in.estimated});
  std::vector<std::int64_t> perm = c.node().attr_ints("perm");
  if (perm.empty())
    for (std::int64_t i = in.rank - 1; i >= 0; --i) perm.push_back(i);
  if (std::int64_t(perm.size()) != in.rank) c.fail("Transpose perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(in.rank));
  std::vector<bool> seen(perm.size(), false);
  std::vector<std::int64_t> out;
  for (auto p : perm) {
    auto ax = std::size_t(c.normalize_axis(p, in.rank));
    if (seen[ax]) c.fail("Transpose perm repeats axis " + std::to_string(p));
    seen[ax] = true;
    out.push_back(in.dims[ax]);
  }
  ValueShape s = ValueShape::of(in.dtype, out);
  s.estimated = in.estimated;
  if (foldable(in, std::int64_t(in.elements()))) {
    auto ist = strides_of(in.dims), ost = strides_of(out);
    s.value = SharedConst(gather_contents(*in.value, std::int64_t(in.elements()), [&](std::int64_t i) {
      std::int64_t src = 0;
      for (std::size_t k = 0; k < out.size(); ++k) src += (i / ost[k] % out[k]) * ist[std::size_t(perm[k] < 0 ? perm[k] + in.rank : perm[k])];
      return src;
    }));
  }
  c.set_output(0, std::move(s));
}

void rule_concat(ShapeContext& c) {
  std::int64_t axis = c.node().attr_int("axis", 0);
  const ValueShape* first = nullptr;
  for (std::size_t i = 0; i < c.num_inputs(); ++i)
    if (c.has_input(i) && c.input(i).rank >= 0) { first = &c.input(i); break; }
  if (!first) return c.set_output(0, ValueShape{c.input(0).dtype, -1, {}, nullptr, false});
  std::int64_t r = first->rank;
  std::size_t ax = std::size_t(c.normalize_axis(axis, r));
  std::vector<std::int64_t> out = first->dims.vec();
  out[ax] = 0;
  bool all_values = true, estimated = false;
  for (std::size_t i = 0; i < c.num_inputs(); ++i) {
    if (!c.has_input(i)) continue;
    const ValueShape& in = c.input(i);
    estimated |= in.estimated;
    if (in.rank < 0) { out[ax] = -1; all_values = false; continue; }
    if (in.rank != r) c.fail("Concat inputs have ranks " + std::to_string(r) + " and " + std::to_string(in.rank));
    for (std::size_t k = 0; k < std::size_t(r); ++k) {
      if (k == ax) continue;
      if (out[k] < 0) out[k] = in.dims[k];
      else if (in.dims[k] >= 0 && in.dims[k] != out[k])
        c.fail("Concat inputs differ in dim " + std::to_string(k) + ": " + std::to_string(out[k]) + " vs " + std::to_string(in.dims[k]));
    }
    out[ax] = (out[ax] < 0 || in.dims[ax] < 0) ? -1 : out[ax] + in.dims[ax];
    all_values &= bool(in.value) && in.fully_known();
  }
  ValueShape s = ValueShape::of(first->dtype, out);
  s.estimated = estimated;
  if (all_values && s.fully_known() && s.elements() <= kFoldLimit) {
    // Contents: for each outer index, append each input's block along the axis.
    std::int64_t outer = product(out, 0, ax);
    ConstData r2;
    bool is_float = false;
    for (std::size_t i = 0; i < c.num_inputs(); ++i)
      if (c.has_input(i)) is_float |= c.input(i).value->is_float;
    r2.is_float = is_float;
    for (std::int64_t o = 0; o < outer; ++o) {
      for (std::size_t i = 0; i < c.num_inputs(); ++i) {
        if (!c.has_input(i)) continue;
        const ValueShape& in = c.input(i);
        std::int64_t block = product(in.dims, ax);
        for (std::int64_t k = 0; k < block; ++k) {
          std::size_t j = std::size_t(o * block + k);
          if (is_float) r2.floats.push_back(in.value->is_float ? in.value->floats[j] : double(in.value->ints[j]));
          else r2.ints.push_back(in.value->ints[j]);
        }
      }
    }
    s.value = SharedConst(std::move(r2));
  }
  c.set_output(0, std::move(s));
}

void rule_split(ShapeContext& c) {
  const ValueShape& in = c.input(0);
  std::size_t n_out = c.num_outputs();
  if (in.rank < 0) {
    for (std::size_t i = 0; i < n_out; ++i) c.set_output(i, ValueShape{in.dtype, -1, {}, nullptr, in.estimated});
    return;
  }
  std::size_t ax = std::size_t(c.normalize_axis(c.node().attr_int("axis", 0), in.rank));
  std::vector<std::int64_t> split;
  bool have = axes_from(c, "split", 1, split);
  std::int64_t d = in.dims[ax];
  if (!have) {
    if (c.has_input(1)) {  // sizes computed at run time
      for (std::size_t i = 0; i < n_out; ++i) {
        ValueShape s = ValueShape::of(in.dtype, in.dims);
        s.dims[ax] = -1;
        c.set_output(i, std::move(s));
      }
      return;
    }
    std::int64_t parts = c.node().attr_int("num_outputs", std::int64_t(n_out));
    if (parts <= 0) c.fail("Split into " + std::to_string(parts) + " parts");
    if (std::uint64_t(parts) != n_out) c.fail("Split has " + std::to_string(parts) + " sizes for " + std::to_string(n_out) + " outputs");
    std::int64_t each = d < 0 ? -1 : (d + parts - 1) / parts;
    for (std::int64_t i = 0; i < parts; ++i)
      split.push_back(d < 0 ? -1 : std::min(each, std::max<std::int64_t>(0, d - i * each)));
  }
  if (split.size() != n_out) c.fail("Split has " + std::to_string(split.size()) + " sizes for " + std::to_string(n_out) + " outputs");
  if (d >= 0 && have && std::accumulate(split.begin(), split.end(), std::int64_t{0}, sat_add) != d)
    c.fail("Split sizes do not add up to dim " + std::to_string(d));
  for (std::size_t i = 0; i < n_out; ++i) {
    ValueShape s = ValueShape::of(in.dtype, in.dims);
    s.dims[ax] = split[i];
    s.estimated = in.estimated;
    c.set_output(i, std::move(s));
  }
}

void rule_slice(ShapeContext& c) {
  const ValueShape& in = c.input(0);
  std::vector<std::int64_t> starts, ends, axes, steps;
  bool ok;
  if (c.opset() < 10) {
    starts = c.node().attr_ints("starts");
    ends = c.node().attr_ints("ends");
    axes = c.node().attr_ints("axes");
    ok = c.node().has_attr("starts") && c.node().has_attr("ends");
  } else {
    ok = c.input_ints(1, starts) && c.input_ints(2, ends);
    if (c.has_input(3) && !c.input_ints(3, axes)) ok = false;
    if (c.has_input(4) && !c.input_ints(4, steps)) ok = false;
  }
  if (in.rank < 0) return c.set_output(0, ValueShape{in.dtype, -1, {}, nullptr, in.estimated});
  if (!ok) {
    // Bounds that depend on the data (an EmbeddingBag's Loop slices each bag by its offsets): a sliced
    // axis is at most as long as the input's, an upper bound marked as an estimate. Which axes are
    // sliced is known from `axes`, or without it from the length of `starts` (the first n axes).
    ValueShape s = ValueShape::of(in.dtype, std::vector<std::int64_t>(std::size_t(in.rank), -1));
    const ValueShape* st = c.opset() >= 10 ? c.input_if(1) : nullptr;
    bool axes_known = c.has_input(3) ? c.input_ints(3, axes) : st && st->rank == 1 && st->dims[0] >= 0;
    if (axes_known && !c.has_input(3))
      for (std::int64_t i = 0; i < st->dims[0] && i < in.rank; ++i) axes.push_back(i);
    if (axes_known) {
      s.dims = in.dims;
      bool bounded = false;
      for (auto a : axes) bounded |= in.dims[std::size_t(c.normalize_axis(a, in.rank))] > 0;
      s.estimated = in.estimated || bounded;
      if (bounded) c.warn("Slice bounds depend on the data: the sliced axes are taken at the input's length, an upper bound");
    }
    return c.set_output(0, std::move(s));
  }
  if (axes.empty())
    for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(std::int64_t(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || axes.size() != starts.size() || steps.size() != starts.size())
    c.fail("Slice starts/ends/axes/steps have different lengths");
  std::vector<std::int64_t> out = in.dims.vec();
  std::vector<std::int64_t> begin(out.size(), 0), step(out.size(), 1);
  for (std::size_t i = 0; i < axes.size(); ++i) {
    std::size_t ax = std::size_t(c.normalize_axis(axes[i], in.rank));
    std::int64_t d = in.dims[ax];
    if (steps[i] == 0) c.fail("Slice step is 0");
    if (d < 0) { out[ax] = -1; continue; }
    std::int64_t s = starts[i], e = ends[i], st = steps[i];
    if (s < 0) s += d;
    if (e < 0) e += d;
    if (st > 0) {
      s = std::clamp(s, std::int64_t{0}, d);
      e = std::clamp(e, std::int64_t{0}, d);
      out[ax] = e > s ? (e - s - 1) / st + 1 : 0;
    } else if (d == 0) {
      out[ax] = 0;
    } else {
      s = std::clamp(s, std::int64_t{0}, d - 1);  // spec: starts clamp to [0, d-1], ends to [-1, d-1]
      e = std::clamp(e, std::int64_t{-1}, d - 1);
      out[ax] = s > e ? std::int64_t(std::uint64_t(s - e - 1) / (std::uint64_t{0} - std::uint64_t(st)) + 1) : 0;
    }
    begin[ax] = s;
    step[ax] = st;
  }
  ValueShape s = ValueShape::of(in.dtype, out);
  s.estimated = in.estimated;
  if (foldable(in, product(out))) {
    auto ist = strides_of(in.dims), ost = strides_of(out);
    s.value = SharedConst(gather_contents(*in.value, product(out), [&](std::int64_t i) {
      std::int64_t src = 0;
      for (std::size_t k = 0; k < out.size(); ++k) src += (begin[k] + (i / ost[k] % out[k]) * step[k]) * ist[k];
      return src;
    }));
  }
  c.set_output(0, std::move(s));
}

void rule_gather(ShapeContext& c) {
  const ValueShape& data = c.input(0);
  const ValueShape& idx = c.input(1);
  if (data.rank < 0 || idx.rank < 0) return c.set_output(0, ValueShape{data.dtype, -1, {}, nullptr, false});
  if (data.rank == 0) c.fail("Gather on a scalar");
  std::size_t ax = std::size_t(c.normalize_axis(c.node().attr_int("axis", 0), data.rank));
  std::vector<std::int64_t> out(data.dims.begin(), data.dims.begin() + std::ptrdiff_t(ax));
  out.insert(out.end(), idx.dims.begin(), idx.dims.end());
  out.insert(out.end(), data.dims.begin() + std::ptrdiff_t(ax) + 1, data.dims.end());
  ValueShape s = ValueShape::of(data.dtype, out);
  s.estimated = data.estimated || idx.estimated;
  if (foldable(data, product(out)) && idx.value && !idx.value->is_float) {
    std::int64_t d = data.dims[ax];
    for (auto v : idx.value->ints)
      if (v < -d || v >= d) c.fail("Gather index " + std::to_string(v) + " is out of range for dim " + std::to_string(d));
    std::int64_t inner = product(data.dims, ax + 1), nidx = std::int64_t(idx.value->ints.size());
    s.value = SharedConst(gather_contents(*data.value, product(out), [&](std::int64_t i) {
      std::int64_t in_inner = i % inner, rest = i / inner;
      std::int64_t k = rest % nidx, outer = rest / nidx;
      std::int64_t j = idx.value->ints[std::size_t(k)];
      if (j < 0) j += d;
      return (outer * d + j) * inner + in_inner;
    }));
  }
  c.set_output(0, std::move(s));
}

void rule_gather_elements(ShapeContext& c) {
  ValueShape s = like_input(c, 1);
  s.dtype = c.input(0).dtype;
  c.set_output(0, std::move(s));
}

void rule_gather_nd(ShapeContext& c) {
  const ValueShape& data = c.input(0);
  const ValueShape& idx = c.input(1);
  std::int64_t b = c.node().attr_int("batch_dims", 0);
  if (data.rank < 0 || idx.rank < 1 || idx.dims.back() < 0) return c.set_output(0, ValueShape{data.dtype, -1, {}, nullptr, false});
  std::int64_t last = idx.dims.back();
  if (b < 0 || b >= std::min<std::int64_t>(data.rank, idx.rank))
    c.fail("GatherND batch_dims " + std::to_string(b) + " is out of range for ranks " + std::to_string(data.rank) +
           " and " + std::to_string(idx.rank));
  if (last > data.rank - b) c.fail("GatherND index depth exceeds the data rank");
  std::vector<std::int64_t> out(idx.dims.begin(), idx.dims.end() - 1);
  out.insert(out.end(), data.dims.begin() + std::ptrdiff_t(b + last), data.dims.end());
  c.set_output(0, ValueShape::of(data.dtype, out));
}

void rule_expand(ShapeContext& c) {
  const ValueShape& in = c.input(0);
  std::vector<std::int64_t> shape;
  if (!c.input_ints(1, shape) || in.rank < 0) {
    const ValueShape& sh = c.input(1);
    ValueShape s;
    s.dtype = in.dtype;
    if (sh.rank == 1 && sh.dims[0] >= 0 && in.rank >= 0) {
      s.dims = unknown_dims(c, std::max<std::int64_t>(sh.dims[0], in.rank));
      s.rank = int(s.dims.size());
    }
    return c.set_output(0, std::move(s));
  }
  std::vector<std::int64_t> out = broadcast(c, in.dims, shape);
  ValueShape s = ValueShape::of(in.dtype, out);
  if (foldable(in, product(out))) {
    auto ost = strides_of(out);
    auto ist = strides_of(in.dims);
    std::size_t off = out.size() - in.dims.size();
    s.value = SharedConst(gather_contents(*in.value, product(out), [&](std::int64_t i) {
      std::int64_t src = 0;
      for (std::size_t k = off; k < out.size(); ++k)
        if (in.dims[k - off] != 1) src += (i / ost[k] % out[k]) * ist[k - off];
      return src;
    }));
  }
  c.set_output(0, std::move(s));
}

void rule_tile(ShapeContext& c) {
  const ValueShape& in = c.input(0);
  std::vector<std::int64_t> reps;
  if (in.rank < 0 || !c.input_ints(1, reps)) {
    ValueShape s;
    s.dtype = in.dtype;
    if (in.rank >= 0) { s.rank = in.rank; s.dims.assign(std::size_t(in.rank), -1); }
    return c.set_output(0, std::move(s));
  }
  if (std::int64_t(reps.size()) != in.rank) c.fail("Tile repeats has " + std::to_string(reps.size()) + " entries for rank " + std::to_string(in.rank));
  std::vector<std::int64_t> out = in.dims.vec();
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (reps[i] < 0) c.fail("Tile repeat is negative");
    out[i] = out[i] < 0 ? -1 : sat_mul(out[i], reps[i]);
  }
  ValueShape s = ValueShape::of(in.dtype, out);
  if (foldable(in, product(out))) {
    auto ost = strides_of(out), ist = strides_of(in.dims);
    s.value = SharedConst(gather_contents(*in.value, product(out), [&](std::int64_t i) {
      std::int64_t src = 0;
      for (std::size_t k = 0; k < out.size(); ++k) src += (i / ost[k] % out[k]) % in.dims[k] * ist[k];
      return src;
    }));
  }
  c.set_output(0, std::move(s));
}

void rule_range(ShapeContext& c) {
  DType t = c.input(0).dtype;
  std::vector<double> s, l, d;
  if (!input_numbers(c, 0, s) || !input_numbers(c, 1, l) || !input_numbers(c, 2, d) || s.size() != 1 ||
      l.size() != 1 || d.size() != 1) {
    return c.set_output(0, ValueShape::of(t, {-1}));
  }
  if (d[0] == 0) c.fail("Range with delta 0");
  double count = std::ceil((l[0] - s[0]) / d[0]);
  if (!(count < 1e15)) c.fail("Range would produce an absurd number of elements");
  std::int64_t n = count > 0 ? std::int64_t(count) : 0;
  if (n <= std::int64_t(kFoldLimit)) {
    ConstData r;
    r.is_float = dtype_is_float(t);
    for (std::int64_t i = 0; i < n; ++i) {
      double v = s[0] + double(i) * d[0];
      if (r.is_float) r.floats.push_back(v);
      else r.ints.push_back(to_int64(v));
    }
    return c.set_output_value(0, t, {n}, std::move(r));
  }
  c.set_output(0, ValueShape::of(t, {n}));
}

void rule_pad(ShapeContext& c) {
  const ValueShape& in = c.input(0);
  std::vector<std::int64_t> pads;
  bool have = c.opset() < 11 ? (pads = c.node().attr_ints("pads"), c.node().has_attr("pads")) : c.input_ints(1, pads);
  if (in.rank < 0) return c.set_output(0, ValueShape{in.dtype, -1, {}, nullptr, false});
  if (!have) return c.set_output(0, ValueShape::of(in.dtype, std::vector<std::int64_t>(std::size_t(in.rank), -1)));
  std::vector<std::int64_t> axes;
  if (c.has_input(3) && !c.input_ints(3, axes))
    return c.set_output(0, ValueShape::of(in.dtype, std::vector<std::int64_t>(std::size_t(in.rank), -1)));
  if (axes.empty())
    for (std::int64_t i = 0; i < in.rank; ++i) axes.push_back(i);
  if (pads.size() != 2 * axes.size()) c.fail("Pad has " + std::to_string(pads.size()) + " pads for " + std::to_string(axes.size()) + " axes");
  std::vector<std::int64_t> out = in.dims.vec();
  for (std::size_t i = 0; i < axes.size(); ++i) {
    std::size_t ax = std::size_t(c.normalize_axis(axes[i], in.rank));
    if (out[ax] >= 0) out[ax] = sat_add(out[ax], sat_add(pads[i], pads[i + axes.size()]));
    if (out[ax] < -1) c.fail("Pad makes dim " + std::to_string(ax) + " negative");
  }
  c.set_output(0, ValueShape::of(in.dtype, out));
}

void rule_resize(ShapeContext& c) {
  const ValueShape& in = c.input(0);
  if (in.rank < 0) return c.set_output(0, ValueShape{in.dtype, -1, {}, nullptr, false});
  std::vector<double> scales;
  std::vector<std::int64_t> sizes;
  bool upsample = c.node().op_type == "Upsample";
  std::size_t scales_input = upsample || c.opset() < 11 ? 1 : 2;
  bool have_sizes = !upsample && c.opset() >= 11 && c.has_input(3) && c.input_ints(3, sizes) && !sizes.empty();
  bool have_scales = false;
  if (!have_sizes) {
    if (const Attribute* a = c.node().attr("scales"); a && upsample) {
      scales.assign(a->floats.begin(), a->floats.end());
      have_scales = true;
    } else {
      have_scales = input_numbers(c, scales_input, scales) && !scales.empty();
    }
  }
  std::vector<std::int64_t> axes = c.node().attr_ints("axes");
  if (axes.empty())
    for (std::int64_t i = 0; i < in.rank; ++i) axes.push_back(i);
  std::vector<std::int64_t> out = in.dims.vec();
  if (have_sizes) {
    if (sizes.size() != axes.size()) c.fail("Resize sizes has " + std::to_string(sizes.size()) + " entries for " + std::to_string(axes.size()) + " axes");
    for (std::size_t i = 0; i < axes.size(); ++i) out[std::size_t(c.normalize_axis(axes[i], in.rank))] = sizes[i];
  } else if (have_scales) {
    if (scales.size() != axes.size()) c.fail("Resize scales has " + std::to_string(scales.size()) + " entries for " + std::to_string(axes.size()) + " axes");
    for (std::size_t i = 0; i < axes.size(); ++i) {
      std::size_t ax = std::size_t(c.normalize_axis(axes[i], in.rank));
      if (!(scales[i] > 0) || scales[i] > 1e6) c.fail("Resize scale " + std::to_string(scales[i]) + " is not a sane positive number");
      if (out[ax] >= 0) out[ax] = to_int64(std::floor(double(out[ax]) * scales[i]));
    }
  } else {
    for (auto& d : out) d = -1;
  }
  c.set_output(0, ValueShape::of(in.dtype, out));
}

void rule_depth_space(ShapeContext& c) {
  const ValueShape& in = c.input(0);
  std::int64_t b = c.node().attr_int("blocksize", 0);
  if (b <= 0) c.fail("blocksize must be positive");
  if (in.rank < 0) return c.set_output(0, ValueShape{in.dtype, 4, {-1, -1, -1, -1}, nullptr, false});
  if (in.rank != 4) c.fail("expects a 4-D input");
  auto d = in.dims;
  auto mul = [](std::int64_t x, std::int64_t k) { return x < 0 ? -1 : sat_mul(x, k); };
  b = std::min<std::int64_t>(b, std::int64_t{1} << 31);  // keeps b * b in range; larger is as absurd
  auto div = [](std::int64_t x, std::int64_t k) { return x < 0 ? -1 : x / k; };
  if (c.node().op_type == "DepthToSpace") c.set_output(0, ValueShape::of(in.dtype, {d[0], div(d[1], b * b), mul(d[2], b), mul(d[3], b)}));
  else c.set_output(0, ValueShape::of(in.dtype, {d[0], mul(d[1], b * b), div(d[2], b), div(d[3], b)}));
}

void rule_one_hot(ShapeContext& c) {
  const ValueShape& idx = c.input(0);
  std::vector<double> depth;
  std::int64_t dep = -1;
  if (input_numbers(c, 1, depth) && depth.size() == 1) {
    // NaN once became depth 0 (a silent wrong shape): the runtime would refuse it, and so does this rule.
    if (!std::isfinite(depth[0]) || depth[0] < 1)
      c.fail("OneHot depth is " + std::to_string(depth[0]) + "; it must be a finite number >= 1");
    dep = to_int64(depth[0]);
  }
  DType t = c.input(2).dtype;
  if (idx.rank < 0) return c.set_output(0, ValueShape{t, -1, {}, nullptr, false});
  std::int64_t axis = c.node().attr_int("axis", -1);
  std::int64_t r = idx.rank + 1;
  std::size_t ax = std::size_t(c.normalize_axis(axis, r));
  std::vector<std::int64_t> out = idx.dims.vec();
  out.insert(out.begin() + std::ptrdiff_t(ax), dep);
  c.set_output(0, ValueShape::of(t, out));
}

void rule_eye_like(ShapeContext& c) {
  ValueShape s = like_input(c, 0);
  if (c.node().has_attr("dtype")) s.dtype = DType(c.node().attr_int("dtype", 1));
  c.set_output(0, std::move(s));
}

// Data-dependent output sizes: use the largest possible size and say so.
void rule_nonzero(ShapeContext& c) {
  const ValueShape& in = c.input(0);
  if (in.value && in.fully_known() && in.value->size() == in.elements()) {  // known contents: count them
    std::int64_t n = 0;
    for (std::size_t i = 0; i < in.value->size(); ++i)
      n += in.value->is_float ? in.value->floats[i] != 0 : in.value->ints[i] != 0;
    ValueShape s = ValueShape::of(DType::Int64, {std::int64_t(in.rank), n});
    s.estimated = in.estimated;
    return c.set_output(0, std::move(s));
  }
  ValueShape s = ValueShape::of(DType::Int64, {in.rank < 0 ? -1 : std::int64_t(in.rank), in.fully_known() ? std::int64_t(in.elements()) : -1});
  s.estimated = true;
  c.warn("NonZero output size depends on the data; using the upper bound (every element non-zero)");
  c.set_output(0, std::move(s));
}

void rule_compress(ShapeContext& c) {
  const ValueShape& in = c.input(0);
  const ValueShape& cond = c.input(1);
  const Attribute* axis = c.node().attr("axis");
  ValueShape s;
  s.dtype = in.dtype;
  if (in.rank < 0) return c.set_output(0, std::move(s));
  std::size_t ax = axis ? std::size_t(c.normalize_axis(axis->i, in.rank)) : 0;
  std::int64_t full = axis ? in.dims[ax] : (in.fully_known() ? std::int64_t(in.elements()) : -1);
  // Selected count: exact when the condition's contents are known, else at most min(len(condition), size).
  std::int64_t n = -1;
  bool exact = false;
  if (cond.value && cond.fully_known() && cond.value->size() == cond.elements()) {
    n = 0;
    for (std::size_t i = 0; i < cond.value->size() && (full < 0 || std::int64_t(i) < full); ++i)
      n += cond.value->is_float ? cond.value->floats[i] != 0 : cond.value->ints[i] != 0;
    exact = true;
  } else {
    std::int64_t len = cond.rank == 1 ? cond.dims[0] : -1;
    n = full < 0 ? len : len < 0 ? full : std::min(full, len);
  }
  if (axis) {
    s = ValueShape::of(in.dtype, in.dims);
    s.dims[ax] = n;
  } else {
    s = ValueShape::of(in.dtype, {n});
  }
  s.estimated = !exact || in.estimated || cond.estimated;
  if (!exact) c.warn("Compress output size depends on the data; using the upper bound");
  c.set_output(0, std::move(s));
}

void rule_unique(ShapeContext& c) {
  const ValueShape& in = c.input(0);
  const Attribute* axis = c.node().attr("axis");
  std::int64_t total = in.fully_known() ? std::int64_t(in.elements()) : -1;
  std::int64_t along = total;  // elements (or slices along axis) that are made unique
  ValueShape y = ValueShape::of(in.dtype, {total});
  if (axis && in.rank >= 0) {
    std::size_t ax = std::size_t(c.normalize_axis(axis->i, in.rank));
    along = in.dims[ax];
    y = ValueShape::of(in.dtype, in.dims);
  } else if (axis) {
    y = ValueShape{in.dtype, -1, {}, nullptr, false};
    along = -1;
  }
  if (axis && in.rank >= 0) y.dims[std::size_t(c.normalize_axis(axis->i, in.rank))] = along;
  y.estimated = true;
  c.set_output(0, y);
  ValueShape idx = ValueShape::of(DType::Int64, {along}), counts = idx;
  idx.estimated = counts.estimated = true;
  c.set_output(1, idx);
  ValueShape inverse = ValueShape::of(DType::Int64, {along});  // one entry per input element: exact
  inverse.estimated = in.estimated;
  c.set_output(2, inverse);
  c.set_output(3, counts);
  c.warn("Unique output size depends on the data; using the upper bound (all elements distinct)");
}

void rule_nms(ShapeContext& c) {
  const ValueShape& boxes = c.input(0);
  const ValueShape& scores = c.input(1);
  std::vector<std::int64_t> maxk;
  std::int64_t per_class = c.input_ints(2, maxk) && maxk.size() == 1 ? maxk[0] : -1;
  std::int64_t n = -1;
  if (scores.fully_known() && scores.rank == 3) {
    std::int64_t spatial = boxes.rank == 3 ? boxes.dims[1] : scores.dims[2];
    std::int64_t k = per_class < 0 ? spatial : std::min(per_class, spatial);
    n = k < 0 ? -1 : sat_mul(sat_mul(scores.dims[0], scores.dims[1]), k);
  }
  ValueShape s = ValueShape::of(DType::Int64, {n, 3});
  s.estimated = true;
  c.warn("NonMaxSuppression keeps a data-dependent number of boxes; using the upper bound");
  c.set_output(0, std::move(s));
}

void rule_topk(ShapeContext& c) {
  const ValueShape& in = c.input(0);
  std::int64_t k = -1;
  bool k_known = false;
  std::vector<std::int64_t> kv;
  if (c.opset() < 10) { k = c.node().attr_int("k", -1); k_known = c.node().has_attr("k"); }
  else if (c.input_ints(1, kv) && kv.size() == 1) { k = kv[0]; k_known = true; }
  if (k_known && k < 0) c.fail("TopK k=" + std::to_string(k) + " is negative");
  if (in.rank < 0) {
    c.set_output(0, ValueShape{in.dtype, -1, {}, nullptr, false});
    c.set_output(1, ValueShape{DType::Int64, -1, {}, nullptr, false});
    return;
  }
  std::size_t ax = std::size_t(c.normalize_axis(c.node().attr_int("axis", -1), in.rank));
  std::vector<std::int64_t> out = in.dims.vec();
  bool estimated = in.estimated || (c.has_input(1) && c.input(1).estimated);
  if (!k_known && in.dims[ax] >= 0) {
    // k computed from the data: at most the whole axis
    k = in.dims[ax];
    estimated = true;
    c.warn("TopK k depends on the data; using the upper bound (the whole axis, " + std::to_string(k) + ")");
  }
  if (k >= 0 && in.dims[ax] >= 0 && k > in.dims[ax]) {
    // an estimated axis is an upper bound: k beyond it cannot be told from a k that fits
    if (!in.estimated) c.fail("TopK k=" + std::to_string(k) + " exceeds the axis size " + std::to_string(in.dims[ax]));
    k = in.dims[ax];
  }
  out[ax] = k;
  ValueShape v = ValueShape::of(in.dtype, out), i = ValueShape::of(DType::Int64, out);
  v.estimated = i.estimated = estimated;
  c.set_output(0, std::move(v));
  c.set_output(1, std::move(i));
}

void rule_grid_sample(ShapeContext& c) {
  const ValueShape& x = c.input(0);
  const ValueShape& g = c.input(1);
  if (x.rank < 0 || g.rank < 0) return c.set_output(0, ValueShape{x.dtype, -1, {}, nullptr, false});
  if (x.rank < 2 || g.rank < 2) c.fail("GridSample needs an input of rank >= 2 and a grid of rank >= 2");
  std::vector<std::int64_t> out = {x.dims[0], x.dims[1]};
  out.insert(out.end(), g.dims.begin() + 1, g.dims.end() - 1);
  c.set_output(0, ValueShape::of(x.dtype, out));
}

void rule_roi_align(ShapeContext& c) {
  const ValueShape& x = c.input(0);
  const ValueShape& rois = c.input(1);
  std::int64_t oh = c.node().attr_int("output_height", 1), ow = c.node().attr_int("output_width", 1);
  c.set_output(0, ValueShape::of(x.dtype, {rois.rank >= 1 ? rois.dims[0] : -1, x.rank >= 2 ? x.dims[1] : -1, oh, ow}));
}

}  // namespace perfcard::ops

namespace perfcard::ops {

// Random generators and samplers: the shape of their input (…Like, Bernoulli) or of their attributes.
void rule_random(ShapeContext& c) {
  const Node& n = c.node();
  const std::string op(n.op_type);
  if (n.has_attr("dtype") && !dtype_is_known(n.attr_int("dtype", 0)))
    c.fail(op + " has an unknown dtype " + std::to_string(n.attr_int("dtype", 0)));
  if (op == "RandomNormal" || op == "RandomUniform") {
    DType t = DType(n.attr_int("dtype", std::int64_t(DType::Float)));
    if (!n.has_attr("shape")) c.fail(op + " without a shape attribute");
    return c.set_output(0, ValueShape::of(t, n.attr_ints("shape")));
  }
  if (op == "Multinomial") {
    const ValueShape& in = c.input(0);
    DType t = DType(n.attr_int("dtype", std::int64_t(DType::Int32)));
    std::int64_t batch = in.rank == 2 ? in.dims[0] : -1;
    return c.set_output(0, ValueShape::of(t, {batch, n.attr_int("sample_size", 1)}));
  }
  ValueShape s = like_input(c, 0);  // RandomNormalLike, RandomUniformLike, Bernoulli
  if (n.has_attr("dtype")) s.dtype = DType(n.attr_int("dtype", std::int64_t(s.dtype)));
  c.set_output(0, std::move(s));
}

// HannWindow, HammingWindow, BlackmanWindow: a 1-D window of `size` (a scalar input).
void rule_window(ShapeContext& c) {
  std::vector<std::int64_t> size;
  std::int64_t code = c.node().attr_int("output_datatype", std::int64_t(DType::Float));
  if (!dtype_is_known(code)) c.fail("window output_datatype " + std::to_string(code) + " is unknown");
  DType t = DType(code);
  std::int64_t n = c.input_ints(0, size) && size.size() == 1 ? size[0] : -1;
  if (n < -1) c.fail("window size is negative");
  c.set_output(0, ValueShape::of(t, {n}));
}

// DFT (opset 17): [batch, n_1, ..., n_k, 1 or 2] -> the same with 2 (complex) last, the transformed axis
// resized to dft_length and halved (+1) when onesided.
void rule_dft(ShapeContext& c) {
  const ValueShape& in = c.input(0);
  if (in.rank < 0) return c.set_output(0, ValueShape{in.dtype, -1, {}, nullptr, false});
  if (in.rank < 2) c.fail("DFT input needs a batch and a last (real/imaginary) dim");
  std::int64_t axis = c.node().attr_int("axis", 1);
  std::size_t ax = std::size_t(c.normalize_axis(axis, in.rank));
  if (ax == 0 || ax + 1 == std::size_t(in.rank)) c.fail("DFT axis must be a signal axis");
  std::vector<std::int64_t> out = in.dims.vec();
  std::vector<std::int64_t> len;
  if (c.has_input(1)) out[ax] = c.input_ints(1, len) && len.size() == 1 ? len[0] : -1;
  if (c.node().attr_int("onesided", 0) != 0 && c.node().attr_int("inverse", 0) == 0 && out[ax] >= 0)
    out[ax] = out[ax] / 2 + 1;
  out.back() = 2;
  c.set_output(0, ValueShape::of(in.dtype, out));
}

// Det: [*, M, M] -> [*].
void rule_det(ShapeContext& c) {
  const ValueShape& in = c.input(0);
  if (in.rank < 0) return c.set_output(0, ValueShape{in.dtype, -1, {}, nullptr, false});
  if (in.rank < 2) c.fail("Det needs square matrices in the last two dims");
  c.set_output(0, ValueShape::of(in.dtype, std::vector<std::int64_t>(in.dims.begin(), in.dims.end() - 2)));
}

// MaxRoiPool: [num_rois, C, pooled_h, pooled_w].
void rule_max_roi_pool(ShapeContext& c) {
  const ValueShape& x = c.input(0);
  const ValueShape& rois = c.input(1);
  std::vector<std::int64_t> pooled = c.node().attr_ints("pooled_shape");
  if (pooled.size() != 2) c.fail("MaxRoiPool needs a pooled_shape of two dims");
  c.set_output(0, ValueShape::of(x.dtype, {rois.rank >= 1 ? rois.dims[0] : -1, x.rank >= 2 ? x.dims[1] : -1, pooled[0], pooled[1]}));
}

// MaxUnpool: output_shape input when given, else (in - 1) * stride + kernel - pads.
void rule_max_unpool(ShapeContext& c) {
  const ValueShape& x = c.input(0);
  std::vector<std::int64_t> shape;
  if (c.has_input(2) && c.input_ints(2, shape)) return c.set_output(0, ValueShape::of(x.dtype, shape));
  if (x.rank < 0) return c.set_output(0, ValueShape{x.dtype, -1, {}, nullptr, false});
  if (c.has_input(2)) return c.set_output(0, ValueShape::of(x.dtype, unknown_dims(c, x.rank)));
  if (x.rank < 3) c.fail("MaxUnpool input needs N, C and spatial dims");
  std::size_t sp = std::size_t(x.rank - 2);
  std::vector<std::int64_t> k = c.node().attr_ints("kernel_shape"), st = c.node().attr_ints("strides"),
                            pads = c.node().attr_ints("pads");
  if (st.empty()) st.assign(sp, 1);
  if (pads.empty()) pads.assign(2 * sp, 0);
  if (k.size() != sp || st.size() != sp || pads.size() != 2 * sp) c.fail("MaxUnpool kernel/strides/pads do not match the spatial dims");
  std::vector<std::int64_t> out = {x.dims[0], x.dims[1]};
  for (std::size_t i = 0; i < sp; ++i) {
    std::int64_t d = x.dims[2 + i];
    if (k[i] <= 0 || st[i] <= 0 || k[i] > (std::int64_t{1} << 31) || st[i] > (std::int64_t{1} << 31))
      c.fail("MaxUnpool kernel and strides must be positive and below 2^31");
    std::int64_t o = d < 0 ? -1 : sat_add(sat_mul(d > 0 ? d - 1 : 0, st[i]), k[i] - pads[i] - pads[i + sp]);
    if (d >= 0 && o < 0) c.fail("MaxUnpool output dim is negative");
    out.push_back(o);
  }
  c.set_output(0, ValueShape::of(x.dtype, out));
}

// Gather, GatherElements, GatherND, Slice: every output element is one element read from the data input
// (an embedding lookup reads its rows, not the table), besides the indices or bounds, read whole.
void cost_indexed_read(const CostContext& c, double, NodeCost& out) {
  if (!c.has_input(0) || !c.output(0).fully_known()) return;
  out.partial_input = 0;
  out.partial_elements = c.output_elements(0);
}

}  // namespace perfcard::ops
