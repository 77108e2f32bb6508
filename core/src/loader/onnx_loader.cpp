// ONNX ModelProto -> graph IR.
//
// The container messages on the path to weight payloads (Model, Graph, Node, Attribute, Tensor) are
// walked with the bounds-checked wire reader, so payloads are skipped in place; the leaf messages
// (ValueInfoProto with its TypeProto, opset and metadata entries) are parsed by the protoc-generated
// lite classes. Names are interned as they are seen and linked once the whole model is read, because
// protobuf allows fields in any order and subgraphs may use names of the scopes around them.
#include "perfcard/onnx_loader.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <queue>

#include "loader/wire_reader.h"
#include "onnx/onnx.pb.h"
#include "perfcard/error.h"

namespace perfcard {
namespace {

using wire::Field;
using wire::Reader;
using wire::WireType;

float bits_to_float(std::uint32_t b) { float f; std::memcpy(&f, &b, 4); return f; }
double bits_to_double(std::uint64_t b) { double d; std::memcpy(&d, &b, 8); return d; }

double half_to_double(std::uint16_t h) {
  int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exp == 0) return sign * std::ldexp(mant, -24);
  if (exp == 31) return mant ? std::nan("") : sign * INFINITY;
  return sign * std::ldexp(mant + 1024, exp - 25);
}

class Loader {
 public:
  Loader(std::span<const std::uint8_t> bytes, const LoadLimits& limits) : bytes_(bytes), limits_(limits) {}

  Model load() {
    if (bytes_.empty()) throw Error("empty input: an ONNX model is a non-empty protobuf ModelProto");
    reject_other_formats();
    Model m;
    m.file_bytes = bytes_.size();
    bool have_graph = false;
    Reader r(bytes_, 0, "ModelProto");
    while (!r.done()) {
      Field f = r.next();
      switch (f.number) {
        case 1: expect(r, f, WireType::Varint, "ir_version"); m.ir_version = std::int64_t(f.varint); break;
        case 2: expect(r, f, WireType::Len, "producer_name"); m.producer_name = std::string(f.str()); break;
        case 3: expect(r, f, WireType::Len, "producer_version"); m.producer_version = std::string(f.str()); break;
        case 4: expect(r, f, WireType::Len, "domain"); m.domain = std::string(f.str()); break;
        case 5: expect(r, f, WireType::Varint, "model_version"); m.model_version = std::int64_t(f.varint); break;
        case 7:
          expect(r, f, WireType::Len, "graph");
          if (have_graph) r.fail("more than one graph in ModelProto", f.offset);
          m.graph = parse_graph(f, 0, "");
          have_graph = true;
          break;
        case 8: {
          expect(r, f, WireType::Len, "opset_import");
          onnx::OperatorSetIdProto p;
          if (!p.ParseFromArray(f.bytes.data(), int(f.bytes.size())))
            r.fail("malformed opset_import entry", f.offset);
          m.opsets.push_back({p.domain() == "ai.onnx" ? "" : p.domain(), p.version()});
          break;
        }
        case 14: {
          expect(r, f, WireType::Len, "metadata_props");
          onnx::StringStringEntryProto p;
          if (!p.ParseFromArray(f.bytes.data(), int(f.bytes.size())))
            r.fail("malformed metadata_props entry", f.offset);
          m.metadata.emplace_back(p.key(), p.value());
          break;
        }
        case 25: expect(r, f, WireType::Len, "functions"); ++m.local_functions; break;
        default: break;  // doc_string, training_info and fields from newer schemas carry nothing we use
      }
    }
    if (!have_graph) {
      throw Error("not an ONNX model: the ModelProto has no graph (field 7)" +
                  std::string(m.ir_version == 0 ? " and no ir_version" : ""));
    }
    if (m.ir_version <= 0) throw Error("ModelProto has no ir_version; not an ONNX model?");
    check_opsets(m);
    std::vector<Graph*> scopes;
    link(m.graph, scopes);
    return m;
  }

 private:
  std::span<const std::uint8_t> bytes_;
  const LoadLimits& limits_;

