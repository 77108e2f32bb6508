#include "perfcard/graph.h"

namespace perfcard {

std::uint64_t TensorMeta::num_elements() const {
  std::uint64_t n = 1;
  for (auto d : dims) n *= std::uint64_t(d);
  return n;
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

std::int64_t Node::attr_int(std::string_view n, std::int64_t fallback) const {
  const Attribute* a = attr(n);
  return a ? a->i : fallback;
}

float Node::attr_float(std::string_view n, float fallback) const {
  const Attribute* a = attr(n);
  return a ? a->f : fallback;
}

std::string Node::attr_string(std::string_view n, std::string fallback) const {
  const Attribute* a = attr(n);
  return a ? a->s : std::move(fallback);
}

std::vector<std::int64_t> Node::attr_ints(std::string_view n) const {
  const Attribute* a = attr(n);
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
