// Graph IR: what the loader builds from an ONNX ModelProto. It keeps names, structure, declared types
// and the shapes and dtypes of weights, never their bytes; only small integer/float constants are kept
// (they feed shape-value propagation). The IR is immutable once loaded: analyses live beside it.
//
// It is compact because a graph may have millions of nodes (peak memory is bounded by the file's size):
// names and op types are one pointer each into the model's StringPool (PoolStr), node edges and value
// consumers point into per-graph pools, and what few values need (an initializer's record, a body's
// capture) is kept beside the values, not in each. A Model is therefore moved, never copied.
#pragma once

#include <cstdint>
#include <cstring>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "perfcard/dtype.h"

namespace perfcard {

// A string the model's StringPool keeps, as one pointer: the pool writes each string's length in the four
// bytes before its characters. A node holds three and a value one, a million times over in a large graph,
// where a string_view's 16 bytes are felt. Reads as a std::string_view.
class PoolStr {
 public:
  constexpr PoolStr() = default;
  std::string_view view() const {
    if (!chars_) return {};
    std::uint32_t n;
    std::memcpy(&n, chars_ - sizeof n, sizeof n);
    return {chars_, n};
  }
  operator std::string_view() const { return view(); }
  bool empty() const { return view().empty(); }
  std::size_t size() const { return view().size(); }
  const char* data() const { return view().data(); }
  friend bool operator==(PoolStr a, std::string_view b) { return a.view() == b; }
  friend bool operator==(PoolStr a, PoolStr b) { return a.view() == b.view(); }

 private:
  friend class StringPool;
  explicit PoolStr(const char* chars) : chars_(chars) {}
  const char* chars_ = nullptr;
};
std::ostream& operator<<(std::ostream& os, PoolStr s);

// A declared dimension: a number, a symbol (dim_param), or unknown.
struct Dim {
  std::int64_t value = -1;  // >= 0 when known
  std::string symbol;       // dim_param, empty when none
  bool known() const { return value >= 0; }
};

struct TypeInfo {
  DType dtype = DType::Undefined;
  bool has_shape = false;  // false: rank unknown
  std::vector<Dim> dims;
  bool is_tensor = true;   // false for sequences/maps/optionals (tracked, not analysed)
};

// Small constant contents, kept for shape-value propagation (shape vectors, axes, scalars).
struct ConstData {
  std::vector<std::int64_t> ints;  // integer and bool tensors
  std::vector<double> floats;      // floating tensors
  bool is_float = false;
  std::size_t size() const { return is_float ? floats.size() : ints.size(); }
};

// Metadata of a stored tensor (initializer or tensor attribute). Payload bytes stay in the file.
struct TensorMeta {
  std::string name;
  DType dtype = DType::Undefined;
  std::vector<std::int64_t> dims;
  std::uint64_t byte_offset = 0;     // where the TensorProto starts in the input
  std::uint64_t stored_bytes = 0;    // payload bytes present in the file (0 for external data)
  bool external = false;             // data_location == EXTERNAL
  std::string external_location;
  std::optional<ConstData> data;     // contents, only for small tensors
  std::uint64_t num_elements() const;
};

enum class ValueKind : std::uint8_t { GraphInput, Initializer, NodeOutput, OuterScope };

struct Value {
  PoolStr name;
  ValueKind kind = ValueKind::NodeOutput;
  int producer = -1;               // node index, for NodeOutput (an OuterScope value's is Graph::outer_value)
  // From a graph input/output/value_info or the initializer; null when the file declares nothing.
  const TypeInfo* declared = nullptr;
  std::span<const int> consumers;  // node indices (a node appears once per use)
};

struct Graph;

// The module scope an exporter names a node by: "/layer1/layer1.0/conv1/Conv" -> "/layer1/layer1.0/conv1";
// "" for a name without one. (torch.onnx names every node so; the runtime's fusion and eager's Python
// frames read it.)
std::string_view module_scope(std::string_view node_name);

enum class AttrType : std::uint8_t {
  Undefined = 0, Float = 1, Int = 2, String = 3, Tensor = 4, Graph = 5, SparseTensor = 11,
  TypeProto = 13, Floats = 6, Ints = 7, Strings = 8, Tensors = 9, Graphs = 10, SparseTensors = 12,
  TypeProtos = 14,
};

struct Attribute {
  PoolStr name;
  AttrType type = AttrType::Undefined;
  float f = 0;
  std::int64_t i = 0;
  std::string s;
  std::vector<float> floats;
  std::vector<std::int64_t> ints;
  std::vector<std::string> strings;
  std::vector<TensorMeta> tensors;  // t (one) or tensors
  std::vector<Graph> graphs;        // g (one) or graphs
};

// The largest file the loader reads: protobuf's own limit is 2 GiB, and nodes keep 32-bit offsets.
inline constexpr std::uint64_t kMaxModelBytes = std::uint64_t{1} << 32;

struct Node {
  PoolStr name;     // may be empty in the file; display_name() never is
  PoolStr op_type;
  PoolStr domain;   // "" for the default ONNX domain
  // Value indices, -1 for an omitted optional one: the inputs, then the outputs, in Graph::node_edges.
  const int* edges = nullptr;
  std::uint32_t num_inputs = 0, num_outputs = 0;
  std::span<const Attribute> attributes;  // a block of Graph::attribute_blocks
  std::uint32_t byte_offset = 0;  // the loader reads files up to 4 GiB (kMaxModelBytes)
  int index = 0;

