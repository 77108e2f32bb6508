// A structure-aware mutator for the loader fuzzer. Byte mutations mostly break the protobuf framing in the
// first few bytes, so half of the time the input is parsed as a ModelProto (with the generated classes)
// and one semantic field is changed instead: a dim, an attribute value, an op type, an input name, a
// node removed or duplicated, an opset. The model then reaches shape inference with shapes and
// attributes that are well-formed protobuf but absurd, which is where the rules' arithmetic lives.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "onnx/onnx.pb.h"
#include "perfcard/op_registry.h"

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

namespace {

using Rng = std::mt19937_64;

std::int64_t interesting(Rng& rng) {
  static const std::int64_t values[] = {0, 1, -1, 2, 3, 4, 7, 8, -2, 64, 65, 255, 4096, 4097,
                                        std::int64_t{1} << 31, std::int64_t{1} << 40, (std::int64_t{1} << 40) + 1,
                                        std::int64_t{1} << 50, std::int64_t{1} << 62,
                                        std::numeric_limits<std::int64_t>::max(),
                                        std::numeric_limits<std::int64_t>::min()};
  if (rng() % 4 == 0) return std::int64_t(rng() % 17) - 8;
  return values[rng() % (sizeof(values) / sizeof(values[0]))];
}

std::size_t pick(Rng& rng, std::size_t n) { return n == 0 ? 0 : std::size_t(rng() % n); }

void collect_graphs(onnx::GraphProto* g, std::vector<onnx::GraphProto*>& out) {
  out.push_back(g);
  for (auto& n : *g->mutable_node())
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) collect_graphs(a.mutable_g(), out);
      for (auto& sub : *a.mutable_graphs()) collect_graphs(&sub, out);
    }
}

// Every value name of a graph, to rewire inputs with.
std::vector<std::string> names_of(const onnx::GraphProto& g) {
  std::vector<std::string> names;
  for (const auto& v : g.input()) names.push_back(v.name());
  for (const auto& t : g.initializer()) names.push_back(t.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) names.push_back(o);
  return names;
}

void mutate_shape(onnx::TensorShapeProto* shape, Rng& rng) {
  switch (rng() % 4) {
    case 0: shape->add_dim()->set_dim_value(interesting(rng)); break;
    case 1:
      if (shape->dim_size() > 0) shape->mutable_dim()->RemoveLast();
      break;
    default:
      if (shape->dim_size() > 0) {
        auto* d = shape->mutable_dim(int(pick(rng, std::size_t(shape->dim_size()))));
        if (rng() % 4 == 0) d->set_dim_param(rng() % 2 ? "batch" : "seq");
        else d->set_dim_value(interesting(rng));
      }
  }
}

void mutate_tensor(onnx::TensorProto* t, Rng& rng) {
  switch (rng() % 4) {
    case 0:
      if (t->dims_size() > 0) t->set_dims(int(pick(rng, std::size_t(t->dims_size()))), interesting(rng));
      else t->add_dims(interesting(rng));
      break;
    case 1:
      if (t->int64_data_size() > 0) t->set_int64_data(int(pick(rng, std::size_t(t->int64_data_size()))), interesting(rng));
      else t->add_int64_data(interesting(rng));
      break;
    case 2:
      if (!t->raw_data().empty()) {
        std::string raw = t->raw_data();
        std::int64_t v = interesting(rng);
        std::size_t at = pick(rng, raw.size() / 8) * 8;
        if (raw.size() >= at + 8) std::memcpy(&raw[at], &v, 8);
        t->set_raw_data(raw);
      }
      break;
    default: t->set_data_type(std::int32_t(rng() % 24)); break;
  }
}

void mutate_attribute(onnx::AttributeProto* a, Rng& rng) {
  switch (rng() % 5) {
    case 0: a->set_i(interesting(rng)); break;
    case 1:
      if (a->ints_size() > 0) a->set_ints(int(pick(rng, std::size_t(a->ints_size()))), interesting(rng));
      else a->add_ints(interesting(rng));
      break;
    case 2: a->add_ints(interesting(rng)); break;
    case 3:
      if (a->has_t()) mutate_tensor(a->mutable_t(), rng);
      else a->set_f(float(interesting(rng)));
      break;
    default: {
      static const char* names[] = {"axis", "axes", "perm", "pads", "strides", "kernel_shape", "group", "keepdims",
                                    "to", "k", "split", "num_outputs", "blocksize", "dilations", "output_padding",
                                    "output_shape", "batch_dims", "start", "end", "allowzero", "num_scan_inputs"};
      a->set_name(names[pick(rng, sizeof(names) / sizeof(names[0]))]);
    }
  }
}

