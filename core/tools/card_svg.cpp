#include "card_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace perfcard::tools {

namespace {

std::string esc(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (unsigned char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default:
        if (c < 0x20 && c != '\t') o += ' ';  // control characters are not allowed in XML 1.0
        else o += char(c);
    }
  }
  return o;
}

// x with 3 significant digits, like the page (format.js sig()).
std::string sig(double x, int digits = 3) {
  if (x == 0) return "0";
  double a = std::fabs(x);
  char buf[64];
  if (a >= 1e15 || a < 1e-4) {
    std::snprintf(buf, sizeof buf, "%.*e", digits - 1, x);
    return buf;
  }
  int decimals = std::max(0, digits - 1 - int(std::floor(std::log10(a))));
  std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  std::string s = buf;
  // Thousands separators on the integer part.
  auto dot = s.find('.');
  std::string ip = s.substr(0, dot == std::string::npos ? s.size() : dot);
  std::string frac = dot == std::string::npos ? "" : s.substr(dot);
  bool neg = !ip.empty() && ip[0] == '-';
  if (neg) ip.erase(0, 1);
  std::string grouped;
  for (std::size_t i = 0; i < ip.size(); ++i) {
    if (i > 0 && (ip.size() - i) % 3 == 0) grouped += ',';
    grouped += ip[i];
  }
  return (neg ? "-" : "") + grouped + frac;
}

std::string ms(double x) {
  if (x >= 1000) return sig(x / 1000) + " s";
  if (x < 0.1) return sig(x * 1000) + " \xC2\xB5s";
  return sig(x) + " ms";
}

std::string rate(double x) {
  if (x >= 1e6) return sig(x / 1e6) + " M/s";
  if (x >= 1e4) return sig(x / 1e3) + " k/s";
  return sig(x) + "/s";
}

std::string mib(double x) { return x >= 1024 ? sig(x / 1024) + " GiB" : sig(x) + " MiB"; }

// A figure the document has as a number, NaN where it has null (a non-finite figure: JSON has no NaN).
double num(const nlohmann::json& v) { return v.is_null() ? std::nan("") : v.get<double>(); }

std::string opt_num(const nlohmann::json& v, const char* unit) {
  if (v.is_null()) return "\xE2\x80\x93";  // en dash
  return sig(v.get<double>()) + unit;
}

// Width of text in px at the card's font size, estimated (no font metrics in a static file).
double text_width(const std::string& s, double px) {
  double w = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) == 0x80) continue;  // UTF-8 continuation byte
    w += (c >= 'A' && c <= 'Z') ? 0.72 : (c == ' ' || c == '.' || c == ',' || c == 'i' || c == 'l' || c == '1') ? 0.34 : 0.6;
  }
  return w * px;
}

struct Column {
  std::string head;
  bool right;
  double width = 0;
};

}  // namespace