  // Cheap recognisers for the files people drop by mistake, so the message names what they are.
  void reject_other_formats() const {
    auto starts = [&](std::string_view magic) {
      return bytes_.size() >= magic.size() && std::memcmp(bytes_.data(), magic.data(), magic.size()) == 0;
    };
    const char* what = nullptr;
    if (starts("\x89PNG")) what = "a PNG image";
    else if (starts("PK\x03\x04")) what = "a zip archive (PyTorch .pt or .npz?)";
    else if (starts("\x1f\x8b")) what = "gzip-compressed data";
    else if (starts("GGUF")) what = "a GGUF file";
    else if (starts("\xff\xd8\xff")) what = "a JPEG image";
    else if (starts("%PDF")) what = "a PDF document";
    else if (starts("\x80\x02") || starts("\x80\x04")) what = "a Python pickle";
    else if (starts("PCWT")) what = "a PerfCard weights file";
    else if (bytes_.size() >= 8 && bytes_[0] == '{' ) what = "JSON text";
    if (what) throw Error(std::string("not an ONNX model: the input is ") + what, Location{0, {}, {}, {}});
  }

  void check_opsets(const Model& m) const {
    for (const auto& o : m.opsets) {
      if (o.domain.empty() && o.version > limits_.max_supported_opset) {
        throw Error("model imports opset " + std::to_string(o.version) +
                    " of the default ONNX domain; this build knows opsets up to " +
                    std::to_string(limits_.max_supported_opset));
      }
      if (o.version < 0) throw Error("opset_import for domain '" + o.domain + "' has negative version");
    }
  }

  static void expect(const Reader& r, const Field& f, WireType t, const char* name) {
    if (f.type != t) {
      r.fail(std::string("field '") + name + "' (" + std::to_string(f.number) + ") has wire type " +
                 std::to_string(int(f.type)) + ", expected " + std::to_string(int(t)),
             f.offset);
    }
  }

  // Interns a value name in a graph under construction.
  static int intern(Graph& g, std::string_view name) {
    auto it = g.value_index.find(std::string(name));
    if (it != g.value_index.end()) return it->second;
    int idx = int(g.values.size());
    Value v;
    v.name = std::string(name);
    g.values.push_back(std::move(v));
    g.value_index.emplace(g.values.back().name, idx);
    return idx;
  }

  TypeInfo parse_type(const onnx::TypeProto& t, const Reader& r, std::uint64_t at) const {
    TypeInfo ti;
    if (!t.has_tensor_type()) {
      ti.is_tensor = false;
      return ti;
    }
    const auto& tt = t.tensor_type();
    if (!dtype_is_known(tt.elem_type())) r.fail("unknown tensor element type " + std::to_string(tt.elem_type()), at);
    ti.dtype = DType(tt.elem_type());
    if (tt.has_shape()) {
      ti.has_shape = true;
      if (tt.shape().dim_size() > limits_.max_rank)
        r.fail("tensor type has rank " + std::to_string(tt.shape().dim_size()) + ", above the limit of " +
                   std::to_string(limits_.max_rank),
               at);
      for (const auto& d : tt.shape().dim()) {
        Dim dim;
        if (d.has_dim_value()) {
          if (d.dim_value() < 0 || d.dim_value() > limits_.max_dim)
            r.fail("dimension " + std::to_string(d.dim_value()) + " is negative or absurdly large", at);
          dim.value = d.dim_value();
        } else if (d.has_dim_param()) {
          dim.symbol = d.dim_param();
        }
        ti.dims.push_back(std::move(dim));
      }
    }
    return ti;
  }

  std::pair<std::string, TypeInfo> parse_value_info(const Field& f, const Reader& r) const {
    onnx::ValueInfoProto p;
    if (!p.ParseFromArray(f.bytes.data(), int(f.bytes.size()))) r.fail("malformed ValueInfoProto", f.offset);
    if (p.name().empty()) r.fail("ValueInfoProto without a name", f.offset);
    return {p.name(), p.has_type() ? parse_type(p.type(), r, f.offset) : TypeInfo{}};
  }

