// Helpers shared by the shape and cost rules.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "perfcard/cost.h"
#include "perfcard/op_registry.h"

namespace perfcard::ops {

// Numpy-style broadcast of known shapes; -1 dims stay unknown. Fails on incompatible dims.
std::vector<std::int64_t> broadcast(ShapeContext& c, std::span<const std::int64_t> a, std::span<const std::int64_t> b);

// Broadcast over all present inputs; rank -1 when any input rank is unknown.
ValueShape broadcast_inputs(ShapeContext& c, DType out_type, std::size_t first = 0, std::size_t last = SIZE_MAX);

// Same type and shape as input i, without its contents.
ValueShape like_input(ShapeContext& c, std::size_t i);

// -1 when a dim is unknown; saturates at INT64_MAX when the product overflows.
std::int64_t product(std::span<const std::int64_t> dims, std::size_t from = 0, std::size_t to = SIZE_MAX);

// Overflow-safe arithmetic. Inferred dims stay below 2^50 (shape inference checks every output), but
// attributes and constant contents can hold any int64: rules combine them with these.
std::int64_t sat_mul(std::int64_t a, std::int64_t b);  // a, b >= 0; INT64_MAX on overflow
std::int64_t sat_add(std::int64_t a, std::int64_t b);  // saturates at INT64_MIN / INT64_MAX
std::int64_t to_int64(double v);                      // saturating cast; NaN -> 0
// Two's-complement int64 arithmetic, as runtimes compute it, for folding tensor contents.
inline std::int64_t wrap_add(std::int64_t a, std::int64_t b) { return std::int64_t(std::uint64_t(a) + std::uint64_t(b)); }
inline std::int64_t wrap_sub(std::int64_t a, std::int64_t b) { return std::int64_t(std::uint64_t(a) - std::uint64_t(b)); }
inline std::int64_t wrap_mul(std::int64_t a, std::int64_t b) { return std::int64_t(std::uint64_t(a) * std::uint64_t(b)); }

// Elementwise evaluation on known small contents (after broadcasting), for shape-value propagation.
// Plain function pointers (the rules' lambdas capture nothing): a std::function per lambda cost the page's
// module a vtable and its type name each. `fi` null: integer operands go through `f` as doubles.
using BinaryFn = double (*)(double, double);
using BinaryIntFn = std::int64_t (*)(std::int64_t, std::int64_t);
bool fold_binary(ShapeContext& c, DType out_type, BinaryFn f, BinaryIntFn fi);

// A Loop trip count above this is a while loop bounded by its condition only (exporters write INT64_MAX).
constexpr std::int64_t kMaxTrips = std::int64_t{1} << 40;

// Limits how many elements rules fold: contents are kept only for shape-sized tensors.
constexpr std::size_t kFoldLimit = 4096;

// `rank` unknown dims, failing when the rank is absurd (a shape tensor of unknown contents but known,
// huge length must not make a rule allocate that many dims).
std::vector<std::int64_t> unknown_dims(ShapeContext& c, std::int64_t rank);

// Reads an "axes"-like list from attribute `name` (older opsets) or input `input` (newer ones).
// Returns false when neither is present; fails when the input exists but its contents are unknown.
bool axes_from(ShapeContext& c, const char* name, std::size_t input, std::vector<std::int64_t>& out);

// Cost rules (see op_registry.h for the meaning of k).
void cost_none(const CostContext&, double, NodeCost&);
void cost_per_output(const CostContext& c, double k, NodeCost& out);   // k FLOPs per output element
void cost_per_input(const CostContext& c, double k, NodeCost& out);    // k FLOPs per element of input 0

}  // namespace perfcard::ops
