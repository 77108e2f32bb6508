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
#include <map>
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

// Element counts above this are no real tensor; keeping every shape below it keeps the arithmetic on
// dims (products, sums of products) far from int64 overflow. Shape inference uses the same bound.
constexpr std::uint64_t kMaxElements = std::uint64_t{1} << 50;

// Field names of the messages the wire reader walks, for error messages.
const char* model_field(std::uint32_t n) {
  switch (n) {
    case 1: return "ir_version"; case 2: return "producer_name"; case 3: return "producer_version";
    case 4: return "domain"; case 5: return "model_version"; case 6: return "doc_string"; case 7: return "graph";
    case 8: return "opset_import"; case 14: return "metadata_props"; case 20: return "training_info";
    case 25: return "functions"; default: return nullptr;
  }
}
const char* graph_field(std::uint32_t n) {
  switch (n) {
    case 1: return "node"; case 2: return "name"; case 5: return "initializer"; case 10: return "doc_string";
    case 11: return "input"; case 12: return "output"; case 13: return "value_info";
    case 14: return "quantization_annotation"; case 15: return "sparse_initializer"; default: return nullptr;
  }
}
const char* node_field(std::uint32_t n) {
  switch (n) {
    case 1: return "input"; case 2: return "output"; case 3: return "name"; case 4: return "op_type";
    case 5: return "attribute"; case 6: return "doc_string"; case 7: return "domain"; default: return nullptr;
  }
}
const char* attribute_field(std::uint32_t n) {
  switch (n) {
    case 1: return "name"; case 2: return "f"; case 3: return "i"; case 4: return "s"; case 5: return "t";
    case 6: return "g"; case 7: return "floats"; case 8: return "ints"; case 9: return "strings";
    case 10: return "tensors"; case 11: return "graphs"; case 13: return "doc_string"; case 20: return "type";
    case 21: return "ref_attr_name"; default: return nullptr;
  }
}
const char* tensor_field(std::uint32_t n) {
  switch (n) {
    case 1: return "dims"; case 2: return "data_type"; case 3: return "segment"; case 4: return "float_data";
    case 5: return "int32_data"; case 6: return "string_data"; case 7: return "int64_data"; case 8: return "name";
    case 9: return "raw_data"; case 10: return "double_data"; case 11: return "uint64_data";
    case 12: return "doc_string"; case 13: return "external_data"; case 14: return "data_location";
    default: return nullptr;
  }
}
const char* sparse_field(std::uint32_t n) {
  switch (n) {
    case 1: return "values"; case 2: return "indices"; case 3: return "dims"; default: return nullptr;
  }
}

const char* wire_type_name(WireType t) {
  switch (t) {
    case WireType::Varint: return "varint";
    case WireType::Fixed64: return "fixed64";
    case WireType::Len: return "length-delimited";
    case WireType::Fixed32: return "fixed32";
    default: return "group";
  }
}

std::string dims_string(const std::vector<std::int64_t>& dims) {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(dims[i]);
  }
  s += ']';
  return s;
}

