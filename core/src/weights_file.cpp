#include "perfcard/weights_file.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <functional>
#include <limits>
#include <unordered_set>

#include "perfcard/error.h"

namespace perfcard {

static_assert(std::endian::native == std::endian::little,
              "weights files are little-endian and tensors are viewed in place");

namespace {

constexpr std::uint64_t kHeaderBytes = 40;
constexpr char kMagic[4] = {'P', 'C', 'W', 'T'};

std::string u(std::uint64_t v) { return std::to_string(v); }

// A name for messages: non-printable bytes escaped, long names shortened.
std::string quoted(std::string_view s) {
  static const char* hex = "0123456789abcdef";
  std::string out = "'";
  std::size_t n = 0;
  for (unsigned char c : s) {
    if (++n > 80) {
      out += "...";
      break;
    }
    if (c < 0x20 || c == 0x7f || c == '\\' || c == '\'') {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += char(c);
    }
  }
  return out + "'";
}

Error at(std::string message, std::uint64_t offset) {
  Location l;
  l.byte_offset = offset;
  return Error(std::move(message), std::move(l), ErrorCode::BadData);
}

// Reads little-endian fields from [pos, end); running past end throws the error `overrun` builds from
// (position, bytes needed, bytes available, what was being read).
class Cursor {
 public:
  using Overrun = std::function<Error(std::uint64_t, std::uint64_t, std::uint64_t, const std::string&)>;
  Cursor(std::span<const std::uint8_t> bytes, std::uint64_t pos, std::uint64_t end, Overrun overrun)
      : b_(bytes), pos_(pos), end_(end), overrun_(std::move(overrun)) {}

  std::uint64_t pos() const { return pos_; }
  std::uint64_t remaining() const { return end_ - pos_; }
  void need(std::uint64_t n, const std::string& what) const {
    if (n > end_ - pos_) throw overrun_(pos_, n, end_ - pos_, what);
  }
  template <class T>
  T read(const std::string& what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, b_.data() + pos_, sizeof(T));  // little-endian host (asserted above)
    pos_ += sizeof(T);
    return v;
  }
  std::string_view bytes(std::uint64_t n, const std::string& what) {
    need(n, what);
    std::string_view s(reinterpret_cast<const char*>(b_.data() + pos_), std::size_t(n));
    pos_ += n;
    return s;
  }
  void skip(std::uint64_t n, const std::string& what) {
    need(n, what);
    pos_ += n;
  }