  TensorMeta parse_tensor(const Field& tf, const std::string& what) const {
    Reader r(tf.bytes, tf.payload_offset, what);
    TensorMeta t;
    t.byte_offset = tf.offset;
    std::int64_t data_type = 0;
    std::span<const std::uint8_t> raw;
    bool has_raw = false;
    std::vector<Field> typed;  // float_data, int32_data, int64_data, double_data, uint64_data, string_data
    while (!r.done()) {
      Field f = r.next();
      switch (f.number) {
        case 1:
          r.read_repeated(f, t.dims, [](std::uint64_t v) { return std::int64_t(v); });
          if (t.dims.size() > std::size_t(limits_.max_rank))
            r.fail("tensor has more than " + std::to_string(limits_.max_rank) + " dims", f.offset);
          break;
        case 2: expect(r, f, WireType::Varint, "data_type"); data_type = std::int64_t(std::int32_t(f.varint)); break;
        case 8: expect(r, f, WireType::Len, "name"); t.name = std::string(f.str()); break;
        case 9: expect(r, f, WireType::Len, "raw_data"); raw = f.bytes; has_raw = true; break;
        case 13: {
          expect(r, f, WireType::Len, "external_data");
          onnx::StringStringEntryProto p;
          if (!p.ParseFromArray(f.bytes.data(), int(f.bytes.size()))) r.fail("malformed external_data entry", f.offset);
          if (p.key() == "location") t.external_location = p.value();
          break;
        }
        case 14: expect(r, f, WireType::Varint, "data_location"); t.external = f.varint == 1; break;
        case 4: case 5: case 6: case 7: case 10: case 11: typed.push_back(f); break;
        default: break;  // segment, doc_string, metadata
      }
    }
    std::string label = t.name.empty() ? what : what + " '" + t.name + "'";
    Reader lr(tf.bytes, tf.payload_offset, label);
    if (!dtype_is_known(data_type)) lr.fail("unknown data_type " + std::to_string(data_type), tf.offset);
    t.dtype = DType(data_type);
    std::uint64_t n = 1;
    for (auto d : t.dims) {
      if (d < 0 || d > limits_.max_dim) lr.fail("dimension " + std::to_string(d) + " is negative or absurdly large", tf.offset);
      if (d != 0 && n > (std::uint64_t{1} << 62) / std::uint64_t(d))
        lr.fail("element count overflows (dims too large)", tf.offset);
      n *= std::uint64_t(d);
    }
    const int bits = dtype_bits(t.dtype);
    if (has_raw) {
      t.stored_bytes = raw.size();
      if (t.dtype != DType::String && !t.external) {
        std::uint64_t expect_bytes = (n * std::uint64_t(bits) + 7) / 8;
        if (raw.size() != expect_bytes) {
          lr.fail("raw_data holds " + std::to_string(raw.size()) + " bytes but dims and " +
                      std::string(dtype_name(t.dtype)) + " need " + std::to_string(expect_bytes),
                  tf.offset);
        }
      }
    }
    for (const auto& f : typed) t.stored_bytes += f.bytes.size() + (f.type == WireType::Len ? 0 : 8);
    if (n <= limits_.max_const_elements && t.dtype != DType::String && !t.external) {
      t.data = decode_small(t.dtype, n, has_raw ? &raw : nullptr, typed, lr, tf.offset);
    }
    return t;
  }