// True when the input starts like a text file rather than binary protobuf.
bool looks_like_text(std::span<const std::uint8_t> b) {
  std::size_t n = std::min<std::size_t>(b.size(), 256);
  if (n < 4) return false;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint8_t c = b[i];
    if (!(c >= 0x20 && c < 0x7f) && c != '\n' && c != '\r' && c != '\t') return false;
  }
  return true;
}

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
    if (bytes_.empty()) throw Error("empty input: an ONNX model is a non-empty protobuf ModelProto", {}, ErrorCode::Malformed);
    if (bytes_.size() > kMaxModelBytes)  // nodes keep 32-bit offsets
      throw Error("the input is " + std::to_string(bytes_.size()) +
                      " bytes; PerfCard reads ONNX files up to 4 GiB (protobuf's own limit is 2 GiB: larger models keep "
                      "their weights in external data files)",
                  {}, ErrorCode::Limit);
    reject_other_formats();
    try {
      return load_model_proto();
    } catch (const Error&) {
      // Text that happens to start like protobuf fails somewhere in the walk: say what it is instead.
      if (looks_like_text(bytes_)) {
        throw Error("not an ONNX model: the input is text (ONNX text format or a prototxt?), not binary protobuf",
                    Location{0, {}, {}, {}}, ErrorCode::Malformed);
      }
      throw;
    }
  }

 private:
  std::span<const std::uint8_t> bytes_;
  const LoadLimits& limits_;
  StringPool* strings_ = nullptr;             // the model's, while it is built
  std::vector<std::uint64_t> opset_offsets_;  // byte offset of each opset_import entry, like Model::opsets
  // byte offset of each graph output's ValueInfoProto, by graph path and name, for "no producer" errors
  std::map<std::pair<std::string, std::string>, std::uint64_t> output_offsets_;

  Model load_model_proto() {
    Model m;
    strings_ = &m.strings;
    m.file_bytes = bytes_.size();
    bool have_graph = false;
    Reader r(bytes_, 0, "ModelProto", model_field);
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
          opset_offsets_.push_back(f.offset);
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
                      std::string(m.ir_version == 0 ? " and no ir_version" : ""),
                  {}, ErrorCode::Malformed);
    }
    if (m.ir_version == 0) throw Error("not an ONNX model: the ModelProto has no ir_version (field 1)", {}, ErrorCode::Malformed);
    if (m.ir_version < 0) throw Error("ModelProto has an invalid ir_version " + std::to_string(m.ir_version));
    check_opsets(m);
    std::vector<Graph*> scopes;
    link(m.graph, scopes);
    return m;
  }

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
    if (what) throw Error(std::string("not an ONNX model: the input is ") + what, Location{0, {}, {}, {}}, ErrorCode::Malformed);
  }

  // Also indexes them: every node looks its domain's opset up, so a file with 100k imports must not
  // make that a scan. A domain imported twice would be read one way by the rules and reported another.
  void check_opsets(Model& m) const {
    m.opset_index.reserve(m.opsets.size());
    for (std::size_t i = 0; i < m.opsets.size(); ++i) {
      const auto& o = m.opsets[i];
      Location at{opset_offsets_[i], {}, {}, {}};
      auto [it, fresh] = m.opset_index.emplace(o.domain, o.version);
      if (!fresh)
        throw Error("opset_import lists domain '" + (o.domain.empty() ? std::string("ai.onnx") : o.domain) +
                        "' twice (versions " + std::to_string(it->second) + " and " + std::to_string(o.version) + ")",
                    at);
      if (o.domain.empty() && o.version > limits_.max_supported_opset) {
        throw Error("model imports opset " + std::to_string(o.version) +
                        " of the default ONNX domain; this build knows opsets up to " +
                        std::to_string(limits_.max_supported_opset),
                    at, ErrorCode::Limit);
      }
      if (o.version < 0) {
        throw Error("opset_import for domain '" + (o.domain.empty() ? std::string("ai.onnx") : o.domain) +
                        "' has negative version " + std::to_string(o.version),
                    at);
      }
    }
  }

  static void expect(const Reader& r, const Field& f, WireType t, const char* name) {
    if (f.type != t) {
      r.fail("field " + std::to_string(f.number) + " (" + name + ") has wire type " + std::to_string(int(f.type)) +
                 " (" + wire_type_name(f.type) + "), expected " + std::to_string(int(t)) + " (" +
                 wire_type_name(t) + ")",
             f.offset);
    }
  }

  // Interns a value name in a graph under construction.
  int intern(Graph& g, std::string_view name) {
    int found = g.find(name);
    if (found >= 0) return found;
    return add_value(g, strings_->store(name));
  }

  static int add_value(Graph& g, PoolStr kept_name) {
    const int idx = int(g.values.size());
    Value v;
    v.name = kept_name;
    g.values.push_back(v);
    g.value_index.insert(idx, g.values);
    return idx;
  }

  // Checks a shape's dims (count, range, element count). `fail` reports with the caller's wording, as an
  // ErrorCode::Limit: every one of these is a limit of PerfCard's.
  template <class Fail>
  void check_dims(const std::vector<std::int64_t>& dims, Fail fail) const {
    if (dims.size() > std::size_t(limits_.max_rank))
      fail("has rank " + std::to_string(dims.size()) + ", above the limit of " + std::to_string(limits_.max_rank));
    std::uint64_t n = 1;
    for (std::size_t i = 0; i < dims.size(); ++i) {
      std::int64_t d = dims[i];
      if (d < 0 || d > limits_.max_dim)
        fail("dim " + std::to_string(i) + " is " + std::to_string(d) + ", outside 0 .. 2^40");
      if (d > 0) {
        if (n > kMaxElements / std::uint64_t(d))
          fail("has dims " + dims_string(dims) + ", more than 2^50 elements");
        n *= std::uint64_t(d);
      }
    }
  }

  // role: "graph input", "graph output" or "value_info"; errors name the value and its graph.
  TypeInfo parse_type(const onnx::TypeProto& t, const std::string& what, const Location& at) const {
    TypeInfo ti;
    if (!t.has_tensor_type()) {
      ti.is_tensor = false;
      return ti;
    }
    auto fail = [&](const std::string& m) -> void { throw Error(what + " " + m, at, ErrorCode::Limit); };
    const auto& tt = t.tensor_type();
    if (!dtype_is_known(tt.elem_type())) throw Error(what + " has unknown tensor element type " + std::to_string(tt.elem_type()), at);
    ti.dtype = DType(tt.elem_type());
    if (tt.has_shape()) {
      ti.has_shape = true;
      if (tt.shape().dim_size() > limits_.max_rank)
        fail("has rank " + std::to_string(tt.shape().dim_size()) + ", above the limit of " +
             std::to_string(limits_.max_rank));
      std::vector<std::int64_t> known;
      for (const auto& d : tt.shape().dim()) {
        Dim dim;
        if (d.has_dim_value()) {
          dim.value = d.dim_value();
          known.push_back(d.dim_value());
        } else if (d.has_dim_param()) {
          dim.symbol = d.dim_param();
          known.push_back(0);  // unknown here; bound (and checked) by shape inference
        } else {
          known.push_back(0);
        }
        ti.dims.push_back(std::move(dim));
      }
      check_dims(known, fail);
    }
    return ti;
  }

  std::pair<std::string, TypeInfo> parse_value_info(const Field& f, const char* role, std::size_t index,
                                                    const std::string& path) const {
    Location at{f.offset, {}, {}, path};
    onnx::ValueInfoProto p;
    if (!p.ParseFromArray(f.bytes.data(), int(f.bytes.size()))) {
      throw Error(std::string(role) + " #" + std::to_string(index) +
                      ": malformed ValueInfoProto (bad protobuf, or a type nested over 100 levels deep)",
                  at, ErrorCode::Malformed);
    }
    if (p.name().empty()) throw Error(std::string(role) + " #" + std::to_string(index) + " has no name", at);
    return {p.name(), p.has_type() ? parse_type(p.type(), std::string(role) + " '" + p.name() + "'", at) : TypeInfo{}};
  }

  // ctx: the node (tensor attributes) or graph (initializers) that errors name besides the offset.
  TensorMeta parse_tensor(const Field& tf, const std::string& what, const Location& ctx) const {
    Reader r(tf.bytes, tf.payload_offset, what, tensor_field);
    r.set_context(ctx);
    TensorMeta t;
    t.byte_offset = tf.offset;
    std::int64_t data_type = 0;
    std::span<const std::uint8_t> raw;
    bool has_raw = false;
    // float_data, int32_data, int64_data, double_data, uint64_data, string_data: only the few fields a
    // small constant is decoded from are kept; the rest are counted (35M string_data entries must not
    // become 35M Field records).
    std::vector<Field> typed;
    std::uint64_t typed_fields = 0, rank = 0;
    const std::size_t rank_cap = std::size_t(limits_.max_rank) + 1;
    while (!r.done()) {
      Field f = r.next();
      switch (f.number) {
        case 1:
          rank += r.read_repeated(f, t.dims, [](std::uint64_t v) { return std::int64_t(v); }, rank_cap);
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
        case 4: case 5: case 6: case 7: case 10: case 11:
          t.stored_bytes += f.bytes.size() + (f.type == WireType::Len ? 0 : 8);
          if (++typed_fields <= limits_.max_const_elements) typed.push_back(f);
          break;
        default: break;  // segment, doc_string, metadata
      }
    }
    std::string label = t.name.empty() ? what : what + " '" + t.name + "'";
    Reader lr(tf.bytes, tf.payload_offset, label, tensor_field);
    lr.set_context(ctx);
    auto fail_dims = [&](const std::string& m) {
      Location at = ctx;
      at.byte_offset = tf.offset;
      throw Error(label + " " + m, at, ErrorCode::Limit);
    };
    if (rank > std::uint64_t(limits_.max_rank))
      fail_dims("has rank " + std::to_string(rank) + ", above the limit of " + std::to_string(limits_.max_rank));
    check_dims(t.dims, fail_dims);
    if (!dtype_is_known(data_type)) lr.fail("unknown data_type " + std::to_string(data_type), tf.offset);
    t.dtype = DType(data_type);
    std::uint64_t n = 1;
    for (auto d : t.dims) n *= std::uint64_t(d);
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
    if (n <= limits_.max_const_elements && t.dtype != DType::String && !t.external) {
      // Each field holds at least one value (or is an empty packed run): more fields than the limit
      // means more values than n, or padding no writer emits.
      if (typed_fields > limits_.max_const_elements && !has_raw)
        lr.fail("holds " + std::to_string(typed_fields) + " typed-data fields but its dims need " + std::to_string(n) +
                    " elements",
                tf.offset);
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
      r.fail(r.field_label(f.number) + " has wire type " + std::to_string(int(f.type)) + " (" +
                 wire_type_name(f.type) + "), expected fixed" + std::to_string(width * 8) + " or packed",
             f.offset);
    }
  }

  // ctx: the node's location, made once per node (its name can be a megabyte long).
  Attribute parse_attribute(const Field& af, std::size_t index, int depth, const std::string& path,
                            const Node& node, const Location& ctx) {
    // A first pass finds the name, so that every error below can say which attribute it is about.
    std::string label = "attribute #" + std::to_string(index);
    {
      Reader nr(af.bytes, af.payload_offset, label, attribute_field);
      nr.set_context(ctx);
      while (!nr.done()) {
        Field f = nr.next();
        if (f.number == 1 && f.type == WireType::Len) label = "attribute '" + std::string(f.str()) + "'";
      }
    }
    Reader r(af.bytes, af.payload_offset, label, attribute_field);
    r.set_context(ctx);
    Attribute a;
    bool has_type = false;
    std::vector<Field> graphs;
    std::uint64_t values = 0;  // ints, floats or strings: refused past the limit before they are stored
    const std::size_t cap = limits_.max_attribute_values;
    auto check_values = [&](const Field& f) {
      if (values > cap)
        r.fail("holds more than " + std::to_string(cap) + " values (" + std::to_string(values) +
                   " so far); PerfCard reads at most " + std::to_string(cap) + " per attribute",
               f.offset, ErrorCode::Limit);
    };
    while (!r.done()) {
      Field f = r.next();
      switch (f.number) {
        case 1: expect(r, f, WireType::Len, "name"); a.name = strings_->intern(f.str()); break;
        case 20: expect(r, f, WireType::Varint, "type"); a.type = AttrType(f.varint); has_type = true; break;
        case 2: expect(r, f, WireType::Fixed32, "f"); a.f = bits_to_float(std::uint32_t(f.varint)); break;
        case 3: expect(r, f, WireType::Varint, "i"); a.i = std::int64_t(f.varint); break;
        case 4: expect(r, f, WireType::Len, "s"); a.s = std::string(f.str()); break;
        case 5: case 10:
          expect(r, f, WireType::Len, "t");
          a.tensors.push_back(parse_tensor(f, "tensor of " + label, ctx));
          break;
        case 6: case 11: expect(r, f, WireType::Len, "g"); graphs.push_back(f); break;
        case 7:
          values += f.type == WireType::Len ? f.bytes.size() / 4 : 1;
          check_values(f);
          read_fixed(f, 4, r, [&](std::uint64_t v) { a.floats.push_back(bits_to_float(std::uint32_t(v))); });
          break;
        case 8:
          values += r.read_repeated(f, a.ints, [](std::uint64_t v) { return std::int64_t(v); }, cap);
          check_values(f);
          break;
        case 9:
          expect(r, f, WireType::Len, "strings");
          ++values;
          check_values(f);
          a.strings.emplace_back(f.str());
          break;
        default: break;  // doc_string, ref_attr_name, sparse tensors, type protos
      }
    }
    if (a.name.empty()) {
      Location at = ctx;
      at.byte_offset = af.offset;
      throw Error(label + " has no name", at);
    }
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
                    Location{gf.offset, node.display_name(), node.op_type, path}, ErrorCode::Limit);
      }
      std::string sub = (path.empty() ? "" : path + "/") + node.display_name() + "." + std::string(a.name);
      a.graphs.push_back(parse_graph(gf, depth + 1, sub));
    }
    return a;
  }

  // Where a node's inputs and outputs sit in Graph::node_edges until the graph is whole and the node can point there.
  struct EdgeRange {
    std::uint32_t begin, inputs, outputs;
  };

  void parse_node(const Field& nf, Graph& g, int depth, std::vector<EdgeRange>& edges) {
    Node n;
    n.index = int(g.nodes.size());
    Reader r(nf.bytes, nf.payload_offset, "NodeProto", node_field);
    const Location unnamed{{}, n.display_name(), {}, g.path};
    r.set_context(unnamed);
    n.byte_offset = nf.offset;
    std::vector<Field> attrs;
    std::vector<std::string_view> ins, outs;
    std::string_view name, op_type, domain;
    while (!r.done()) {
      Field f = r.next();
      switch (f.number) {
        case 1: expect(r, f, WireType::Len, "input"); ins.push_back(f.str()); break;
        case 2: expect(r, f, WireType::Len, "output"); outs.push_back(f.str()); break;
        case 3: expect(r, f, WireType::Len, "name"); name = f.str(); break;
        case 4: expect(r, f, WireType::Len, "op_type"); op_type = f.str(); break;
        case 7: expect(r, f, WireType::Len, "domain"); domain = f.str(); break;
        case 5: expect(r, f, WireType::Len, "attribute"); attrs.push_back(f); break;
        default: break;
      }
    }
    // Until here the views point into the file; the model keeps its own copies.
    n.name = strings_->store(name);
    n.op_type = strings_->intern(op_type);
    n.domain = domain == "ai.onnx" ? PoolStr() : strings_->intern(domain);
    if (n.op_type.empty()) {
      throw Error("node without op_type", Location{nf.offset, n.display_name(), {}, g.path});
    }
    if (!attrs.empty()) {
      const Location ctx{{}, n.display_name(), n.op_type, g.path};
      auto block = std::make_unique<Attribute[]>(attrs.size());
      for (std::size_t i = 0; i < attrs.size(); ++i) block[i] = parse_attribute(attrs[i], i, depth, g.path, n, ctx);
      n.attributes = {block.get(), attrs.size()};
      g.attribute_blocks.push_back(std::move(block));
    }
    // Edges are counted in 32 bits (the pools' offsets, value indices): a graph past that is refused.
    if (g.node_edges.size() + ins.size() + outs.size() > std::size_t(INT32_MAX))
      throw Error("the graph has more than 2^31 node inputs and outputs", Location{nf.offset, {}, {}, g.path},
                  ErrorCode::Limit);
    const EdgeRange range{std::uint32_t(g.node_edges.size()), std::uint32_t(ins.size()), std::uint32_t(outs.size())};
    for (auto s : ins) g.node_edges.push_back(s.empty() ? -1 : intern(g, s));
    for (auto s : outs) {
      if (s.empty()) { g.node_edges.push_back(-1); continue; }
      int v = intern(g, s);
      Value& val = g.values[std::size_t(v)];
      if (val.producer == n.index) {
        throw Error("node lists output '" + std::string(s) + "' twice",
                    Location{nf.offset, n.display_name(), n.op_type, g.path});
      }
      if (val.producer >= 0) {
        throw Error("value '" + std::string(s) + "' is produced twice, also by node " +
                        g.nodes[std::size_t(val.producer)].display_name(),
                    Location{nf.offset, n.display_name(), n.op_type, g.path});
      }
      val.producer = n.index;
      g.node_edges.push_back(v);
    }
    g.nodes.push_back(std::move(n));
    edges.push_back(range);
  }

  Graph parse_graph(const Field& gf, int depth, const std::string& path) {
    Graph g;
    g.depth = depth;
    g.path = path;
    Reader r(gf.bytes, gf.payload_offset, "GraphProto", graph_field);
    const Location ctx{{}, {}, {}, path};
    r.set_context(ctx);
    std::vector<Field> inputs, outputs, infos;
    std::vector<TensorMeta> inits;
    std::vector<EdgeRange> edges;
    std::vector<int> declared_of;  // per value: index into g.declared_types, -1 when none (the first wins)
    auto declare = [&](int v, TypeInfo type) {
      if (declared_of.size() <= std::size_t(v)) declared_of.resize(g.values.size(), -1);
      if (declared_of[std::size_t(v)] >= 0) return;
      declared_of[std::size_t(v)] = int(g.declared_types.size());
      g.declared_types.push_back(std::move(type));
    };
    std::size_t sparse_index = 0;
    while (!r.done()) {
      Field f = r.next();
      switch (f.number) {
        case 1: expect(r, f, WireType::Len, "node"); parse_node(f, g, depth, edges); break;
        case 2: expect(r, f, WireType::Len, "name"); g.name = std::string(f.str()); break;
        case 5: expect(r, f, WireType::Len, "initializer"); inits.push_back(parse_tensor(f, "initializer", ctx)); break;
        case 15: {  // sparse_initializer: values (1) and indices (2) are tensors, dims (3) the dense shape
          expect(r, f, WireType::Len, "sparse_initializer");
          Reader sr(f.bytes, f.payload_offset, "sparse_initializer", sparse_field);
          sr.set_context(ctx);
          TensorMeta dense;
          std::uint64_t sparse_rank = 0, n_values = 0;
          bool has_values = false;
          const std::string which = "sparse_initializer #" + std::to_string(sparse_index++);
          while (!sr.done()) {
            Field sf = sr.next();
            if (sf.number == 1 && sf.type == WireType::Len) {
              TensorMeta v = parse_tensor(sf, "sparse_initializer values", ctx);
              dense.name = v.name; dense.dtype = v.dtype; dense.stored_bytes += v.stored_bytes;
              has_values = true;
              n_values = v.num_elements();
            } else if (sf.number == 2 && sf.type == WireType::Len) {
              dense.stored_bytes += parse_tensor(sf, "sparse_initializer indices", ctx).stored_bytes;
            } else if (sf.number == 3) {
              sparse_rank += sr.read_repeated(sf, dense.dims, [](std::uint64_t v) { return std::int64_t(v); },
                                              std::size_t(limits_.max_rank) + 1);
            }
          }
          dense.byte_offset = f.offset;
          const Location at{f.offset, {}, {}, path};
          // The values tensor carries the name: without it there is nothing to name the initializer by.
          if (!has_values) throw Error(which + " has no values tensor (field 1), which holds its name and dtype", at);
          auto fail_dense = [&](const std::string& m) { throw Error("sparse_initializer '" + dense.name + "' " + m, at, ErrorCode::Limit); };
          if (sparse_rank > std::uint64_t(limits_.max_rank))
            fail_dense("has rank " + std::to_string(sparse_rank) + ", above the limit of " + std::to_string(limits_.max_rank));
          check_dims(dense.dims, fail_dense);
          if (n_values > dense.num_elements())
            throw Error("sparse_initializer '" + dense.name + "' has " + std::to_string(n_values) +
                            " values but its dense shape " + dims_string(dense.dims) + " holds only " +
                            std::to_string(dense.num_elements()) + " elements",
                        at);
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
      TypeInfo type;
      type.dtype = t.dtype;
      type.has_shape = true;
      for (auto d : t.dims) type.dims.push_back(Dim{d, {}});
      declare(v, std::move(type));
      g.initializers.push_back(std::move(t));
      g.initializer_values.push_back(v);
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const Field& f = inputs[i];
      auto [name, type] = parse_value_info(f, "graph input", i, path);
      int v = intern(g, name);
      Value& val = g.values[std::size_t(v)];
      if (val.producer >= 0)
        throw Error("graph input '" + name + "' is also produced by node " +
                        g.nodes[std::size_t(val.producer)].display_name(),
                    Location{f.offset, {}, {}, path});
      if (val.kind == ValueKind::Initializer) continue;  // IR < 4 lists weights as inputs too
      if (val.kind == ValueKind::GraphInput)
        throw Error("graph input '" + name + "' is listed twice", Location{f.offset, {}, {}, path});
      val.kind = ValueKind::GraphInput;
      declare(v, std::move(type));
      g.inputs.push_back(v);
    }
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const Field& f = outputs[i];
      auto [name, type] = parse_value_info(f, "graph output", i, path);
      output_offsets_.emplace(std::make_pair(path, name), f.offset);
      int v = intern(g, name);
      declare(v, std::move(type));
      g.outputs.push_back(v);
    }
    for (std::size_t i = 0; i < infos.size(); ++i) {
      const Field& f = infos[i];
      auto [name, type] = parse_value_info(f, "value_info", i, path);
      const int v = g.find(name);
      if (v < 0) continue;  // describes nothing in this graph
      declare(v, std::move(type));
    }
    // The pools are whole: what the nodes and values view can be pointed at.
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      const EdgeRange& e = edges[i];
      g.nodes[i].edges = g.node_edges.data() + e.begin;
      g.nodes[i].num_inputs = e.inputs;
      g.nodes[i].num_outputs = e.outputs;
    }
    for (std::size_t v = 0; v < declared_of.size(); ++v)
      if (declared_of[v] >= 0) g.values[v].declared = &g.declared_types[std::size_t(declared_of[v])];
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
          throw Error("input '" + std::string(val.name) + "' has no producer: it is no graph input, initializer or node output",
                      Location{user->byte_offset, user->display_name(), user->op_type, g.path});
        }
        auto at = output_offsets_.find({g.path, std::string(val.name)});
        Location where{{}, {}, {}, g.path};
        if (at != output_offsets_.end()) where.byte_offset = at->second;
        throw Error("graph output '" + std::string(val.name) +
                        "' has no producer: it is no graph input, initializer or node output",
                    where);
      }
      val.kind = ValueKind::OuterScope;
      g.set_outer_value(v, outer);
    }
    link_consumers(g);
    // Bodies first: what they capture from this graph is known only then, and a node must run after the
    // producers of what its bodies capture.
    scopes.push_back(&g);
    for (auto& n : g.nodes)
      for (const auto& a : n.attributes)  // the graph's own blocks (attribute_blocks), viewed const elsewhere
        for (auto& sub : const_cast<Attribute&>(a).graphs) link(sub, scopes);
    scopes.pop_back();
    order(g);
  }

  // Each value's consumers as spans into one pool, filled in node order (counted, then placed).
  static void link_consumers(Graph& g) {
    std::vector<std::uint32_t> start(g.values.size() + 1, 0);
    for (const auto& n : g.nodes)
      for (int v : n.inputs())
        if (v >= 0) ++start[std::size_t(v) + 1];
    for (std::size_t v = 0; v < g.values.size(); ++v) start[v + 1] += start[v];
    g.value_consumers.assign(start.back(), -1);
    std::vector<std::uint32_t> next(start.begin(), start.end() - 1);
    for (const auto& n : g.nodes)
      for (int v : n.inputs())
        if (v >= 0) g.value_consumers[next[std::size_t(v)]++] = n.index;
    for (std::size_t v = 0; v < g.values.size(); ++v)
      g.values[v].consumers = std::span<const int>(g.value_consumers.data() + start[v], start[v + 1] - start[v]);
  }

  // The nodes `node` waits for: the producers of its inputs, and of the values its bodies capture from this
  // graph (a body's OuterScope value points one level up; captures from further out pass through it).
  template <class F>
  static void for_each_dependency(const Graph& g, const Node& node, F f) {
    auto from = [&](int v) {
      const Value& val = g.values[std::size_t(v)];
      if (val.kind == ValueKind::NodeOutput && val.producer >= 0) f(val.producer);
    };
    for (int v : node.inputs())
      if (v >= 0) from(v);
    for (const auto& a : node.attributes)
      for (const auto& body : a.graphs)
        for (int up : body.outer_of)  // what the body captures, as values of this graph
          if (up >= 0) from(up);
  }

  // A name missing from the enclosing scope may come from further out; the enclosing scope then gets an
  // OuterScope value of its own, so that every capture is visible exactly one level up.
  static int resolve_outer(std::vector<Graph*>& scopes, std::size_t level, PoolStr name) {
    Graph& g = *scopes[level];
    if (int found = g.find(name); found >= 0) return found;
    if (level == 0) return -1;
    int up = resolve_outer(scopes, level - 1, name);
    if (up < 0) return -1;
    // The name is the inner graph's view into the model's strings, which outlive both graphs.
    const int v = add_value(g, name);
    g.values[std::size_t(v)].kind = ValueKind::OuterScope;
    g.set_outer_value(std::size_t(v), up);
    return v;
  }

  static const Node* first_consumer(const Graph& g, int v) {
    for (const auto& n : g.nodes)
      for (int i : n.inputs())
        if (i == v) return &n;
    return nullptr;
  }

  // Kahn's algorithm, taking ready nodes in file order so a valid file keeps its own order.
  static void order(Graph& g) {
    const std::size_t n = g.nodes.size();
    std::vector<int> pending(n, 0);
    // Each node's users, counted then placed (one pool, not a vector per node).
    std::vector<std::uint32_t> start(n + 1, 0);
    for (const auto& node : g.nodes)
      for_each_dependency(g, node, [&](int p) {
        ++pending[std::size_t(node.index)];
        ++start[std::size_t(p) + 1];
      });
    for (std::size_t i = 0; i < n; ++i) start[i + 1] += start[i];
    std::vector<int> users(start.back());
    {
      std::vector<std::uint32_t> next(start.begin(), start.end() - 1);
      for (const auto& node : g.nodes)
        for_each_dependency(g, node, [&](int p) { users[next[std::size_t(p)]++] = node.index; });
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
      for (std::uint32_t k = start[std::size_t(i)]; k < start[std::size_t(i) + 1]; ++k)
        if (--pending[std::size_t(users[k])] == 0) ready.push(users[k]);
    }
    if (g.order.size() != n) throw cycle_error(g, pending);
  }

  // Names one cycle among the nodes that never became ready. Each of them has an input from another
  // such node, so walking from consumer to producer must come back to a node already seen.
  static Error cycle_error(const Graph& g, const std::vector<int>& pending) {
    const std::size_t n = g.nodes.size();
    std::size_t start = 0;
    while (pending[start] == 0) ++start;
    std::vector<int> seen_at(n, -1), path;
    int cur = int(start);
    while (seen_at[std::size_t(cur)] < 0) {
      seen_at[std::size_t(cur)] = int(path.size());
      path.push_back(cur);
      int next = -1;
      for_each_dependency(g, g.nodes[std::size_t(cur)], [&](int p) {
        if (next < 0 && pending[std::size_t(p)] > 0) next = p;
      });
      if (next < 0) break;  // cannot happen; report what was walked
      cur = next;
    }
    // path[seen_at[cur]..] walks the cycle against the data flow: reverse it, and start at the node
    // that comes first in the file.
    std::vector<int> cycle(path.begin() + std::max(0, seen_at[std::size_t(cur)]), path.end());
    std::reverse(cycle.begin(), cycle.end());
    std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
    std::string desc;
    const std::size_t shown = cycle.size() <= 8 ? cycle.size() : 6;
    for (std::size_t i = 0; i < shown; ++i) desc += g.nodes[std::size_t(cycle[i])].display_name() + " -> ";
    if (shown < cycle.size()) desc += "... (" + std::to_string(cycle.size()) + " nodes) -> ";
    const Node& first = g.nodes[std::size_t(cycle.front())];
    desc += first.display_name();
    std::size_t stuck = 0;
    for (int p : pending) stuck += p > 0;
    return Error("the graph has a cycle: " + desc + " (" + std::to_string(stuck) + " node" +
                     (stuck == 1 ? "" : "s") + " can never run)",
                 Location{first.byte_offset, first.display_name(), first.op_type, g.path});
  }
};

}  // namespace

Model load_model(std::span<const std::uint8_t> bytes, const LoadLimits& limits) {
  return Loader(bytes, limits).load();
}

}  // namespace perfcard