std::string render_card_svg(const nlohmann::json& d, const CardText& text) {
  const auto& preds = d.at("predictions");
  std::vector<Column> cols = {{"Device", false}, {"Batch", true},  {"Latency", true}, {"Throughput", true}, {"Memory", true},
                              {"Fits", false},   {"J/sample", true}, {"gCO\xE2\x82\x82" "e/1k", true}, {"MIG", false}};
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> fits;
  std::set<std::string> predictors;
  for (const auto& p : preds) {
    std::string lat = ms(num(p.at("latency_ms")));
    double u = num(p.at("uncertainty"));
    lat += u > 0 ? " \xC2\xB1" + std::to_string(int(std::lround(u * 100))) + "%" : " \xC2\xB1?";
    std::string mig = "\xE2\x80\x93";
    if (!p.at("mig").is_null()) mig = p["mig"]["recommended"].is_null() ? "none fits" : p["mig"]["recommended"].get<std::string>();
    rows.push_back({p.at("device_name").get<std::string>(), std::to_string(p.at("batch").get<long long>()), lat,
                    rate(num(p.at("throughput_per_s"))), mib(num(p.at("peak_memory_mb"))),
                    p.at("fits").get<bool>() ? "yes" : "no", opt_num(p.at("energy_j_per_sample"), " J"),
                    opt_num(p.at("carbon_g_per_1000"), " g"), mig});
    fits.push_back(p.at("fits").get<bool>());
    predictors.insert(p["predictor"]["name"].get<std::string>() + " " + p["predictor"]["version"].get<std::string>());
  }
  const double font = 13, pad = 14, gap = 22, rowH = 22, headH = 58, theadH = 26, footH = 40;
  for (std::size_t c = 0; c < cols.size(); ++c) {
    cols[c].width = text_width(cols[c].head, 12) * 1.08;  // headers are semibold
    for (const auto& r : rows) cols[c].width = std::max(cols[c].width, text_width(r[c], font) * (c == 0 ? 1.1 : 1.0));
  }
  double tableW = 0;
  for (const auto& c : cols) tableW += c.width + gap;
  tableW -= gap;
  const std::string foot1 = "Predicted, not measured \xC2\xB7 " +
                            [&] { std::string s; for (const auto& p : predictors) s += (s.empty() ? "" : ", ") + p; return s; }() +
                            " \xC2\xB7 \xC2\xB1 = held-out error of the predictor for the device family";
  const auto& carbon = d.at("carbon");
  const std::string foot2 = "Carbon: " + carbon.at("region").get<std::string>() + ", " +
                            sig(carbon.at("grid_g_per_kwh").get<double>()) + " gCO\xE2\x82\x82" "e/kWh, PUE " +
                            sig(carbon.at("pue").get<double>()) + " \xC2\xB7 PerfCard " + text.version;
  double width = std::max({tableW, text_width(text.title, 17) + text_width(text.subtitle, 12) + 30,
                           text_width(foot1, 11), text_width(foot2, 11), 360.0}) + 2 * pad;
  width = std::ceil(width);
  const double height = headH + theadH + rowH * double(std::max<std::size_t>(rows.size(), 1)) + footH;

  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height << "\" viewBox=\"0 0 "
    << width << " " << height << "\" role=\"img\" aria-labelledby=\"t d\">\n"
    << "<title id=\"t\">PerfCard: " << esc(text.title) << "</title>\n"
    << "<desc id=\"d\">Predicted latency, throughput, memory, energy, carbon and MIG profile per device ("
    << esc(text.subtitle) << ")</desc>\n"
    << "<style>text{font-family:-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif;fill:#1b1f24}"
       ".h{font-size:17px;font-weight:700}.s{font-size:12px;fill:#545d68}.th{font-size:12px;font-weight:600;fill:#3d444d}"
       ".td{font-size:13px}.dev{font-weight:600}.yes{fill:#146c2e;font-weight:600}.no{fill:#b3261e;font-weight:600}"
       ".f{font-size:11px;fill:#545d68}</style>\n"
    << "<rect x=\"0.5\" y=\"0.5\" width=\"" << width - 1 << "\" height=\"" << height - 1
    << "\" rx=\"10\" fill=\"#ffffff\" stroke=\"#d0d7de\"/>\n"
    << "<rect x=\"" << pad << "\" y=\"16\" width=\"10\" height=\"18\" rx=\"2\" fill=\"#0b5cad\"/>\n"
    << "<text class=\"h\" x=\"" << pad + 16 << "\" y=\"31\">" << esc(text.title) << "</text>\n"
    << "<text class=\"s\" x=\"" << width - pad << "\" y=\"31\" text-anchor=\"end\">" << esc(text.subtitle) << "</text>\n"
    << "<rect x=\"1\" y=\"" << headH - 6 << "\" width=\"" << width - 2 << "\" height=\"" << theadH << "\" fill=\"#f6f7f9\"/>\n";
  auto cell = [&](double y, std::size_t c, double x, const std::string& s, const char* cls) {
    if (cols[c].right)
      o << "<text class=\"" << cls << "\" x=\"" << x + cols[c].width << "\" y=\"" << y << "\" text-anchor=\"end\">" << esc(s) << "</text>";
    else
      o << "<text class=\"" << cls << "\" x=\"" << x << "\" y=\"" << y << "\">" << esc(s) << "</text>";
  };
  double x = pad;
  for (std::size_t c = 0; c < cols.size(); ++c) {
    cell(headH + 12, c, x, cols[c].head, "th");
    x += cols[c].width + gap;
  }
  o << "\n";
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const double y = headH + theadH + rowH * double(r) + 10;
    if (r % 2 == 1)
      o << "<rect x=\"1\" y=\"" << y - 15 << "\" width=\"" << width - 2 << "\" height=\"" << rowH << "\" fill=\"#fafbfc\"/>";
    x = pad;
    for (std::size_t c = 0; c < cols.size(); ++c) {
      const char* cls = c == 0 ? "td dev" : c == 5 ? (fits[r] ? "td yes" : "td no") : "td";
      cell(y, c, x, rows[r][c], cls);
      x += cols[c].width + gap;
    }
    o << "\n";
  }
  if (rows.empty()) o << "<text class=\"td\" x=\"" << pad << "\" y=\"" << headH + theadH + 10 << "\">no predictions</text>\n";
  const double fy = height - footH + 14;
  o << "<text class=\"f\" x=\"" << pad << "\" y=\"" << fy << "\">" << esc(foot1) << "</text>\n"
    << "<text class=\"f\" x=\"" << pad << "\" y=\"" << fy + 15 << "\">" << esc(foot2) << "</text>\n"
    << "</svg>\n";
  return o.str();
}

}  // namespace perfcard::tools
