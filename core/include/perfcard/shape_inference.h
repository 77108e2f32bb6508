// Shape inference with bound symbolic dims, including shape-value propagation: the small integer
// tensors that exported graphs compute from Shape (Shape -> Gather -> Concat -> Reshape) are evaluated,
// so every shape downstream is concrete. Data-dependent sizes (NonZero, NMS, ...) get an upper-bound
// estimate that is marked as such, never a silent number.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "perfcard/dims.h"
#include "perfcard/error.h"
#include "perfcard/graph.h"
#include "perfcard/node_bodies.h"

namespace perfcard {

struct DimBindings {
  std::map<std::string, std::int64_t> values;  // symbol -> size, e.g. batch=8
  std::int64_t unbound_default = 1;            // used (with a warning) for unbound or unnamed dims
};

// Folded contents, shared by the values that carry them (a Reshape's output keeps its input's). One pointer
// with the count in the block, where a shared_ptr is two: a million-value graph feels the difference. The
// count is not atomic: an analysis runs on one thread.
class SharedConst {
 public:
  SharedConst() = default;
  SharedConst(std::nullptr_t) {}  // NOLINT: as a shared_ptr
  explicit SharedConst(ConstData d);
  SharedConst(const SharedConst& o);
  SharedConst(SharedConst&& o) noexcept : block_(std::exchange(o.block_, nullptr)) {}
  SharedConst& operator=(SharedConst o) noexcept {
    std::swap(block_, o.block_);
    return *this;
  }
  ~SharedConst();  // out of line, with the copy: every ValueShape's copy and destructor would inline them
  explicit operator bool() const { return block_ != nullptr; }
  const ConstData& operator*() const { return block_->data; }
  const ConstData* operator->() const { return &block_->data; }
  const ConstData* get() const { return block_ ? &block_->data : nullptr; }
  void reset() { *this = SharedConst(); }

 private:
  struct Block {
    ConstData data;
    std::size_t refs;
  };
  Block* block_ = nullptr;
};

// A value's type after inference: concrete where possible, -1 where unknown.
struct ValueShape {
  DType dtype = DType::Undefined;
  int rank = -1;                          // -1: unknown rank
  Dims dims;                              // -1: unknown dim
  SharedConst value;                      // contents, when known and small
  bool estimated = false;                 // some dim is a data-dependent estimate

  bool fully_known() const;
  // Elements / bytes; 0 when not fully known.
  std::uint64_t elements() const;
  std::uint64_t bytes() const;
  static ValueShape of(DType t, Dims d) {
    ValueShape s;
    s.dtype = t;
    s.rank = int(d.size());
    s.dims = std::move(d);
    return s;
  }
};

enum class NodeStatus : std::uint8_t { Inferred, FromValueInfo, Unknown };

struct GraphShapes {
  std::vector<ValueShape> values;                 // indexed like Graph::values
  std::vector<NodeStatus> status;                 // indexed like Graph::nodes
  NodeBodies<GraphShapes> subgraphs;               // per node: one per graph attribute, in order
};

struct Diagnostic {
  std::string message;
  Location where;
};

struct SymbolUse {
  std::string name;
  std::int64_t value = 1;
  bool bound = false;  // false: the default was used
};

struct ShapeResult {
  GraphShapes graph;
  std::vector<SymbolUse> symbols;      // symbolic dims of the graph inputs
  std::vector<Diagnostic> warnings;
  std::vector<std::string> unknown_ops;  // op types (domain-qualified) with neither a rule nor value_info
};

// Nodes inferred so far in one infer_shapes call, and how many it may infer in all.
struct InferenceWork {
  std::size_t done = 0, budget = 0;
};

ShapeResult infer_shapes(const Model& model, const DimBindings& bindings);

}  // namespace perfcard
