#include "learned_wire.h"

#include <bit>
#include <cstdint>
#include <vector>

#include "perfcard/error.h"

namespace perfcard::wasm {
namespace {

std::string unescaped(std::string_view s) {
  if (s.find('\\') == std::string_view::npos) return std::string(s);
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    const char c = s[++i];
    out += c == 't' ? '\t' : c == 'n' ? '\n' : c;
  }
  return out;
}

// Writes records straight into one string: a record per device row, so no temporaries. Fields may hold any
// text but the separators: a tab, a newline and the backslash are escaped. A number is the 16 hex digits of
// its IEEE-754 bits: exact both ways, and no strtod or printf (their code is most of what a reader of
// decimal text would add to the learned module).
class Writer {
 public:
  explicit Writer(std::size_t reserve = 160) { text_.reserve(reserve); }
  Writer& field(std::string_view s) {
    separate();
    for (char c : s) {
      if (c == '\\') text_ += "\\\\";
      else if (c == '\t') text_ += "\\t";
      else if (c == '\n') text_ += "\\n";
      else text_ += c;
    }
    return *this;
  }
  Writer& field(double v) {
    separate();
    const auto bits = std::bit_cast<std::uint64_t>(v);
    char digits[16];
    for (int i = 15, shift = 0; i >= 0; --i, shift += 4) digits[i] = "0123456789abcdef"[(bits >> shift) & 15];
    text_.append(digits, 16);
    return *this;
  }
  Writer& flag(bool b) {
    separate();
    text_ += b ? '1' : '0';
    return *this;
  }
  void end() {
    text_ += '\n';
    fresh_ = true;
  }
  std::string text() { return std::move(text_); }

 private:
  void separate() {
    if (!fresh_) text_ += '\t';
    fresh_ = false;
  }
  std::string text_;
  bool fresh_ = true;
};

[[noreturn]] void malformed(std::string_view what, std::string_view text) {
  throw internal_error("the learned runtime sent a malformed " + std::string(what) + ": '" +
                       escape_text(std::string(text.substr(0, 200))) + "'");
}

// The records of a text, each a list of its fields, still escaped: a record per device row, so views rather
// than copies; text fields are unescaped where they are read.
std::vector<std::vector<std::string_view>> records(std::string_view text) {
  std::vector<std::vector<std::string_view>> out;
  out.reserve(4);
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    auto& fields = out.emplace_back();
    fields.reserve(8);
    for (std::size_t at = 0;;) {
      const std::size_t tab = line.find('\t', at);
      fields.push_back(line.substr(at, tab == std::string_view::npos ? std::string_view::npos : tab - at));
      if (tab == std::string_view::npos) break;
      at = tab + 1;
    }
  }
  return out;
}

double to_number(std::string_view s, std::string_view what) {
  if (s.size() != 16) malformed(what, s);
  std::uint64_t bits = 0;
  for (char c : s) {
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) malformed(what, s);
    bits = bits << 4 | std::uint64_t(d);
  }
  return std::bit_cast<double>(bits);
}

bool to_flag(std::string_view s, std::string_view what) {
  if (s != "0" && s != "1") malformed(what, s);
  return s == "1";
}

}  // namespace

std::string description_text(const LearnedModel& m) {
  Writer w;
  w.field("name").field(m.name()).end();
  w.field("version").field(m.version()).end();
  w.field("reads").flag(m.reads_graph()).flag(m.reads_sequence()).end();
  const TrainingAccuracy& a = m.training_accuracy();
  for (const auto& [kind, by] : {std::pair{"families", &a.families}, std::pair{"unseen", &a.unseen}})
    for (const auto& [family, f] : *by)
      w.field(kind).field(family).field(f.mape).field(double(f.rows)).flag(f.beats_roofline).end();
  for (const auto& d : a.devices) w.field("device").field(d).end();
  return w.text();
}

