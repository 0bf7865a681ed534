#include "stats/report_svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace tickinfer::stats {

using nlohmann::json;

const char* const kColors[8] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"};

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '&') o += "&amp;";
    else if (c == '"') o += "&quot;";
    else o += c;
  }
  return o;
}

std::string fmt(double v, int prec) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}

std::string percentile_svg(const json& stages) {
  const double W = 940, H = 420, L = 70, R = 250, T = 20, B = 50;
  double ymin = 1e30, ymax = 0;
  for (const auto& s : stages)
    for (const auto& pt : s["curve"]) {
      const double v = std::max(pt[1].get<double>(), 10.0) / 1e3;
      ymin = std::min(ymin, v);
      ymax = std::max(ymax, v);
    }
  if (ymax <= 0) return "<p>no samples</p>";
  const double ly0 = std::floor(std::log10(ymin)), ly1 = std::ceil(std::log10(ymax));
  const double lx1 = 6;  // up to 99.9999%
  auto X = [&](double p) {
    const double q = std::min(std::max(1.0 - p / 100.0, 1e-6), 1.0);
    return L + (-std::log10(q)) / lx1 * (W - L - R);
  };
  auto Y = [&](double us) { return T + (ly1 - std::log10(std::max(us, 1e-3))) / std::max(ly1 - ly0, 1.0) * (H - T - B); };
  std::ostringstream o;
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << W << "' height='" << H << "' font-family='sans-serif' font-size='11'>";
  o << "<rect x='" << L << "' y='" << T << "' width='" << W - L - R << "' height='" << H - T - B << "' fill='#fafafa' stroke='#999'/>";
  const char* xl[] = {"0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"};
  for (int d = 0; d <= 6; ++d) {
    const double x = L + d / lx1 * (W - L - R);
    o << "<line x1='" << x << "' y1='" << T << "' x2='" << x << "' y2='" << H - B << "' stroke='#ddd'/>";
    o << "<text x='" << x << "' y='" << H - B + 15 << "' text-anchor='middle'>" << xl[d] << "</text>";
  }
  for (double e = ly0; e <= ly1; e += 1) {
    const double y = Y(std::pow(10.0, e));
    o << "<line x1='" << L << "' y1='" << y << "' x2='" << W - R << "' y2='" << y << "' stroke='#ddd'/>";
    o << "<text x='" << L - 6 << "' y='" << y + 4 << "' text-anchor='end'>" << fmt(std::pow(10.0, e), e < 0 ? 2 : 0) << " us</text>";
  }
  o << "<text x='" << (L + W - R) / 2 << "' y='" << H - 12 << "' text-anchor='middle'>percentile (log scale of 1/(1-p))</text>";
  int k = 0;
  for (const auto& s : stages) {
    if (s["curve"].empty()) continue;
    const char* col = kColors[k % 8];
    o << "<polyline fill='none' stroke='" << col << "' stroke-width='1.8' points='";
    for (const auto& pt : s["curve"]) {
      const double p = pt[0].get<double>();
      if (p >= 100.0) continue;
      o << fmt(X(p), 1) << "," << fmt(Y(pt[1].get<double>() / 1e3), 1) << " ";
    }
    o << "'/>";
    o << "<text x='" << W - R + 10 << "' y='" << T + 14 + 16 * k << "' fill='" << col << "'>" << esc(s["stage"].get<std::string>())
      << " (max " << fmt(s["max_ns"].get<double>() / 1e3, 1) << " us)</text>";
    ++k;
  }
  o << "</svg>";
  return o.str();
}

}  // namespace tickinfer::stats
