// Per-node results for the graph attributes of control-flow nodes (shapes, costs of their bodies).
#pragma once

#include <cstddef>
#include <map>
#include <vector>

namespace perfcard {

// Kept by node rather than in a slot per node: a million-node graph without control flow should not pay
// 24 bytes a node for bodies it does not have.
template <class T>
class NodeBodies {
 public:
  // The node's results, one per graph attribute in attribute order; empty for a node without any.
  const std::vector<T>& operator[](std::size_t node) const {
    auto it = by_node_.find(node);
    return it == by_node_.end() ? none_ : it->second;
  }
  std::vector<T>& of(std::size_t node) { return by_node_[node]; }  // made on first use
  void clear() { by_node_.clear(); }

 private:
  std::map<std::size_t, std::vector<T>> by_node_;  // map: what a body's walk points into never moves
  std::vector<T> none_;
};

}  // namespace perfcard