  std::optional<ConstData> decode_small(DType dt, std::uint64_t n, const std::span<const std::uint8_t>* raw,
                                        const std::vector<Field>& typed, const Reader& r, std::uint64_t at) const {
    ConstData c;
    c.is_float = dtype_is_float(dt);
    if (raw) {
      const std::uint8_t* p = raw->data();
      auto le = [&](std::size_t i, int nbytes) {
        std::uint64_t v = 0;
        for (int b = 0; b < nbytes; ++b) v |= std::uint64_t(p[i * nbytes + b]) << (8 * b);
        return v;
      };
      for (std::uint64_t i = 0; i < n; ++i) {
        switch (dt) {
          case DType::Float: c.floats.push_back(bits_to_float(std::uint32_t(le(i, 4)))); break;
          case DType::Double: c.floats.push_back(bits_to_double(le(i, 8))); break;
          case DType::Float16: c.floats.push_back(half_to_double(std::uint16_t(le(i, 2)))); break;
          case DType::BFloat16: c.floats.push_back(bits_to_float(std::uint32_t(le(i, 2)) << 16)); break;
          case DType::Int64: case DType::UInt64: c.ints.push_back(std::int64_t(le(i, 8))); break;
          case DType::Int32: c.ints.push_back(std::int32_t(le(i, 4))); break;
          case DType::UInt32: c.ints.push_back(std::int64_t(le(i, 4))); break;
          case DType::Int16: c.ints.push_back(std::int16_t(le(i, 2))); break;
          case DType::UInt16: c.ints.push_back(std::int64_t(le(i, 2))); break;
          case DType::Int8: c.ints.push_back(std::int8_t(le(i, 1))); break;
          case DType::UInt8: case DType::Bool: c.ints.push_back(std::int64_t(le(i, 1))); break;
          default: return std::nullopt;  // 4/8-bit floats, complex: not needed for shapes
        }
      }
      return c;
    }
    for (const auto& f : typed) {
      switch (f.number) {
        case 4:  // float_data, fixed32 (packed or not)
          read_fixed(f, 4, r, [&](std::uint64_t v) {
            if (dt == DType::Float16) c.floats.push_back(half_to_double(std::uint16_t(v)));
            else if (dt == DType::BFloat16) c.floats.push_back(bits_to_float(std::uint32_t(v) << 16));
            else c.floats.push_back(bits_to_float(std::uint32_t(v)));
          });
          break;
        case 10:
          read_fixed(f, 8, r, [&](std::uint64_t v) { c.floats.push_back(bits_to_double(v)); });
          break;
        case 5:  // int32_data also carries int8/int16/uint8/uint16/bool/float16 bits
          r.read_repeated(f, c.ints, [](std::uint64_t v) { return std::int64_t(std::int32_t(v)); });
          if (dt == DType::Float16 || dt == DType::BFloat16) {
            for (auto v : c.ints)
              c.floats.push_back(dt == DType::Float16 ? half_to_double(std::uint16_t(v))
                                                      : bits_to_float(std::uint32_t(v) << 16));
            c.ints.clear();
          }
          break;
        case 7: case 11:
          r.read_repeated(f, c.ints, [](std::uint64_t v) { return std::int64_t(v); });
          break;
        default: break;
      }
    }
    if (c.size() != n) {
      if (c.size() == 0 && n > 0) return std::nullopt;  // no contents in the file: value unknown
      r.fail("holds " + std::to_string(c.size()) + " elements but its dims need " + std::to_string(n), at);
    }
    return c;
  }

  template <class F>
  static void read_fixed(const Field& f, int width, const Reader& r, F sink) {
    if (f.type == WireType::Len) {
      if (f.bytes.size() % width) r.fail("packed fixed-width field has a partial element", f.offset);
      for (std::size_t i = 0; i < f.bytes.size(); i += width) {
        std::uint64_t v = 0;
        for (int b = 0; b < width; ++b) v |= std::uint64_t(f.bytes[i + b]) << (8 * b);
        sink(v);
      }
    } else if ((width == 4 && f.type == WireType::Fixed32) || (width == 8 && f.type == WireType::Fixed64)) {
      sink(f.varint);
    } else {
      r.fail("field " + std::to_string(f.number) + " has the wrong wire type", f.offset);
    }
  }

