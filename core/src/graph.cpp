#include "perfcard/graph.h"

#include <algorithm>
#include <ostream>
#include <string>

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
  if (name.empty()) {
    std::string s = std::to_string(index);  // (not "#" + ...: GCC 12 warns -Wrestrict inside libstdc++ on that)
    s.insert(s.begin(), '#');
    return s;
  }
  std::string s;
  s.reserve(name.size() + 2);
  ((s += '\'') += name) += '\'';
  return s;
}

std::string Node::qualified_op() const {
  std::string s;
  if (!domain.empty()) (s += domain) += "::";
  return s += op_type;
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
    throw Error("attribute '" + std::string(a->name) + "' is " + attr_type_name(a->type) + ", expected " + attr_type_name(want),
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

int NameIndex::find(std::string_view name, const std::vector<Value>& values) const {
  if (slots_.empty()) return -1;
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t h = std::hash<std::string_view>{}(name) & mask; slots_[h] >= 0; h = (h + 1) & mask)
    if (values[std::size_t(slots_[h])].name == name) return slots_[h];
  return -1;
}

void NameIndex::place(int value, const std::vector<Value>& values) {
  const std::size_t mask = slots_.size() - 1;
  std::size_t h = std::hash<std::string_view>{}(values[std::size_t(value)].name) & mask;
  while (slots_[h] >= 0) h = (h + 1) & mask;
  slots_[h] = value;
}

void NameIndex::reserve(std::size_t n, const std::vector<Value>& values) {
  std::size_t size = 16;
  while (size < 2 * n) size *= 2;
  if (size <= slots_.size()) return;
  std::vector<int> old(size, -1);
  old.swap(slots_);
  for (int v : old)
    if (v >= 0) place(v, values);
}

void NameIndex::insert(int value, const std::vector<Value>& values) {
  reserve(count_ + 1, values);
  place(value, values);
  ++count_;
}

PoolStr StringPool::store(std::string_view s) {
  if (s.empty()) return {};
  if (s.size() > UINT32_MAX) throw Error("a name of " + std::to_string(s.size()) + " bytes: names are read up to 4 GiB", {}, ErrorCode::Limit);
  constexpr std::size_t kChunk = 64 * 1024;
  const std::uint32_t length = std::uint32_t(s.size());
  const std::size_t need = sizeof length + s.size();
  char* at;
  if (need > kChunk / 4) {  // a long name gets its own block: the chunk's tail is not wasted
    large_.push_back(std::make_unique<char[]>(need));
    at = large_.back().get();
  } else {
    if (chunks_.empty() || need > capacity_ - used_) {
      chunks_.push_back(std::make_unique<char[]>(kChunk));
      used_ = 0;
      capacity_ = kChunk;
    }
    at = chunks_.back().get() + used_;
    used_ += need;
  }
  std::memcpy(at, &length, sizeof length);
  std::copy(s.begin(), s.end(), at + sizeof length);
  return PoolStr(at + sizeof length);
}

PoolStr StringPool::intern(std::string_view s) {
  auto it = interned_.find(s);
  if (it != interned_.end()) return PoolStr(it->data());
  PoolStr kept = store(s);
  interned_.insert(kept.view());
  return kept;
}

std::ostream& operator<<(std::ostream& os, PoolStr s) { return os << s.view(); }

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
