// Gradient-boosted regression trees as struct-of-arrays (one array per node field, as treelite lays trees
// out), read from a PCWT file (docs/weights-format.md, "trees"). The trees predict a margin; the trees
// predictor turns it into a correction of the roofline.
//
// Every tree is stored root first with children after their parent (child index > parent index), and every
// node but a root has exactly one parent, which load() checks: evaluation walks forward only, so a hostile
// file cannot make it loop, and re-laying a tree out cannot multiply its nodes.
//
// Two evaluations, equal to the bit: margin_reference() walks the file's arrays node by node (the scalar
// reference); margin() walks a copy laid out for speed, still one array per field: each tree breadth
// first with a split's two children side by side (right = left + 1, one index to load), leaves looping
// to themselves, and eight trees walked in lockstep for their depth with no data-dependent branch, so the
// eight chains of loads overlap instead of waiting on one mispredicted branch after another. The leaves
// are summed in tree order either way, as xgboost sums them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "perfcard/networks.h"
#include "perfcard/weights_file.h"

namespace perfcard {

class TreeEnsemble final : public TreeNetwork {
 public:
  // Reads the "tree.*" and "node.*" tensors and "trees.base_score"; `features` is the row width the
  // splits may index. Leaves are stored as f16, or as i8 with a per-tree f32 scale ("tree.leaf_scale").
  static TreeEnsemble load(const WeightsFile& file, std::size_t features);

  // base_score + the leaf each tree routes x to. A split sends x left when x[f] < threshold, and a NaN
  // down the node's default branch (as xgboost does).
  double margin(std::span<const float> x) const override;
  double margin_reference(std::span<const float> x) const;
  // margin() of each row, equal to it to the bit.
  void margins(std::span<const float> rows, std::span<double> out) const override;

  std::size_t trees() const { return first_.size(); }
  std::size_t nodes() const { return feature_.size(); }
  std::size_t features() const { return features_; }
  // The largest error the stored leaf format adds to a margin against the fp32 leaves it was made from:
  // sum over trees of the largest rounding of one of its leaves (half an fp16 ulp of the largest leaf,
  // or half a quantization step).
  double leaf_rounding_bound() const { return rounding_bound_; }
  std::string leaf_format() const { return leaf_format_; }
  // Features some split reads (the others cannot change a prediction).
  std::vector<bool> used_features() const override;

 private:
  std::vector<std::int32_t> first_;
  std::vector<std::int32_t> feature_, left_, right_;
  std::vector<float> threshold_, leaf_;
  std::vector<std::uint8_t> default_left_;
  // The evaluation layout (see the top of this file). Feature index kLeafSlot... of a leaf reads the
  // row's padding value 0, below its +inf threshold, and goes "left" to itself.
  std::vector<std::int32_t> eval_root_, eval_depth_, eval_group_depth_;
  std::vector<std::uint32_t> eval_feature_;  // feature index; bit 31: a NaN goes right
  std::vector<std::int32_t> eval_left_;
  std::vector<float> eval_threshold_, eval_leaf_;
  void lay_out();
  double base_score_ = 0, rounding_bound_ = 0;
  std::size_t features_ = 0;
  std::string leaf_format_;
};

}  // namespace perfcard