  std::span<const int> inputs() const { return {edges, num_inputs}; }
  std::span<const int> outputs() const { return {edges + num_inputs, num_outputs}; }
  std::string display_name() const;
  std::string qualified_op() const;  // "Conv", or "com.microsoft::FusedConv" outside the default domain
  const Attribute* attr(std::string_view key) const;
  // Values by type; a present attribute of another type is an Error naming the node (its graph is added by
  // shape inference).
  std::int64_t attr_int(std::string_view key, std::int64_t fallback) const;
  std::string attr_string(std::string_view key, std::string fallback) const;
  std::vector<std::int64_t> attr_ints(std::string_view key) const;  // empty when absent
  const Attribute* typed_attr(std::string_view key, AttrType want) const;  // nullptr when absent
  bool has_attr(std::string_view key) const { return attr(key) != nullptr; }
};

// A graph's values by name: open addressing over value indices, 8 bytes a value (a hash map of strings
// costs ten times that, which a million-node graph feels).
class NameIndex {
 public:
  int find(std::string_view name, const std::vector<Value>& values) const;  // -1 when absent
  void insert(int value, const std::vector<Value>& values);  // values[value].name, not present yet
  void reserve(std::size_t n, const std::vector<Value>& values);

 private:
  void place(int value, const std::vector<Value>& values);
  std::vector<int> slots_;  // value index or -1; size a power of two, at most half full
  std::size_t count_ = 0;
};

struct Graph {
  Graph() = default;
  Graph(Graph&&) noexcept = default;
  Graph& operator=(Graph&&) noexcept = default;
  Graph(const Graph&) = delete;  // nodes and values point into this graph's pools
  Graph& operator=(const Graph&) = delete;

  std::string name;
  std::string path;                  // "" for the main graph, "node/attr" chain for subgraphs
  int depth = 0;
  std::vector<Value> values;
  std::vector<Node> nodes;
  std::vector<TensorMeta> initializers;
  std::vector<int> initializer_values;  // by initializer: its value (of kind Initializer)
  std::vector<int> inputs;           // graph inputs that are not initializers
  std::vector<int> outputs;
  std::vector<int> order;            // topological execution order (node indices)
  NameIndex value_index;
  // What the nodes' and values' spans and pointers view (filled by the loader, never resized after).
  std::vector<int> node_edges;       // each node's inputs, then its outputs
  std::vector<int> value_consumers;  // each value's consumers
  std::vector<TypeInfo> declared_types;
  std::vector<std::unique_ptr<Attribute[]>> attribute_blocks;  // one per node with attributes, its exact size

  // By value, sized only in graphs that capture from their parent (bodies): the parent's value index for an
  // OuterScope value, -1 for the others. Kept beside the values, which are many, while captures are few.
  std::vector<int> outer_of;

  int find(std::string_view value_name) const { return value_index.find(value_name, values); }  // -1 when absent
  int outer_value(std::size_t v) const { return v < outer_of.size() ? outer_of[v] : -1; }
  void set_outer_value(std::size_t v, int parent_value) {
    if (outer_of.size() <= v) outer_of.resize(values.size(), -1);
    outer_of[v] = parent_value;
  }
};

// Owns the characters the IR's names show (PoolStr). Op types, domains and attribute names repeat and are
// kept once; names are stored as they come, in large chunks (no allocation per name).
class StringPool {
 public:
  PoolStr store(std::string_view s);  // an Error past 4 GiB (no ONNX file holds such a name)
  PoolStr intern(std::string_view s);

 private:
  std::vector<std::unique_ptr<char[]>> chunks_, large_;
  std::size_t used_ = 0, capacity_ = 0;
  std::unordered_set<std::string_view> interned_;
};

struct OpsetImport {
  std::string domain;
  std::int64_t version = 0;
};

struct Model {
  Model() = default;
  Model(Model&&) noexcept = default;
  Model& operator=(Model&&) noexcept = default;

  StringPool strings;  // first: the graph's views into it die before it
  std::int64_t ir_version = 0;
  std::vector<OpsetImport> opsets;
  std::unordered_map<std::string, std::int64_t> opset_index;  // domain -> version, filled by the loader
  std::string producer_name, producer_version, domain;
  std::int64_t model_version = 0;
  std::vector<std::pair<std::string, std::string>> metadata;
  std::size_t local_functions = 0;   // FunctionProtos in the model (calls to them are reported as unknown ops)
  std::uint64_t file_bytes = 0;
  Graph graph;

  std::int64_t opset(std::string_view domain) const;  // 0 when not imported
};

}  // namespace perfcard
