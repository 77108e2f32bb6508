// Shape rules for pointwise ops: unary maths and activations, broadcasting binary/variadic ops,
// comparisons, Where, Cast. Integer contents are folded so shape arithmetic stays concrete.
#include <algorithm>
#include <cmath>

#include "ops/rule_util.h"
#include "ops/rules.h"

namespace perfcard::ops {
namespace {

bool fold_unary(ShapeContext& c, DType out_type, double (*f)(double)) {
  const ValueShape& a = c.input(0);
  if (!a.value || !a.fully_known()) return false;
  ConstData r;
  r.is_float = dtype_is_float(out_type);
  for (std::size_t i = 0; i < a.value->size(); ++i) {
    double x = a.value->is_float ? a.value->floats[i] : double(a.value->ints[i]);
    double y = f(x);
    if (r.is_float) r.floats.push_back(y);
    else r.ints.push_back(to_int64(y));
  }
  c.set_output_value(0, out_type, a.dims, std::move(r));
  return true;
}

double (*unary_fn(std::string_view op))(double) {
  if (op == "Neg") return [](double x) { return -x; };
  if (op == "Abs") return [](double x) { return std::fabs(x); };
  if (op == "Floor") return [](double x) { return std::floor(x); };
  if (op == "Ceil") return [](double x) { return std::ceil(x); };
  if (op == "Round") return [](double x) { return std::nearbyint(x); };
  if (op == "Sqrt") return [](double x) { return std::sqrt(x); };
  if (op == "Reciprocal") return [](double x) { return 1.0 / x; };
  if (op == "Exp") return [](double x) { return std::exp(x); };
  if (op == "Log") return [](double x) { return std::log(x); };
  if (op == "Sign") return [](double x) { return double((x > 0) - (x < 0)); };
  if (op == "Identity") return [](double x) { return x; };
  if (op == "Relu") return [](double x) { return std::max(x, 0.0); };
  return nullptr;
}

}  // namespace

void rule_unary(ShapeContext& c) {
  const ValueShape& a = c.input(0);
  double (*f)(double) = unary_fn(c.node().op_type);
  if (f && a.value && fold_unary(c, a.dtype, f)) return;
  c.set_output(0, like_input(c, 0));
}

void rule_unary_bool(ShapeContext& c) {
  ValueShape s = like_input(c, 0);
  s.dtype = DType::Bool;
  const ValueShape& a = c.input(0);
  if (c.node().op_type == "Not" && a.value && fold_unary(c, DType::Bool, [](double x) { return double(x == 0); }))
    return;
  c.set_output(0, std::move(s));
}

void rule_dropout(ShapeContext& c) {
  c.set_output(0, c.input(0));  // an identity at inference: contents pass through
  ValueShape mask = like_input(c, 0);
  mask.dtype = DType::Bool;
  c.set_output(1, std::move(mask));
}

void rule_cast(ShapeContext& c) {
  std::int64_t to = c.node().attr_int("to", 0);
  if (!dtype_is_known(to)) c.fail("Cast to unknown type " + std::to_string(to));
  DType t = DType(to);
  double (*convert)(double) = t == DType::Bool ? [](double x) { return double(x != 0); } : [](double x) { return x; };
  if (c.input(0).value && t != DType::String && fold_unary(c, t, convert)) return;
  ValueShape s = like_input(c, 0);
  s.dtype = t;
  c.set_output(0, std::move(s));
}

void rule_cast_like(ShapeContext& c) {
  DType t = c.input(1).dtype;
  if (c.input(0).value && fold_unary(c, t, [](double x) { return x; })) return;
  ValueShape s = like_input(c, 0);
  s.dtype = t;
  c.set_output(0, std::move(s));
}

void rule_binary(ShapeContext& c) {
  DType t = c.input(0).dtype;
  const std::string_view op = c.node().op_type;
  if (c.num_inputs() == 2) {
    BinaryFn f = nullptr;
    BinaryIntFn fi = nullptr;
    if (op == "Add" || op == "Sum") { f = [](double a, double b) { return a + b; }; fi = wrap_add; }
    else if (op == "Sub") { f = [](double a, double b) { return a - b; }; fi = wrap_sub; }
    else if (op == "Mul") { f = [](double a, double b) { return a * b; }; fi = wrap_mul; }
    else if (op == "Div") {
      f = [](double a, double b) { return a / b; };
      fi = [](std::int64_t a, std::int64_t b) { return b == 0 ? 0 : b == -1 ? wrap_sub(0, a) : a / b; };
    } else if (op == "Max") {
      f = [](double a, double b) { return std::max(a, b); };
      fi = [](std::int64_t a, std::int64_t b) { return std::max(a, b); };
    } else if (op == "Min") {
      f = [](double a, double b) { return std::min(a, b); };
      fi = [](std::int64_t a, std::int64_t b) { return std::min(a, b); };
    } else if (op == "Mod") {
      f = [](double a, double b) { return std::fmod(a, b); };
      fi = [](std::int64_t a, std::int64_t b) { return b == 0 || b == -1 ? 0 : wrap_add(a % b, b) % b; };
    } else if (op == "Pow") {
      f = [](double a, double b) { return std::pow(a, b); };
      fi = [](std::int64_t a, std::int64_t b) { return to_int64(std::pow(double(a), double(b))); };
    }
    if (f && fold_binary(c, t, f, fi)) return;
  }
  c.set_output(0, broadcast_inputs(c, t));
}

void rule_compare(ShapeContext& c) {
  const std::string_view op = c.node().op_type;
  BinaryFn f = nullptr;
  if (op == "Equal") f = [](double a, double b) { return double(a == b); };
  else if (op == "Less") f = [](double a, double b) { return double(a < b); };
  else if (op == "Greater") f = [](double a, double b) { return double(a > b); };
  else if (op == "LessOrEqual") f = [](double a, double b) { return double(a <= b); };
  else if (op == "GreaterOrEqual") f = [](double a, double b) { return double(a >= b); };
  else if (op == "And") f = [](double a, double b) { return double(a != 0 && b != 0); };
  else if (op == "Or") f = [](double a, double b) { return double(a != 0 || b != 0); };
  else if (op == "Xor") f = [](double a, double b) { return double((a != 0) != (b != 0)); };
  if (f && fold_binary(c, DType::Bool, f, nullptr)) return;
  c.set_output(0, broadcast_inputs(c, DType::Bool));
}

void rule_where(ShapeContext& c) {
  ValueShape s = broadcast_inputs(c, c.input(1).dtype);
  const ValueShape &cond = c.input(0), &x = c.input(1), &y = c.input(2);
  if (s.fully_known() && cond.value && !cond.value->is_float && x.value && y.value && s.elements() <= kFoldLimit &&
      cond.fully_known() && x.fully_known() && y.fully_known() && x.value->is_float == y.value->is_float) {
    // Broadcast each operand by the same index mapping as fold_binary.
    auto at = [&](const ValueShape& v, std::int64_t flat) {
      std::int64_t idx = 0, stride = 1;
      for (std::size_t k = s.dims.size(); k-- > 0;) {
        std::int64_t coord = flat % s.dims[k];
        flat /= s.dims[k];
        std::size_t off = s.dims.size() - v.dims.size();
        if (k >= off) {
          std::int64_t d = v.dims[k - off];
          idx += (d == 1 ? 0 : coord) * stride;
          stride *= d;
        }
      }
      return std::size_t(idx);
    };
    ConstData r;
    r.is_float = x.value->is_float;
    for (std::int64_t i = 0; i < std::int64_t(s.elements()); ++i) {
      bool pick = cond.value->ints[at(cond, i)] != 0;
      const ValueShape& src = pick ? x : y;
      if (r.is_float) r.floats.push_back(src.value->floats[at(src, i)]);
      else r.ints.push_back(src.value->ints[at(src, i)]);
    }
    c.set_output_value(0, s.dtype, s.dims, std::move(r));
    return;
  }
  c.set_output(0, std::move(s));
}

void rule_same_as_first(ShapeContext& c) { c.set_output(0, like_input(c, 0)); }

}  // namespace perfcard::ops