ModelDescription parse_description(std::string_view text) {
  ModelDescription d;
  for (const auto& r : records(text)) {
    const std::string_view key = r[0];
    if ((key == "name" || key == "version") && r.size() == 2) {
      (key == "name" ? d.name : d.version) = unescaped(r[1]);
    } else if (key == "reads" && r.size() == 3) {
      d.reads_graph = to_flag(r[1], "description");
      d.reads_sequence = to_flag(r[2], "description");
    } else if ((key == "families" || key == "unseen") && r.size() == 5) {
      FamilyAccuracy f{to_number(r[2], "description"), std::int64_t(to_number(r[3], "description")),
                       to_flag(r[4], "description")};
      (key == "families" ? d.accuracy.families : d.accuracy.unseen)[unescaped(r[1])] = f;
    } else if (key == "device" && r.size() == 2) {
      d.accuracy.devices.push_back(unescaped(r[1]));  // written from a sorted list, so still sorted
    } else {
      malformed("model description", text);
    }
  }
  if (d.name.empty() || d.version.empty()) malformed("model description", text);
  return d;
}

std::string schemas_text(const CoreSchemas& c) {
  Writer w;
  w.field(c.roofline).field(c.features).field(c.graph).field(c.sequence).end();
  return w.text();
}

CoreSchemas parse_schemas(std::string_view text) {
  const auto r = records(text);
  if (r.size() != 1 || r[0].size() != 4) malformed("schema list", text);
  return {unescaped(r[0][0]), unescaped(r[0][1]), unescaped(r[0][2]), unescaped(r[0][3])};
}

std::string queries_text(std::span<const RowQuery> queries) {
  Writer w(160 * queries.size());
  for (const RowQuery& q : queries) {
    w.flag(q.training_step).flag(q.host_given).field(q.runtime).field(q.family).field(q.device_id).flag(q.gpu);
    w.field(q.roofline_ms).field(q.fallback).end();
  }
  return w.text();
}

std::vector<RowQuery> parse_queries(std::string_view text) {
  std::vector<RowQuery> out;
  for (const auto& f : records(text)) {
    if (f.size() != 8) malformed("row query", text);
    RowQuery& q = out.emplace_back();
    q.training_step = to_flag(f[0], "row query");
    q.host_given = to_flag(f[1], "row query");
    q.runtime = unescaped(f[2]);
    q.family = unescaped(f[3]);
    q.device_id = unescaped(f[4]);
    q.gpu = to_flag(f[5], "row query");
    q.roofline_ms = to_number(f[6], "row query");
    q.fallback = to_number(f[7], "row query");
  }
  return out;
}

std::string verdicts_text(std::span<const Verdict> verdicts) {
  Writer w(96 * verdicts.size());
  for (const Verdict& v : verdicts) {
    w.flag(v.roofline).field(v.correction).field(v.uncertainty).field(v.band_half).field(v.band_coverage).end();
    for (const VerdictNote& n : v.notes) {
      if (n.reason) w.field(double(int(*n.reason)));
      else w.field(std::string_view("-"));
      w.field(n.words).end();
    }
  }
  return w.text();
}

std::vector<Verdict> parse_verdicts(std::string_view text, std::size_t expected) {
  std::vector<Verdict> out;
  out.reserve(expected);
  // A record of five fields begins a verdict; one of two is a note of the verdict before it.
  for (const auto& r : records(text)) {
    if (r.size() == 5) {
      Verdict& v = out.emplace_back();
      v.roofline = to_flag(r[0], "verdict");
      v.correction = to_number(r[1], "verdict");
      v.uncertainty = to_number(r[2], "verdict");
      v.band_half = to_number(r[3], "verdict");
      v.band_coverage = to_number(r[4], "verdict");
      continue;
    }
    if (r.size() != 2 || out.empty()) malformed("verdict", text);
    Verdict& v = out.back();
    if (r[0] == "-") {
      v.warn(unescaped(r[1]));
      continue;
    }
    const double reason = to_number(r[0], "verdict");
    if (!(reason >= 0 && reason <= double(int(OodReason::EmbeddingDistance))) || reason != double(int(reason)))
      malformed("verdict", text);
    v.flag(OodReason(int(reason)), unescaped(r[1]));
  }
  if (out.size() != expected)
    throw internal_error("the learned runtime sent " + std::to_string(out.size()) + " verdicts for " +
                         std::to_string(expected) + " device rows");
  return out;
}

}  // namespace perfcard::wasm
