#include "perfcard/trees.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "perfcard/error.h"
#include "perfcard/quant.h"

namespace perfcard {
namespace {

// Trees walked in lockstep by margin(): enough independent chains of loads to keep a core busy while each
// waits on its last load (natively 8 lanes walk 1.25x faster than 4; 16 add little).
constexpr std::size_t kLanes = 8;

std::string at_node(std::size_t tree, std::size_t node) {
  return "tree " + std::to_string(tree) + ", node " + std::to_string(node);
}

}  // namespace

TreeEnsemble TreeEnsemble::load(const WeightsFile& w, std::size_t features) {
  TreeEnsemble e;
  e.features_ = features;
  e.base_score_ = w.get_float("trees.base_score");
  if (!std::isfinite(e.base_score_)) throw data_error("trees.base_score is not a finite number");
  const auto first = w.tensor("tree.first", WDType::I32, {-1}).i32();
  const std::int64_t n = std::int64_t(w.tensor("node.feature", WDType::I32, {-1}).elements());
  const auto feature = w.tensor("node.feature", WDType::I32, {n}).i32();
  const auto threshold = w.tensor("node.threshold", WDType::F32, {n}).f32();
  const auto left = w.tensor("node.left", WDType::I32, {n}).i32();
  const auto right = w.tensor("node.right", WDType::I32, {n}).i32();
  const auto default_left = w.tensor("node.default_left", WDType::U8, {n}).u8();
  const TensorInfo& leaf = w.tensor("node.leaf");
  if (leaf.dims.size() != 1 || leaf.dims[0] != std::uint64_t(n))
    throw data_error("tensor 'node.leaf' has shape " + leaf.shape_string() + ", expected [" + std::to_string(n) + "]");
  if (first.empty()) throw data_error("the trees file holds no trees");

  e.first_.assign(first.begin(), first.end());
  e.feature_.assign(feature.begin(), feature.end());
  e.threshold_.assign(threshold.begin(), threshold.end());
  e.left_.assign(left.begin(), left.end());
  e.right_.assign(right.begin(), right.end());
  e.default_left_.assign(default_left.begin(), default_left.end());
  e.leaf_.resize(std::size_t(n));
  std::vector<double> tree_bound(first.size(), 0);
  // Tree t owns nodes [first[t], first[t + 1]).
  auto tree_end = [&](std::size_t t) { return t + 1 < first.size() ? std::int64_t(first[t + 1]) : n; };
  if (leaf.dtype == WDType::F16) {
    e.leaf_format_ = "f16";
    const auto bits = leaf.f16_bits();
    for (std::int64_t i = 0; i < n; ++i) e.leaf_[std::size_t(i)] = quant::fp16_to_fp32(bits[std::size_t(i)]);
    for (std::size_t t = 0; t < first.size(); ++t) {
      double m = 0;
      for (std::int64_t i = first[t]; i >= 0 && i < tree_end(t) && i < n; ++i) m = std::max(m, double(std::fabs(e.leaf_[std::size_t(i)])));
      // Round to nearest in binary16: at most half an ulp, 2^-11 of the value (2^-25 absolute below 2^-14).
      tree_bound[t] = std::max(m * std::ldexp(1.0, -11), std::ldexp(1.0, -25));
    }
  } else if (leaf.dtype == WDType::I8) {
    e.leaf_format_ = "i8";
    const auto q = leaf.i8();
    const auto scale = w.tensor("tree.leaf_scale", WDType::F32, {std::int64_t(first.size())}).f32();
    for (std::size_t t = 0; t < first.size(); ++t) {
      if (!std::isfinite(scale[t]) || scale[t] < 0) throw data_error("tree.leaf_scale of " + at_node(t, 0) + " is not a finite number >= 0");
      for (std::int64_t i = first[t]; i >= 0 && i < tree_end(t) && i < n; ++i)
        e.leaf_[std::size_t(i)] = float(q[std::size_t(i)]) * scale[t];
      tree_bound[t] = 0.5 * double(scale[t]);
    }
  } else {
    throw data_error("tensor 'node.leaf' is " + wdtype_name(leaf.dtype) + ", expected f16 or i8");
  }
  for (double b : tree_bound) e.rounding_bound_ += b;

  // Structure: trees tile the node array in order, each non-empty; children lie after their parent and
  // inside its tree; split features index the row; leaves are finite.
  for (std::size_t t = 0; t < first.size(); ++t) {
    const std::int64_t begin = first[t], end = tree_end(t);
    if (begin < 0 || begin >= end || end > n || (t == 0 && begin != 0))
      throw data_error("tree " + std::to_string(t) + " has an invalid node range [" + std::to_string(begin) + ", " +
                       std::to_string(end) + ") of " + std::to_string(n) + " nodes");
    for (std::int64_t i = begin; i < end; ++i) {
      const std::size_t k = std::size_t(i);
      const std::int32_t f = e.feature_[k];
      if (f < 0) {
        if (!std::isfinite(e.leaf_[k])) throw data_error("leaf " + at_node(t, std::size_t(i - begin)) + " is not finite");
        continue;
      }
      if (std::size_t(f) >= features)
        throw data_error("split " + at_node(t, std::size_t(i - begin)) + " reads feature " + std::to_string(f) + " of " +
                         std::to_string(features));
      if (std::isnan(e.threshold_[k])) throw data_error("split " + at_node(t, std::size_t(i - begin)) + " has a NaN threshold");
      for (std::int32_t c : {e.left_[k], e.right_[k]})
        if (c <= i || c >= end)
          throw data_error("split " + at_node(t, std::size_t(i - begin)) + " has child " + std::to_string(c) +
                           " outside (" + std::to_string(i) + ", " + std::to_string(end) + ")");
      if (e.default_left_[k] > 1) throw data_error("node.default_left of " + at_node(t, std::size_t(i - begin)) + " is not 0 or 1");
    }
  }
  e.lay_out();
  return e;
}

void TreeEnsemble::lay_out() {
  const std::size_t n = feature_.size(), trees = first_.size();
  const auto leaf_slot = std::uint32_t(features_);  // the padding value after the row
  eval_feature_.assign(n, 0);
  eval_left_.assign(n, 0);
  eval_threshold_.assign(n, 0);
  eval_leaf_.assign(n, 0);
  eval_root_.resize(trees);
  eval_depth_.resize(trees);
  std::vector<std::uint8_t> reached(n, 0);
  std::vector<std::pair<std::int32_t, std::int32_t>> queue;  // (file node, depth)
  std::size_t next = 0;  // the next free slot of the evaluation arrays
  for (std::size_t t = 0; t < trees; ++t) {
    const std::int32_t root = first_[t];
    eval_root_[t] = std::int32_t(next);
    queue.assign(1, {root, 0});
    reached[std::size_t(root)] = 1;
    std::int32_t depth = 0;
    // Breadth first: node i of the queue goes to slot eval_root + i, so the children a split appends
    // land side by side.
    for (std::size_t i = 0; i < queue.size(); ++i) {
      const auto [k, d] = queue[i];
      const std::size_t slot = next + i, kk = std::size_t(k);
      depth = std::max(depth, d);
      if (feature_[kk] < 0) {
        eval_feature_[slot] = leaf_slot;
        eval_threshold_[slot] = std::numeric_limits<float>::infinity();
        eval_left_[slot] = std::int32_t(slot);
        eval_leaf_[slot] = leaf_[kk];
        continue;
      }
      for (std::int32_t c : {left_[kk], right_[kk]}) {
        if (reached[std::size_t(c)]++)
          throw data_error("split tree " + std::to_string(t) + ", node " + std::to_string(k - root) +
                           " has a child another node already has (not a tree)");
        queue.push_back({c, d + 1});
      }
      eval_feature_[slot] = std::uint32_t(feature_[kk]) | (default_left_[kk] ? 0u : 0x80000000u);
      eval_threshold_[slot] = threshold_[kk];
      eval_left_[slot] = std::int32_t(next + queue.size() - 2);
    }
    next += queue.size();
    eval_depth_[t] = depth;
  }
  // Nodes no root reaches are never evaluated; the copy keeps only the reachable ones.
  eval_feature_.resize(next);
  eval_left_.resize(next);
  eval_threshold_.resize(next);
  eval_leaf_.resize(next);
  eval_group_depth_.clear();
  for (std::size_t t = 0; t + kLanes <= trees; t += kLanes)
    eval_group_depth_.push_back(
        *std::max_element(eval_depth_.begin() + std::ptrdiff_t(t), eval_depth_.begin() + std::ptrdiff_t(t + kLanes)));
}

double TreeEnsemble::margin_reference(std::span<const float> x) const {
  if (x.size() != features_)
    throw internal_error("a feature row of " + std::to_string(x.size()) + " values for trees of " +
                         std::to_string(features_));
  // xgboost adds the leaves in fp32; so do we, then the base score.
  float sum = 0;
  for (std::int32_t root : first_) {
    std::size_t k = std::size_t(root);
    while (feature_[k] >= 0) {
      const float v = x[std::size_t(feature_[k])];
      const bool go_left = std::isnan(v) ? default_left_[k] != 0 : v < threshold_[k];
      k = std::size_t(go_left ? left_[k] : right_[k]);
    }
    sum += leaf_[k];
  }
  return base_score_ + double(sum);
}

double TreeEnsemble::margin(std::span<const float> x) const {
  if (x.size() != features_)
    throw internal_error("a feature row of " + std::to_string(x.size()) + " values for trees of " +
                         std::to_string(features_));
  // The row and the padding value leaves read, on the stack for every row the schema gives (one walk per
  // device row: a heap copy per call was a tenth of the walk's time in wasm).
  constexpr std::size_t kStackRow = 255;
  std::array<float, kStackRow + 1> stack_row;
  std::vector<float> heap_row;
  float* xr = stack_row.data();
  if (x.size() > kStackRow) {
    heap_row.resize(x.size() + 1);
    xr = heap_row.data();
  }
  std::copy(x.begin(), x.end(), xr);
  xr[x.size()] = 0.f;
  const std::uint32_t* feat = eval_feature_.data();
  const float* thr = eval_threshold_.data();
  const std::int32_t* left = eval_left_.data();
  // One step down: left when x < threshold; a NaN goes the way bit 31 says. Integer arithmetic only, so
  // the compiler emits no branch that depends on the data.
  auto step = [&](std::int32_t k) {
    const std::uint32_t f = feat[k];
    const float v = xr[f & 0x7fffffffu];
    const std::uint32_t lt = v < thr[k];
    const std::uint32_t nan = v != v;
    const std::uint32_t right = ((lt | nan) ^ 1u) | (nan & (f >> 31));
    return left[k] + std::int32_t(right);
  };
  float sum = 0;
  std::size_t t = 0;
  const std::size_t trees = eval_root_.size();
  for (std::size_t g = 0; t + kLanes <= trees; t += kLanes, ++g) {
    std::int32_t k[kLanes];
    for (std::size_t l = 0; l < kLanes; ++l) k[l] = eval_root_[t + l];
    for (std::int32_t s = eval_group_depth_[g]; s > 0; --s)
      for (std::size_t l = 0; l < kLanes; ++l) k[l] = step(k[l]);
    for (std::size_t l = 0; l < kLanes; ++l) sum += eval_leaf_[std::size_t(k[l])];
  }
  for (; t < trees; ++t) {
    std::int32_t k = eval_root_[t];
    for (std::int32_t s = eval_depth_[t]; s > 0; --s) k = step(k);
    sum += eval_leaf_[std::size_t(k)];
  }
  return base_score_ + double(sum);
}

void TreeEnsemble::margins(std::span<const float> rows, std::span<double> out) const {
  const std::size_t count = out.size();
  if (rows.size() != count * features_)
    throw internal_error(std::to_string(rows.size()) + " feature values for " + std::to_string(count) +
                         " rows of trees of " + std::to_string(features_));
  // Tree by tree over a block of rows: a tree's nodes stay in the L1 cache for the whole block, where
  // margin() reads every tree's once per row; the block's chains of loads overlap as margin()'s trees do.
  const std::size_t stride = features_ + 1;
  std::vector<float> block(kLanes * stride, 0.f);  // the block's rows, each followed by the padding value
  const std::uint32_t* feat = eval_feature_.data();
  const float* thr = eval_threshold_.data();
  const std::int32_t* left = eval_left_.data();
  std::size_t r = 0;
  for (; r + kLanes <= count; r += kLanes) {
    for (std::size_t l = 0; l < kLanes; ++l)
      std::copy_n(rows.data() + (r + l) * features_, features_, block.data() + l * stride);
    float sum[kLanes] = {};
    for (std::size_t t = 0; t < eval_root_.size(); ++t) {
      std::int32_t k[kLanes];
      for (std::size_t l = 0; l < kLanes; ++l) k[l] = eval_root_[t];
      for (std::int32_t s = eval_depth_[t]; s > 0; --s)
        for (std::size_t l = 0; l < kLanes; ++l) {
          const std::uint32_t f = feat[k[l]];
          const float v = block[l * stride + (f & 0x7fffffffu)];
          const std::uint32_t lt = v < thr[k[l]];
          const std::uint32_t nan = v != v;
          k[l] = left[k[l]] + std::int32_t(((lt | nan) ^ 1u) | (nan & (f >> 31)));
        }
      for (std::size_t l = 0; l < kLanes; ++l) sum[l] += eval_leaf_[std::size_t(k[l])];
    }
    for (std::size_t l = 0; l < kLanes; ++l) out[r + l] = base_score_ + double(sum[l]);
  }
  for (; r < count; ++r) out[r] = margin(rows.subspan(r * features_, features_));
}

std::vector<bool> TreeEnsemble::used_features() const {
  std::vector<bool> used(features_, false);
  for (std::int32_t f : feature_)
    if (f >= 0) used[std::size_t(f)] = true;
  return used;
}

}  // namespace perfcard