 private:
  std::span<const std::uint8_t> b_;
  std::uint64_t pos_, end_;
  Overrun overrun_;
};

std::string type_label(MetaType t) {
  switch (t) {
    case MetaType::String: return "string";
    case MetaType::Int64: return "int64";
    case MetaType::Float64: return "float64";
    case MetaType::Bool: return "bool";
    case MetaType::Array: return "array";
  }
  return "type#" + u(unsigned(t));
}

bool scalar_type(std::uint8_t t) { return t >= 1 && t <= 4; }

constexpr std::array<RequiredKey, 8> kRequired{{
    {"predictor", MetaType::String, MetaType::String},
    {"predictor.version", MetaType::Int64, MetaType::Int64},
    {"feature_schema.hash", MetaType::String, MetaType::String},
    {"training.provenance", MetaType::String, MetaType::String},
    {"training.sources", MetaType::Array, MetaType::String},
    {"training.commit", MetaType::String, MetaType::String},
    {"training.date", MetaType::String, MetaType::String},
    {"created_by", MetaType::String, MetaType::String},
}};

std::string required_type_label(const RequiredKey& k) {
  return k.type == MetaType::Array ? "array<" + type_label(k.element) + ">" : type_label(k.type);
}

bool has_type(const MetaValue& v, const RequiredKey& k) {
  switch (k.type) {
    case MetaType::String: return std::holds_alternative<std::string>(v.value);
    case MetaType::Int64: return std::holds_alternative<std::int64_t>(v.value);
    case MetaType::Float64: return std::holds_alternative<double>(v.value);
    case MetaType::Bool: return std::holds_alternative<bool>(v.value);
    case MetaType::Array:
      switch (k.element) {
        case MetaType::String: return std::holds_alternative<std::vector<std::string>>(v.value);
        case MetaType::Int64: return std::holds_alternative<std::vector<std::int64_t>>(v.value);
        case MetaType::Float64: return std::holds_alternative<std::vector<double>>(v.value);
        case MetaType::Bool: return std::holds_alternative<std::vector<bool>>(v.value);
        default: return false;
      }
  }
  return false;
}

// Parses one string (u32 length + bytes) with the given cap.
std::string read_string(Cursor& c, std::uint32_t cap, const std::string& what) {
  const std::uint64_t at_len = c.pos();
  const auto n = c.read<std::uint32_t>(what + " length");
  if (n > cap) {
    throw at(what + " length " + u(n) + " exceeds the limit of " + u(cap) + " bytes", at_len);
  }
  return std::string(c.bytes(n, what));
}

// Parses a value of scalar type `t` into `out` (a MetaValue variant alternative).
void read_scalar(Cursor& c, std::uint8_t t, const std::string& what, MetaValue& out) {
  switch (MetaType(t)) {
    case MetaType::String: out.value = read_string(c, kWeightsMaxStringBytes, what + " string"); break;
    case MetaType::Int64: out.value = c.read<std::int64_t>(what + " int64"); break;
    case MetaType::Float64: out.value = c.read<double>(what + " float64"); break;
    case MetaType::Bool: {
      const std::uint64_t p = c.pos();
      const auto b = c.read<std::uint8_t>(what + " bool");
      if (b > 1) throw at(what + ": bool value " + u(b) + " is neither 0 nor 1", p);
      out.value = b == 1;
      break;
    }
    default: break;
  }
}

template <class T>
void read_array(Cursor& c, std::uint8_t elem, std::uint32_t count, const std::string& what, MetaValue& out) {
  std::vector<T> v;
  v.reserve(count);
  MetaValue tmp;
  for (std::uint32_t i = 0; i < count; ++i) {
    read_scalar(c, elem, what + " element " + u(i), tmp);
    v.push_back(std::get<T>(std::move(tmp.value)));
  }
  out.value = std::move(v);
}

}  // namespace

bool wdtype_is_known(std::uint32_t code) { return (code >= 1 && code <= 8) || code == 32 || code == 33; }

std::string wdtype_name(WDType t) {
  switch (t) {
    case WDType::F32: return "f32";
    case WDType::F16: return "f16";
    case WDType::BF16: return "bf16";
    case WDType::F64: return "f64";
    case WDType::I8: return "i8";
    case WDType::U8: return "u8";
    case WDType::I32: return "i32";
    case WDType::I64: return "i64";
    case WDType::Q8_0: return "q8_0";
    case WDType::Q4_0: return "q4_0";
  }
  return "dtype#" + u(std::uint32_t(t));
}

std::uint64_t wdtype_bytes(WDType t, std::uint64_t n) {
  switch (t) {
    case WDType::I8: case WDType::U8: return n;
    case WDType::F16: case WDType::BF16: return 2 * n;
    case WDType::F32: case WDType::I32: return 4 * n;
    case WDType::F64: case WDType::I64: return 8 * n;
    case WDType::Q8_0: return n / quant::kBlockSize * sizeof(quant::BlockQ8_0);
    case WDType::Q4_0: return n / quant::kBlockSize * sizeof(quant::BlockQ4_0);
  }
  return 0;
}

std::string MetaValue::type_name() const {
  switch (value.index()) {
    case 0: return "string";
    case 1: return "int64";
    case 2: return "float64";
    case 3: return "bool";
    case 4: return "array<int64>";
    case 5: return "array<float64>";
    case 6: return "array<bool>";
    case 7: return "array<string>";
  }
  return "?";
}

std::span<const RequiredKey> weights_required_keys() { return kRequired; }

// ---------------------------------------------------------------------------------------------- reading