bool mutate_model(onnx::ModelProto& m, Rng& rng) {
  if (!m.has_graph()) return false;
  std::vector<onnx::GraphProto*> graphs;
  collect_graphs(m.mutable_graph(), graphs);
  onnx::GraphProto* g = graphs[pick(rng, graphs.size())];
  switch (rng() % 10) {
    case 0: case 1: case 2: {  // an attribute
      if (g->node_size() == 0) return false;
      auto* n = g->mutable_node(int(pick(rng, std::size_t(g->node_size()))));
      if (n->attribute_size() == 0 || rng() % 4 == 0) {
        auto* a = n->add_attribute();
        a->set_name("axis");
        a->set_type(onnx::AttributeProto::INT);
        mutate_attribute(a, rng);
      } else {
        mutate_attribute(n->mutable_attribute(int(pick(rng, std::size_t(n->attribute_size())))), rng);
      }
      return true;
    }
    case 3: {  // an initializer
      if (g->initializer_size() == 0) return false;
      mutate_tensor(g->mutable_initializer(int(pick(rng, std::size_t(g->initializer_size())))), rng);
      return true;
    }
    case 4: {  // a declared shape
      auto* vi = rng() % 2 && g->input_size() > 0 ? g->mutable_input(int(pick(rng, std::size_t(g->input_size()))))
                 : g->value_info_size() > 0 ? g->mutable_value_info(int(pick(rng, std::size_t(g->value_info_size()))))
                 : g->output_size() > 0     ? g->mutable_output(int(pick(rng, std::size_t(g->output_size()))))
                                            : nullptr;
      if (!vi) return false;
      mutate_shape(vi->mutable_type()->mutable_tensor_type()->mutable_shape(), rng);
      return true;
    }
    case 5: {  // an op type
      if (g->node_size() == 0) return false;
      auto ops = perfcard::all_ops();
      const auto& op = ops[pick(rng, ops.size())];
      auto* n = g->mutable_node(int(pick(rng, std::size_t(g->node_size()))));
      n->set_op_type(std::string(op.op_type));
      n->set_domain(std::string(op.domain));
      return true;
    }
    case 6: {  // rewire an input, or add one
      if (g->node_size() == 0) return false;
      auto names = names_of(*g);
      if (names.empty()) return false;
      auto* n = g->mutable_node(int(pick(rng, std::size_t(g->node_size()))));
      const std::string& name = names[pick(rng, names.size())];
      if (n->input_size() == 0 || rng() % 3 == 0) n->add_input(name);
      else n->set_input(int(pick(rng, std::size_t(n->input_size()))), rng() % 8 ? name : std::string());
      return true;
    }
    case 7: {  // remove, or duplicate, a node
      if (g->node_size() == 0) return false;
      int i = int(pick(rng, std::size_t(g->node_size())));
      if (rng() % 2) {
        g->mutable_node()->DeleteSubrange(i, 1);
      } else {
        auto copy = g->node(i);
        for (auto& o : *copy.mutable_output()) o += "_dup";
        *g->add_node() = copy;
      }
      return true;
    }
    case 8: {  // an opset
      if (m.opset_import_size() == 0) m.add_opset_import()->set_version(13);
      m.mutable_opset_import(0)->set_version(std::int64_t(rng() % 24));
      return true;
    }
    default: {  // an extra output, or one dropped
      if (g->node_size() == 0) return false;
      auto* n = g->mutable_node(int(pick(rng, std::size_t(g->node_size()))));
      if (rng() % 2 || n->output_size() == 0) n->add_output(n->name() + "_extra" + std::to_string(rng() % 4));
      else n->mutable_output()->RemoveLast();
      return true;
    }
  }
}

}  // namespace

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                               unsigned int seed) {
  Rng rng(seed);
  if (rng() % 2 == 0) return LLVMFuzzerMutate(data, size, max_size);
  onnx::ModelProto m;
  if (!m.ParseFromArray(data, int(size))) return LLVMFuzzerMutate(data, size, max_size);
  int rounds = 1 + int(rng() % 3);
  bool changed = false;
  for (int i = 0; i < rounds; ++i) changed |= mutate_model(m, rng);
  std::string out;
  if (!changed || !m.SerializeToString(&out) || out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}