  Attribute parse_attribute(const Field& af, int depth, const std::string& path, const Node& node) {
    Reader r(af.bytes, af.payload_offset, "attribute of node " + node.display_name());
    Attribute a;
    bool has_type = false;
    std::vector<Field> graphs;
    while (!r.done()) {
      Field f = r.next();
      switch (f.number) {
        case 1: expect(r, f, WireType::Len, "name"); a.name = std::string(f.str()); break;
        case 20: expect(r, f, WireType::Varint, "type"); a.type = AttrType(f.varint); has_type = true; break;
        case 2: expect(r, f, WireType::Fixed32, "f"); a.f = bits_to_float(std::uint32_t(f.varint)); break;
        case 3: expect(r, f, WireType::Varint, "i"); a.i = std::int64_t(f.varint); break;
        case 4: expect(r, f, WireType::Len, "s"); a.s = std::string(f.str()); break;
        case 5: case 10:
          expect(r, f, WireType::Len, "t");
          a.tensors.push_back(parse_tensor(f, "tensor attribute of node " + node.display_name()));
          break;
        case 6: case 11: expect(r, f, WireType::Len, "g"); graphs.push_back(f); break;
        case 7: read_fixed(f, 4, r, [&](std::uint64_t v) { a.floats.push_back(bits_to_float(std::uint32_t(v))); }); break;
        case 8: r.read_repeated(f, a.ints, [](std::uint64_t v) { return std::int64_t(v); }); break;
        case 9: expect(r, f, WireType::Len, "strings"); a.strings.emplace_back(f.str()); break;
        default: break;  // doc_string, ref_attr_name, sparse tensors, type protos
      }
    }
    if (a.name.empty()) r.fail("attribute without a name", af.offset);
    if (!has_type) {  // IR < 3 files omit the type: infer it from what is set
      if (!graphs.empty()) a.type = AttrType::Graph;
      else if (!a.tensors.empty()) a.type = AttrType::Tensor;
      else if (!a.ints.empty()) a.type = AttrType::Ints;
      else if (!a.floats.empty()) a.type = AttrType::Floats;
      else if (!a.strings.empty()) a.type = AttrType::Strings;
      else if (!a.s.empty()) a.type = AttrType::String;
    }
    for (const auto& gf : graphs) {
      if (depth + 1 > limits_.max_subgraph_depth) {
        throw Error("subgraphs nested deeper than " + std::to_string(limits_.max_subgraph_depth) + " levels",
                    Location{gf.offset, node.display_name(), node.op_type, path});
      }
      std::string sub = (path.empty() ? "" : path + "/") + node.display_name() + "." + a.name;
      a.graphs.push_back(parse_graph(gf, depth + 1, sub));
    }
    return a;
  }

  void parse_node(const Field& nf, Graph& g, int depth) {
    Reader r(nf.bytes, nf.payload_offset, "NodeProto");
    Node n;
    n.index = int(g.nodes.size());
    n.byte_offset = nf.offset;
    std::vector<Field> attrs;
    std::vector<std::string_view> ins, outs;
    while (!r.done()) {
      Field f = r.next();
      switch (f.number) {
        case 1: expect(r, f, WireType::Len, "input"); ins.push_back(f.str()); break;
        case 2: expect(r, f, WireType::Len, "output"); outs.push_back(f.str()); break;
        case 3: expect(r, f, WireType::Len, "name"); n.name = std::string(f.str()); break;
        case 4: expect(r, f, WireType::Len, "op_type"); n.op_type = std::string(f.str()); break;
        case 7: expect(r, f, WireType::Len, "domain"); n.domain = std::string(f.str()); break;
        case 5: expect(r, f, WireType::Len, "attribute"); attrs.push_back(f); break;
        default: break;
      }
    }
    if (n.domain == "ai.onnx") n.domain.clear();
    if (n.op_type.empty()) {
      throw Error("node without op_type", Location{nf.offset, n.display_name(), {}, g.path});
    }
    for (const auto& af : attrs) n.attributes.push_back(parse_attribute(af, depth, g.path, n));
    for (auto s : ins) n.inputs.push_back(s.empty() ? -1 : intern(g, s));
    for (auto s : outs) {
      if (s.empty()) { n.outputs.push_back(-1); continue; }
      int v = intern(g, s);
      Value& val = g.values[std::size_t(v)];
      if (val.producer >= 0) {
        throw Error("value '" + std::string(s) + "' is produced twice, also by node " +
                        g.nodes[std::size_t(val.producer)].display_name(),
                    Location{nf.offset, n.display_name(), n.op_type, g.path});
      }
      val.producer = n.index;
      n.outputs.push_back(v);
    }
    g.nodes.push_back(std::move(n));
  }