namespace {

// The magic, with what the bytes are when they are not a weights file.
void check_magic(std::span<const std::uint8_t> bytes) {
  const std::uint64_t size = bytes.size();
  if (size < 4) {
    throw at("not a PerfCard weights file (" + u(size) + " bytes, shorter than the magic \"PCWT\")", 0);
  }
  if (std::memcmp(bytes.data(), kMagic, 4) != 0) {
    bool printable = true;
    for (int i = 0; i < 4; ++i) printable = printable && bytes[i] >= 0x20 && bytes[i] < 0x7f && bytes[i] != '"';
    std::string shown;
    if (printable) {
      shown = "\"" + std::string(reinterpret_cast<const char*>(bytes.data()), 4) + "\"";
    } else {
      static const char* hex = "0123456789abcdef";
      shown = "bytes";
      for (int i = 0; i < 4; ++i) {
        shown += ' ';
        shown += hex[bytes[i] >> 4];
        shown += hex[bytes[i] & 15];
      }
    }
    throw at("not a PerfCard weights file (magic " + shown + ", expected \"PCWT\")", 0);
  }
}

struct Counts {
  std::uint32_t metadata = 0, tensors = 0;
};

// The fixed header: versions (a wrong major is refused before anything else is read), alignment, counts
// and the data section, which must end the file.
Counts read_header(std::span<const std::uint8_t> bytes, WeightsFile& w) {
  const std::uint64_t size = bytes.size();
  auto truncated_header = [&] {
    return at("truncated header: " + u(kHeaderBytes) + " bytes needed, the file has " + u(size), size);
  };
  if (size < 8) throw truncated_header();

  Cursor h(bytes, 4, kHeaderBytes, [&](std::uint64_t, std::uint64_t, std::uint64_t, const std::string&) {
    return truncated_header();
  });
  w.major = h.read<std::uint16_t>("major version");
  w.minor = h.read<std::uint16_t>("minor version");
  if (w.major > kWeightsFormatMajor) {
    throw at("weights file format " + u(w.major) + ".x is newer than this build reads (" + u(kWeightsFormatMajor) +
                 ".x); update PerfCard",
             4);
  }
  if (w.major < kWeightsFormatMajor) {
    throw at("weights file format " + u(w.major) + ".x is older than this build reads (" + u(kWeightsFormatMajor) +
                 ".x); regenerate the file",
             4);
  }
  if (size < kHeaderBytes) throw truncated_header();
  w.alignment = h.read<std::uint32_t>("alignment");
  Counts n;
  n.metadata = h.read<std::uint32_t>("metadata count");
  n.tensors = h.read<std::uint32_t>("tensor count");
  h.read<std::uint32_t>("reserved");
  w.data_offset = h.read<std::uint64_t>("data offset");
  w.data_size = h.read<std::uint64_t>("data size");

  if (w.alignment < 8 || w.alignment > 65536 || !std::has_single_bit(w.alignment)) {
    throw at("alignment " + u(w.alignment) + " is not a power of two between 8 and 65536", 8);
  }
  if (n.metadata > kWeightsMaxMetadata) {
    throw at("metadata count " + u(n.metadata) + " exceeds the limit of " + u(kWeightsMaxMetadata), 12);
  }
  if (n.tensors > kWeightsMaxTensors) {
    throw at("tensor count " + u(n.tensors) + " exceeds the limit of " + u(kWeightsMaxTensors), 16);
  }
  if (w.data_offset < kHeaderBytes) {
    throw at("data section offset " + u(w.data_offset) + " lies inside the " + u(kHeaderBytes) + "-byte header", 24);
  }
  if (w.data_offset % w.alignment != 0) {
    throw at("data section offset " + u(w.data_offset) + " is not a multiple of the alignment " + u(w.alignment),
             24);
  }
  if (w.data_offset > size || w.data_size > size - w.data_offset) {
    const bool overflow = w.data_size > std::numeric_limits<std::uint64_t>::max() - w.data_offset;
    throw at("truncated file: the header declares " +
                 (overflow ? std::string("more than 2^64") : u(w.data_offset + w.data_size)) +
                 " bytes (data section at " + u(w.data_offset) + ", " + u(w.data_size) + " bytes), the file has " +
                 u(size),
             size);
  }
  if (w.data_offset + w.data_size != size) {
    throw at(u(size - w.data_offset - w.data_size) + " unexpected bytes after the data section",
             w.data_offset + w.data_size);
  }

  return n;
}

// The metadata entries; value types of a newer minor version are skipped by their size.
void read_metadata(Cursor& c, std::span<const std::uint8_t> bytes, std::uint32_t n_meta, bool newer_minor,
                   WeightsFile& w) {
  std::unordered_set<std::string> seen;
  for (std::uint32_t i = 0; i < n_meta; ++i) {
    const std::uint64_t entry = c.pos();
    const std::string label = "metadata entry " + u(i);
    std::string key = read_string(c, kWeightsMaxNameBytes, label + " key");
    if (key.empty()) throw at(label + " has an empty key", entry);
    const std::string what = "metadata " + quoted(key);
    if (!seen.insert(key).second) throw at("duplicate metadata key " + quoted(key), entry);
    const std::uint64_t at_type = c.pos();
    const auto type = c.read<std::uint8_t>(what + " type");
    const auto value_size = c.read<std::uint32_t>(what + " value size");
    c.need(value_size, what + " value");
    const std::uint64_t value_start = c.pos();
    const std::uint64_t value_end = value_start + value_size;

    if (!scalar_type(type) && type != std::uint8_t(MetaType::Array)) {
      if (newer_minor) {  // a value type added after 1.0: skippable thanks to its size
        c.skip(value_size, what + " value");
        continue;
      }
      throw at(what + " has unknown value type " + u(type), at_type);
    }
    Cursor v(bytes, value_start, value_end,
             [&](std::uint64_t pos, std::uint64_t need, std::uint64_t avail, const std::string& vwhat) {
               return at(vwhat + " needs " + u(need) + " bytes, only " + u(avail) + " remain of its " +
                             u(value_size) + "-byte value",
                         pos);
             });
    MetaEntry e;
    e.key = std::move(key);
    e.value.byte_offset = entry;
    if (scalar_type(type)) {
      read_scalar(v, type, what, e.value);
    } else {
      const std::uint64_t at_elem = v.pos();
      const auto elem = v.read<std::uint8_t>(what + " array element type");
      if (!scalar_type(elem)) throw at(what + " has unknown array element type " + u(elem), at_elem);
      const std::uint64_t at_count = v.pos();
      const auto count = v.read<std::uint32_t>(what + " array length");
      if (count > kWeightsMaxArrayLength) {
        throw at(what + " array length " + u(count) + " exceeds the limit of " + u(kWeightsMaxArrayLength),
                 at_count);
      }
      // Every element takes at least one byte (4 for strings, 8 for numbers): a count the value cannot
      // hold is rejected before anything is allocated for it.
      const std::uint64_t min_elem = elem == 4 ? 1 : elem == 1 ? 4 : 8;
      if (std::uint64_t(count) * min_elem > v.remaining()) {
        throw at(what + " array length " + u(count) + " does not fit its " + u(value_size) + "-byte value",
                 at_count);
      }
      switch (MetaType(elem)) {
        case MetaType::String: read_array<std::string>(v, elem, count, what, e.value); break;
        case MetaType::Int64: read_array<std::int64_t>(v, elem, count, what, e.value); break;
        case MetaType::Float64: read_array<double>(v, elem, count, what, e.value); break;
        default: read_array<bool>(v, elem, count, what, e.value); break;
      }
    }
    if (v.remaining() != 0) {
      throw at(what + " value takes " + u(v.pos() - value_start) + " bytes but its size field says " +
                   u(value_size),
               at_type + 1);
    }
    c.skip(value_size, what + " value");
    w.metadata.push_back(std::move(e));
  }

}

// The tensor table: each entry's dtype, shape, and data range inside the data section; no two overlap.
void read_tensor_table(Cursor& c, std::span<const std::uint8_t> bytes, std::uint32_t n_tensors, bool newer_minor,
                       WeightsFile& w) {
  struct Span {
    std::uint64_t begin, end;
    std::size_t index;
  };
  std::vector<Span> used;
  std::unordered_set<std::string> seen;
  for (std::uint32_t i = 0; i < n_tensors; ++i) {
    TensorInfo t;
    t.entry_offset = c.pos();
    const std::string label = "tensor entry " + u(i);
    t.name = read_string(c, kWeightsMaxNameBytes, label + " name");
    if (t.name.empty()) throw at(label + " has an empty name", t.entry_offset);
    const std::string what = "tensor " + quoted(t.name);
    if (!seen.insert(t.name).second) throw at("duplicate tensor name " + quoted(t.name), t.entry_offset);
    const std::uint64_t at_dtype = c.pos();
    const auto code = c.read<std::uint32_t>(what + " dtype");
    const auto rank = c.read<std::uint32_t>(what + " rank");
    if (rank > kWeightsMaxRank) {
      throw at(what + ": rank " + u(rank) + " exceeds the limit of " + u(kWeightsMaxRank), at_dtype + 4);
    }
    for (std::uint32_t d = 0; d < rank; ++d) t.dims.push_back(c.read<std::uint64_t>(what + " dims"));
    const std::uint64_t at_offset = c.pos();
    t.offset = c.read<std::uint64_t>(what + " data offset");
    t.byte_size = c.read<std::uint64_t>(what + " byte size");
    t.dtype = WDType(code);

    if (!wdtype_is_known(code) && !newer_minor) throw at(what + " has unknown dtype code " + u(code), at_dtype);
    if (wdtype_is_known(code)) {
      std::uint64_t n = 1;
      for (std::uint64_t d : t.dims) {
        if (d != 0 && n > (std::uint64_t(1) << 60) / d) {
          throw at(what + ": shape " + t.shape_string() + " has too many elements", at_dtype + 8);
        }
        n *= d;
      }
      const bool quantized = t.dtype == WDType::Q8_0 || t.dtype == WDType::Q4_0;
      if (quantized && (t.dims.empty() || t.dims.back() % quant::kBlockSize != 0)) {
        throw at(what + ": " + wdtype_name(t.dtype) + " needs a last dimension that is a multiple of 32, shape " +
                     t.shape_string(),
                 at_dtype + 8);
      }
      const std::uint64_t expected = wdtype_bytes(t.dtype, n);
      if (t.byte_size != expected) {
        throw at(what + ": byte size " + u(t.byte_size) + " does not match " + t.shape_string() + " x " +
                     wdtype_name(t.dtype) + " = " + u(expected) + " bytes",
                 at_offset + 8);
      }
    }
    if (t.offset % w.alignment != 0) {
      throw at(what + ": data offset " + u(t.offset) + " is not a multiple of the alignment " + u(w.alignment),
               at_offset);
    }
    if (t.offset > w.data_size || t.byte_size > w.data_size - t.offset) {
      throw at(what + ": data [" + u(t.offset) + ", +" + u(t.byte_size) + ") lies outside the " + u(w.data_size) +
                   "-byte data section",
               at_offset);
    }
    t.bytes = bytes.subspan(std::size_t(w.data_offset + t.offset), std::size_t(t.byte_size));
    if (t.byte_size > 0) used.push_back({t.offset, t.offset + t.byte_size, w.tensors.size()});
    w.tensors.push_back(std::move(t));
  }
  std::sort(used.begin(), used.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  for (std::size_t k = 1; k < used.size(); ++k) {
    if (used[k].begin < used[k - 1].end) {
      const auto& a = w.tensors[used[k - 1].index];
      const auto& b = w.tensors[used[k].index];
      const auto& later = a.entry_offset > b.entry_offset ? a : b;
      const auto& other = &later == &a ? b : a;
      throw at("tensor " + quoted(later.name) + ": data [" + u(later.offset) + ", +" + u(later.byte_size) +
                   ") overlaps tensor " + quoted(other.name) + " [" + u(other.offset) + ", +" +
                   u(other.byte_size) + ")",
               later.entry_offset);
    }
  }

}

void check_required(const WeightsFile& w) {
  for (const auto& k : kRequired) {
    const MetaValue* v = w.find(k.key);
    if (!v) throw data_error("weights file lacks required metadata " + quoted(k.key));
    if (!has_type(*v, k)) {
      throw at("metadata " + quoted(k.key) + " is " + v->type_name() + ", expected " + required_type_label(k),
               v->byte_offset);
    }
  }
}

}  // namespace

WeightsFile read_weights(std::span<const std::uint8_t> bytes) {
  check_magic(bytes);
  WeightsFile w;
  const Counts n = read_header(bytes, w);
  // Metadata and tensor table: everything between the header and the data section.
  std::string section = "metadata";
  Cursor c(bytes, kHeaderBytes, w.data_offset,
           [&](std::uint64_t pos, std::uint64_t need, std::uint64_t avail, const std::string& what) {
             return at("truncated " + section + ": " + what + " needs " + u(need) + " bytes, only " + u(avail) +
                           " remain before the data section at byte offset " + u(w.data_offset),
                       pos);
           });
  const bool newer_minor = w.minor > kWeightsFormatMinor;
  read_metadata(c, bytes, n.metadata, newer_minor, w);
  section = "tensor table";
  read_tensor_table(c, bytes, n.tensors, newer_minor, w);
  check_required(w);
  w.bytes = bytes;
  return w;
}

// ---------------------------------------------------------------------------------------------- lookups

const MetaValue* WeightsFile::find(std::string_view key) const {
  for (const auto& m : metadata) {
    if (m.key == key) return &m.value;
  }
  return nullptr;
}

const MetaValue& WeightsFile::get(std::string_view key) const {
  const MetaValue* v = find(key);
  if (!v) {
    const MetaValue* p = find("predictor");
    const auto* name = p ? std::get_if<std::string>(&p->value) : nullptr;
    throw data_error((name ? "predictor " + quoted(*name) : std::string("weights file")) + " has no metadata " +
                quoted(key));
  }
  return *v;
}

namespace {
template <class T>
const T& typed(const WeightsFile& w, std::string_view key, const char* expected) {
  const MetaValue& v = w.get(key);
  if (const T* p = std::get_if<T>(&v.value)) return *p;
  throw at("metadata " + quoted(key) + " is " + v.type_name() + ", expected " + expected, v.byte_offset);
}
}  // namespace

std::string_view WeightsFile::get_string(std::string_view key) const { return typed<std::string>(*this, key, "string"); }
std::int64_t WeightsFile::get_int(std::string_view key) const { return typed<std::int64_t>(*this, key, "int64"); }
double WeightsFile::get_float(std::string_view key) const {
  const MetaValue& v = get(key);
  if (const auto* i = std::get_if<std::int64_t>(&v.value)) return double(*i);
  return typed<double>(*this, key, "float64");
}
bool WeightsFile::get_bool(std::string_view key) const { return typed<bool>(*this, key, "bool"); }
const std::vector<std::int64_t>& WeightsFile::get_ints(std::string_view key) const {
  return typed<std::vector<std::int64_t>>(*this, key, "array<int64>");
}
const std::vector<double>& WeightsFile::get_floats(std::string_view key) const {
  return typed<std::vector<double>>(*this, key, "array<float64>");
}
const std::vector<std::string>& WeightsFile::get_strings(std::string_view key) const {
  return typed<std::vector<std::string>>(*this, key, "array<string>");
}

const TensorInfo* WeightsFile::find_tensor(std::string_view name) const {
  for (const auto& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

const TensorInfo& WeightsFile::tensor(std::string_view name) const {
  const TensorInfo* t = find_tensor(name);
  if (!t) {
    const MetaValue* p = find("predictor");
    const auto* pred = p ? std::get_if<std::string>(&p->value) : nullptr;
    throw data_error((pred ? "predictor " + quoted(*pred) : std::string("weights file")) + " has no tensor " +
                quoted(name));
  }
  return *t;
}

const TensorInfo& WeightsFile::tensor(std::string_view name, WDType expected,
                                      std::initializer_list<std::int64_t> dims) const {
  const TensorInfo& t = tensor(name);
  if (t.dtype != expected) {
    throw at("tensor " + quoted(name) + " is " + wdtype_name(t.dtype) + ", expected " + wdtype_name(expected),
             t.entry_offset);
  }
  bool match = dims.size() == t.dims.size();
  std::size_t i = 0;
  for (std::int64_t d : dims) {
    if (match && d >= 0 && std::uint64_t(d) != t.dims[i]) match = false;
    ++i;
  }
  if (!match) {
    std::string want = "[";
    i = 0;
    for (std::int64_t d : dims) want += (i++ ? ", " : "") + std::to_string(d);
    throw at("tensor " + quoted(name) + " has shape " + t.shape_string() + ", expected " + want + "]",
             t.entry_offset);
  }
  return t;
}

void WeightsFile::require_predictor(std::string_view name, std::int64_t version) const {
  if (predictor() != name)
    throw data_error("the file is a '" + std::string(predictor()) + "' predictor, not '" + std::string(name) + "'");
  if (predictor_version() != version)
    throw data_error(std::string(name) + " predictor version " + std::to_string(predictor_version()) +
                     " is not the version this build runs (" + std::to_string(version) + ")");
}

void WeightsFile::require_schema_hash(std::string_view expected, std::string_view key) const {
  const std::string_view got = get_string(key);
  if (got == expected) return;
  std::string what(key.substr(0, key.rfind(".hash")));  // "feature_schema" -> "feature schema"
  std::replace(what.begin(), what.end(), '_', ' ');
  throw at("predictor " + quoted(predictor()) + " (version " + std::to_string(predictor_version()) +
               ") was trained on " + what + " " + quoted(got) + ", but this build computes " + quoted(expected) +
               "; retrain the predictor or use the PerfCard version it was trained for",
           get(key).byte_offset);
}

// ---------------------------------------------------------------------------------------------- tensors

std::uint64_t TensorInfo::elements() const {
  std::uint64_t n = 1;
  for (std::uint64_t d : dims) n *= d;
  return n;
}

std::string TensorInfo::shape_string() const {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + u(dims[i]);
  return s + "]";
}

namespace {
template <class T>
std::span<const T> view(const TensorInfo& t, WDType want) {
  if (t.dtype != want) {
    throw data_error("tensor " + quoted(t.name) + " is " + wdtype_name(t.dtype) + ", not " + wdtype_name(want));
  }
  if (reinterpret_cast<std::uintptr_t>(t.bytes.data()) % alignof(T) != 0) {
    throw data_error("tensor " + quoted(t.name) + ": data is not " + u(alignof(T)) +
                "-byte aligned in memory; load the file into an aligned buffer");
  }
  return {reinterpret_cast<const T*>(t.bytes.data()), t.bytes.size() / sizeof(T)};
}
}  // namespace

std::span<const float> TensorInfo::f32() const { return view<float>(*this, WDType::F32); }
std::span<const double> TensorInfo::f64() const { return view<double>(*this, WDType::F64); }
std::span<const std::uint16_t> TensorInfo::f16_bits() const { return view<std::uint16_t>(*this, WDType::F16); }
std::span<const std::uint16_t> TensorInfo::bf16_bits() const { return view<std::uint16_t>(*this, WDType::BF16); }
std::span<const std::int8_t> TensorInfo::i8() const { return view<std::int8_t>(*this, WDType::I8); }
std::span<const std::uint8_t> TensorInfo::u8() const { return view<std::uint8_t>(*this, WDType::U8); }
std::span<const std::int32_t> TensorInfo::i32() const { return view<std::int32_t>(*this, WDType::I32); }
std::span<const std::int64_t> TensorInfo::i64() const { return view<std::int64_t>(*this, WDType::I64); }
std::span<const quant::BlockQ8_0> TensorInfo::q8_0() const { return view<quant::BlockQ8_0>(*this, WDType::Q8_0); }
std::span<const quant::BlockQ4_0> TensorInfo::q4_0() const { return view<quant::BlockQ4_0>(*this, WDType::Q4_0); }

std::vector<float> TensorInfo::to_f32() const {
  std::vector<float> out;
  auto widen = [&](auto span, auto convert) {
    out.reserve(span.size());
    for (auto v : span) out.push_back(convert(v));
  };
  switch (dtype) {
    case WDType::F32: return {f32().begin(), f32().end()};
    case WDType::F64: widen(f64(), [](double v) { return float(v); }); break;
    case WDType::F16: widen(f16_bits(), quant::fp16_to_fp32); break;
    case WDType::BF16: widen(bf16_bits(), quant::bf16_to_fp32); break;
    case WDType::I8: widen(i8(), [](std::int8_t v) { return float(v); }); break;
    case WDType::U8: widen(u8(), [](std::uint8_t v) { return float(v); }); break;
    case WDType::I32: widen(i32(), [](std::int32_t v) { return float(v); }); break;
    case WDType::I64: widen(i64(), [](std::int64_t v) { return float(v); }); break;
    case WDType::Q8_0:
      out.resize(q8_0().size() * quant::kBlockSize);
      quant::dequantize_row_q8_0(q8_0(), out);
      break;
    case WDType::Q4_0:
      out.resize(q4_0().size() * quant::kBlockSize);
      quant::dequantize_row_q4_0(q4_0(), out);
      break;
    default: throw data_error("tensor " + quoted(name) + " has dtype code " + u(std::uint32_t(dtype)) +
                         " unknown to this build (file format minor version newer than " +
                         u(kWeightsFormatMinor) + ")");
  }
  return out;
}

}  // namespace perfcard
