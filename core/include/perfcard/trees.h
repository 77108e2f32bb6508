// Gradient-boosted regression trees as struct-of-arrays (one array per node field, as treelite lays trees
// out), read from a PCWT file (docs/weights-format.md, "trees"). The trees predict a margin; the trees
// predictor turns it into a correction of the roofline.
//
// Every tree is stored root first with children after their parent (child index > parent index), which
// load() checks: evaluation walks forward only, so a hostile file cannot make it loop.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "perfcard/weights_file.h"

namespace perfcard {

class TreeEnsemble {
 public:
  // Reads the "tree.*" and "node.*" tensors and "trees.base_score"; `features` is the row width the
  // splits may index. Leaves are stored as f16, or as i8 with a per-tree f32 scale ("tree.leaf_scale").
  static TreeEnsemble load(const WeightsFile& file, std::size_t features);

  // base_score + the leaf each tree routes x to. A split sends x left when x[f] < threshold, and a NaN
  // down the node's default branch (as xgboost does).
  double margin(std::span<const float> x) const;

  std::size_t trees() const { return first_.size(); }
  std::size_t nodes() const { return feature_.size(); }
  std::size_t features() const { return features_; }
  // The largest error the stored leaf format adds to a margin against the fp32 leaves it was made from:
  // sum over trees of the largest rounding of one of its leaves (half an fp16 ulp of the largest leaf,
  // or half a quantization step).
  double leaf_rounding_bound() const { return rounding_bound_; }
  std::string leaf_format() const { return leaf_format_; }
  // Features some split reads (the others cannot change a prediction).
  std::vector<bool> used_features() const;

 private:
  std::vector<std::int32_t> first_;
  std::vector<std::int32_t> feature_, left_, right_;
  std::vector<float> threshold_, leaf_;
  std::vector<std::uint8_t> default_left_;
  double base_score_ = 0, rounding_bound_ = 0;
  std::size_t features_ = 0;
  std::string leaf_format_;
};

}  // namespace perfcard