  Graph parse_graph(const Field& gf, int depth, const std::string& path) {
    Graph g;
    g.depth = depth;
    g.path = path;
    Reader r(gf.bytes, gf.payload_offset, path.empty() ? "GraphProto" : "subgraph " + path);
    std::vector<Field> inputs, outputs, infos;
    std::vector<TensorMeta> inits;
    while (!r.done()) {
      Field f = r.next();
      switch (f.number) {
        case 1: expect(r, f, WireType::Len, "node"); parse_node(f, g, depth); break;
        case 2: expect(r, f, WireType::Len, "name"); g.name = std::string(f.str()); break;
        case 5: expect(r, f, WireType::Len, "initializer"); inits.push_back(parse_tensor(f, "initializer")); break;
        case 15: {  // sparse_initializer: values (1) and indices (2) are tensors, dims (3) the dense shape
          expect(r, f, WireType::Len, "sparse_initializer");
          Reader sr(f.bytes, f.payload_offset, "sparse_initializer");
          TensorMeta dense;
          while (!sr.done()) {
            Field sf = sr.next();
            if (sf.number == 1 && sf.type == WireType::Len) {
              TensorMeta v = parse_tensor(sf, "sparse_initializer values");
              dense.name = v.name; dense.dtype = v.dtype; dense.stored_bytes += v.stored_bytes;
            } else if (sf.number == 2 && sf.type == WireType::Len) {
              dense.stored_bytes += parse_tensor(sf, "sparse_initializer indices").stored_bytes;
            } else if (sf.number == 3) {
              sr.read_repeated(sf, dense.dims, [](std::uint64_t v) { return std::int64_t(v); });
            }
          }
          dense.byte_offset = f.offset;
          inits.push_back(std::move(dense));
          break;
        }
        case 11: expect(r, f, WireType::Len, "input"); inputs.push_back(f); break;
        case 12: expect(r, f, WireType::Len, "output"); outputs.push_back(f); break;
        case 13: expect(r, f, WireType::Len, "value_info"); infos.push_back(f); break;
        default: break;
      }
    }
    for (auto& t : inits) {
      if (t.name.empty()) throw Error("initializer without a name", Location{t.byte_offset, {}, {}, path});
      int v = intern(g, t.name);
      Value& val = g.values[std::size_t(v)];
      if (val.producer >= 0)
        throw Error("initializer '" + t.name + "' is also produced by node " +
                        g.nodes[std::size_t(val.producer)].display_name(),
                    Location{t.byte_offset, {}, {}, path});
      if (val.kind == ValueKind::Initializer)
        throw Error("initializer '" + t.name + "' is defined twice", Location{t.byte_offset, {}, {}, path});
      val.kind = ValueKind::Initializer;
      val.initializer = int(g.initializers.size());
      val.declared.dtype = t.dtype;
      val.declared.has_shape = true;
      for (auto d : t.dims) val.declared.dims.push_back(Dim{d, {}});
      val.has_declared = true;
      g.initializers.push_back(std::move(t));
    }
    for (const auto& f : inputs) {
      auto [name, type] = parse_value_info(f, r);
      int v = intern(g, name);
      Value& val = g.values[std::size_t(v)];
      if (val.producer >= 0)
        throw Error("graph input '" + name + "' is also produced by node " +
                        g.nodes[std::size_t(val.producer)].display_name(),
                    Location{f.offset, {}, {}, path});
      if (val.kind == ValueKind::Initializer) continue;  // IR < 4 lists weights as inputs too
      val.kind = ValueKind::GraphInput;
      val.declared = std::move(type);
      val.has_declared = true;
      g.inputs.push_back(v);
    }
    for (const auto& f : outputs) {
      auto [name, type] = parse_value_info(f, r);
      int v = intern(g, name);
      Value& val = g.values[std::size_t(v)];
      if (!val.has_declared) { val.declared = std::move(type); val.has_declared = true; }
      g.outputs.push_back(v);
    }
    for (const auto& f : infos) {
      auto [name, type] = parse_value_info(f, r);
      auto it = g.value_index.find(name);
      if (it == g.value_index.end()) continue;  // describes nothing in this graph
      Value& val = g.values[std::size_t(it->second)];
      if (!val.has_declared) { val.declared = std::move(type); val.has_declared = true; }
    }
    return g;
  }

