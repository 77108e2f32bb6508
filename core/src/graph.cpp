#include "perfcard/graph.h"

#include "perfcard/error.h"

namespace perfcard {

std::uint64_t TensorMeta::num_elements() const {
  std::uint64_t n = 1;
  for (auto d : dims) n *= std::uint64_t(d);
  return n;
}

std::string_view module_scope(std::string_view name) {
  const auto p = name.rfind('/');
  return p == std::string_view::npos || p == 0 ? std::string_view() : name.substr(0, p);
}

std::string Node::display_name() const {
  std::string s(1, name.empty() ? '#' : '\'');
  s += name.empty() ? std::to_string(index) : name + "'";
  return s;
}

const Attribute* Node::attr(std::string_view n) const {
  for (const auto& a : attributes)
    if (a.name == n) return &a;
  return nullptr;
}

namespace {

const char* attr_type_name(AttrType t) {
  switch (t) {
    case AttrType::Float: return "FLOAT";
    case AttrType::Int: return "INT";
    case AttrType::String: return "STRING";
    case AttrType::Tensor: return "TENSOR";
    case AttrType::Graph: return "GRAPH";
    case AttrType::Floats: return "FLOATS";
    case AttrType::Ints: return "INTS";
    case AttrType::Strings: return "STRINGS";
    case AttrType::Tensors: return "TENSORS";
    case AttrType::Graphs: return "GRAPHS";
    case AttrType::SparseTensor: return "SPARSE_TENSOR";
    case AttrType::SparseTensors: return "SPARSE_TENSORS";
    case AttrType::TypeProto: return "TYPE_PROTO";
    case AttrType::TypeProtos: return "TYPE_PROTOS";
    default: return "UNDEFINED";
  }
}

}  // namespace

// A value read as the wrong type (strides given as a FLOAT, perm as a STRING) would be a silent default:
// refused instead. Files before IR 3 may leave the type out; their attributes are read as asked.
const Attribute* Node::typed_attr(std::string_view n, AttrType want) const {
  const Attribute* a = attr(n);
  if (a && a->type != want && a->type != AttrType::Undefined)
    throw Error("attribute '" + a->name + "' is " + attr_type_name(a->type) + ", expected " + attr_type_name(want),
                Location{byte_offset, display_name(), op_type, {}});
  return a;
}

std::int64_t Node::attr_int(std::string_view n, std::int64_t fallback) const {
  const Attribute* a = typed_attr(n, AttrType::Int);
  return a ? a->i : fallback;
}

std::string Node::attr_string(std::string_view n, std::string fallback) const {
  const Attribute* a = typed_attr(n, AttrType::String);
  return a ? a->s : std::move(fallback);
}

std::vector<std::int64_t> Node::attr_ints(std::string_view n) const {
  const Attribute* a = typed_attr(n, AttrType::Ints);
  return a ? a->ints : std::vector<std::int64_t>{};
}

int Graph::find(const std::string& n) const {
  auto it = value_index.find(n);
  return it == value_index.end() ? -1 : it->second;
}

std::int64_t Model::opset(std::string_view d) const {
  if (!opset_index.empty()) {
    auto it = opset_index.find(std::string(d));
    return it == opset_index.end() ? 0 : it->second;
  }
  for (const auto& o : opsets)  // a Model built by hand, not by the loader
    if (o.domain == d) return o.version;
  return 0;
}

}  // namespace perfcard