  // Resolves names that no node, input or initializer of a graph defines: in a subgraph they come from
  // the scopes around it; in the main graph they are an error. Then orders the nodes.
  void link(Graph& g, std::vector<Graph*>& scopes) {
    for (std::size_t v = 0; v < g.values.size(); ++v) {
      Value& val = g.values[v];
      if (val.kind != ValueKind::NodeOutput || val.producer >= 0) continue;
      int outer = scopes.empty() ? -1 : resolve_outer(scopes, scopes.size() - 1, val.name);
      if (outer < 0) {
        const Node* user = first_consumer(g, int(v));
        if (user) {
          throw Error("input '" + val.name + "' has no producer: it is no graph input, initializer or node output",
                      Location{user->byte_offset, user->display_name(), user->op_type, g.path});
        }
        throw Error("graph output '" + val.name + "' has no producer", Location{{}, {}, {}, g.path});
      }
      val.kind = ValueKind::OuterScope;
      val.outer = outer;
    }
    for (auto& n : g.nodes) {
      for (int v : n.inputs)
        if (v >= 0) g.values[std::size_t(v)].consumers.push_back(n.index);
    }
    order(g);
    scopes.push_back(&g);
    for (auto& n : g.nodes)
      for (auto& a : n.attributes)
        for (auto& sub : a.graphs) link(sub, scopes);
    scopes.pop_back();
  }

  // A name missing from the enclosing scope may come from further out; the enclosing scope then gets an
  // OuterScope value of its own, so that every capture is visible exactly one level up.
  static int resolve_outer(std::vector<Graph*>& scopes, std::size_t level, const std::string& name) {
    Graph& g = *scopes[level];
    int v = g.find(name);
    if (v >= 0) return v;
    if (level == 0) return -1;
    int up = resolve_outer(scopes, level - 1, name);
    if (up < 0) return -1;
    Value val;
    val.name = name;
    val.kind = ValueKind::OuterScope;
    val.outer = up;
    g.values.push_back(std::move(val));
    g.value_index.emplace(name, int(g.values.size()) - 1);
    return int(g.values.size()) - 1;
  }

  static const Node* first_consumer(const Graph& g, int v) {
    for (const auto& n : g.nodes)
      for (int i : n.inputs)
        if (i == v) return &n;
    return nullptr;
  }

  // Kahn's algorithm, taking ready nodes in file order so a valid file keeps its own order.
  static void order(Graph& g) {
    const std::size_t n = g.nodes.size();
    std::vector<int> pending(n, 0);
    std::vector<std::vector<int>> users(n);
    for (const auto& node : g.nodes) {
      for (int v : node.inputs) {
        if (v < 0) continue;
        int p = g.values[std::size_t(v)].producer;
        if (p >= 0 && g.values[std::size_t(v)].kind == ValueKind::NodeOutput) {
          ++pending[std::size_t(node.index)];
          users[std::size_t(p)].push_back(node.index);
        }
      }
    }
    std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
    for (std::size_t i = 0; i < n; ++i)
      if (pending[i] == 0) ready.push(int(i));
    g.order.clear();
    g.order.reserve(n);
    while (!ready.empty()) {
      int i = ready.top();
      ready.pop();
      g.order.push_back(i);
      for (int u : users[std::size_t(i)])
        if (--pending[std::size_t(u)] == 0) ready.push(u);
    }
    if (g.order.size() != n) {
      for (std::size_t i = 0; i < n; ++i) {
        if (pending[i] > 0) {
          const Node& c = g.nodes[i];
          throw Error("the graph has a cycle through this node (" + std::to_string(n - g.order.size()) +
                          " nodes can never run)",
                      Location{c.byte_offset, c.display_name(), c.op_type, g.path});
        }
      }
    }
  }
};

}  // namespace

Model load_model(std::span<const std::uint8_t> bytes, const LoadLimits& limits) {
  return Loader(bytes, limits).load();
}

}  // namespace perfcard
