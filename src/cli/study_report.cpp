#include "cli/study_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "stats/report_svg.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::cli {

using stats::esc;
using stats::fmt;
using stats::kColors;

namespace {

double metric_of(const StudyRow& r, bool direction) { return direction ? r.auc : r.mse; }

std::string zeros_text(const StudyRow& r) {
  return r.params ? fmt(100.0 * static_cast<double>(r.zeros) / static_cast<double>(r.params), 0) + "%" : "";
}

// Scatter of (p50 latency, metric), the front joined by a line, the knee ringed.
std::string scatter_svg(const std::vector<StudyRow>& rows, bool direction) {
  const double W = 720, H = 420, L = 70, R = 20, T = 20, B = 50;
  double x0 = 1e300, x1 = 0, y0 = 1e300, y1 = -1e300;
  for (const auto& r : rows) {
    x0 = std::min(x0, r.p50_ns), x1 = std::max(x1, r.p50_ns);
    y0 = std::min(y0, metric_of(r, direction)), y1 = std::max(y1, metric_of(r, direction));
  }
  if (x1 <= x0) x1 = x0 + 1;
  if (y1 <= y0) y1 = y0 + 1e-3;
  const double lx0 = std::log10(x0 * 0.9), lx1 = std::log10(x1 * 1.1), pad = (y1 - y0) * 0.1;
  auto X = [&](double ns) { return L + (std::log10(ns) - lx0) / (lx1 - lx0) * (W - L - R); };
  auto Y = [&](double m) { return H - B - (m - (y0 - pad)) / ((y1 + pad) - (y0 - pad)) * (H - T - B); };
  std::ostringstream s;
  s << "<svg xmlns='http://www.w3.org/2000/svg' width='" << W << "' height='" << H << "' font-family='sans-serif' "
    << "font-size='11'>\n<rect width='100%' height='100%' fill='white'/>\n";
  s << "<line x1='" << L << "' y1='" << H - B << "' x2='" << W - R << "' y2='" << H - B << "' stroke='#444'/>\n";
  s << "<line x1='" << L << "' y1='" << T << "' x2='" << L << "' y2='" << H - B << "' stroke='#444'/>\n";
  s << "<text x='" << (L + W - R) / 2 << "' y='" << H - 12 << "' text-anchor='middle'>batch-1 p50 latency (us, log)</text>\n";
  s << "<text x='16' y='" << (T + H - B) / 2 << "' transform='rotate(-90 16 " << (T + H - B) / 2
    << ")' text-anchor='middle'>" << (direction ? "validation AUC" : "validation MSE (lower is better)") << "</text>\n";
  for (int d = static_cast<int>(std::floor(lx0)); d <= static_cast<int>(std::ceil(lx1)); ++d) {
    for (int m : {1, 2, 5}) {
      const double ns = m * std::pow(10.0, d);
      if (std::log10(ns) < lx0 || std::log10(ns) > lx1) continue;
      s << "<text x='" << X(ns) << "' y='" << H - B + 14 << "' text-anchor='middle'>" << fmt(ns / 1000.0, 2) << "</text>\n";
    }
  }
  for (int i = 0; i <= 4; ++i) {
    const double m = y0 + (y1 - y0) * i / 4;
    s << "<text x='" << L - 6 << "' y='" << Y(m) + 4 << "' text-anchor='end'>" << fmt(m, 4) << "</text>\n";
  }
  std::vector<const StudyRow*> front;
  for (const auto& r : rows) {
    if (r.on_front) front.push_back(&r);
  }
  std::sort(front.begin(), front.end(), [](const StudyRow* a, const StudyRow* b) { return a->p50_ns < b->p50_ns; });
  s << "<polyline fill='none' stroke='#888' stroke-dasharray='4 3' points='";
  for (const StudyRow* r : front) s << X(r->p50_ns) << "," << Y(metric_of(*r, direction)) << " ";
  s << "'/>\n";
  std::vector<std::string> candidates;
  for (const auto& r : rows) {
    if (std::find(candidates.begin(), candidates.end(), r.candidate) == candidates.end()) candidates.push_back(r.candidate);
  }
  for (const auto& r : rows) {
    const size_t c = static_cast<size_t>(std::find(candidates.begin(), candidates.end(), r.candidate) - candidates.begin());
    const double cx = X(r.p50_ns), cy = Y(metric_of(r, direction));
    s << "<circle cx='" << cx << "' cy='" << cy << "' r='4' fill='" << kColors[c % 8] << "'><title>" << esc(r.candidate)
      << " " << esc(r.variant) << "</title></circle>\n";
    if (r.knee) {
      s << "<circle cx='" << cx << "' cy='" << cy << "' r='9' fill='none' stroke='black'/>\n<text x='" << cx + 11
        << "' y='" << cy - 6 << "'>knee: " << esc(r.variant) << "</text>\n";
    }
  }
  for (size_t c = 0; c < candidates.size(); ++c) {
    s << "<circle cx='" << W - R - 250 << "' cy='" << T + 12 + 16 * c << "' r='4' fill='" << kColors[c % 8]
      << "'/><text x='" << W - R - 240 << "' y='" << T + 16 + 16 * c << "'>" << esc(candidates[c]) << "</text>\n";
  }
  s << "</svg>\n";
  return s.str();
}

}  // namespace

std::string study_table(const std::vector<StudyRow>& rows, bool direction) {
  std::ostringstream s;
  s << "| candidate | variant | params | zeros | p50 us | p99 us | max us | "
    << (direction ? "AUC | accuracy |" : "MSE |") << " |\n|---|---|---:|---:|---:|---:|---:|"
    << (direction ? "---:|---:|" : "---:|") << "---|\n";
  for (const auto& r : rows) {
    s << "| " << r.candidate << " | " << r.variant << " | " << r.params << " | " << zeros_text(r) << " | "
      << fmt(r.p50_ns / 1e3, 3) << " | " << fmt(r.p99_ns / 1e3, 3) << " | " << fmt(r.max_ns / 1e3, 1)
      << " | ";
    if (direction) {
      s << fmt(r.auc, 4) << " | " << fmt(r.accuracy, 4) << " | ";
    } else {
      s << fmt(r.mse, 6) << " | ";
    }
    s << (r.on_front ? "*" : "") << (r.knee ? " <= knee" : "") << " |\n";
  }
  return s.str();
}

nlohmann::json study_json(const std::vector<StudyRow>& rows, bool direction) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json o = {{"candidate", r.candidate}, {"variant", r.variant}, {"params", r.params},
                        {"zero_weights", r.zeros}, {"p50_ns", r.p50_ns}, {"p99_ns", r.p99_ns},
                        {"max_ns", r.max_ns}, {"pareto", r.on_front}, {"knee", r.knee}};
    if (direction) {
      o["auc"] = r.auc;
      o["accuracy"] = r.accuracy;
    } else {
      o["mse"] = r.mse;
    }
    j.push_back(std::move(o));
  }
  return {{"order", "structure, then pruning, then quantization"}, {"variants", j}};
}

void write_study_html(const std::string& path, const std::vector<StudyRow>& rows, bool direction) {
  std::ofstream f(path);
  if (!f) throw Error("--html: cannot write '" + path + "'");
  f << "<!doctype html><html><head><meta charset='utf-8'><title>tickinfer study</title>"
    << "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
    << "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:nth-child(-n+2){text-align:left}</style>"
    << "</head><body><h1>tickinfer study</h1>"
    << "<p>Order applied: structure (the candidates), then pruning, then quantization. Latency: batch 1 on "
       "tickinfer's engine, this machine, interleaved rounds; * = on the Pareto front.</p>\n"
    << scatter_svg(rows, direction) << "<table><tr><th>candidate</th><th>variant</th><th>params</th><th>zeros</th>"
    << "<th>p50 us</th><th>p99 us</th><th>max us</th>" << (direction ? "<th>AUC</th><th>accuracy</th>" : "<th>MSE</th>")
    << "<th></th></tr>\n";
  for (const auto& r : rows) {
    f << "<tr><td>" << esc(r.candidate) << "</td><td>" << esc(r.variant) << "</td><td>" << r.params << "</td><td>"
      << zeros_text(r) << "</td><td>" << fmt(r.p50_ns / 1e3, 3) << "</td><td>" << fmt(r.p99_ns / 1e3, 3)
      << "</td><td>" << fmt(r.max_ns / 1e3, 1) << "</td>";
    if (direction) {
      f << "<td>" << fmt(r.auc, 4) << "</td><td>" << fmt(r.accuracy, 4) << "</td>";
    } else {
      f << "<td>" << fmt(r.mse, 6) << "</td>";
    }
    f << "<td>" << (r.on_front ? "*" : "") << (r.knee ? " knee" : "") << "</td></tr>\n";
  }
  f << "</table></body></html>\n";
}

}  // namespace tickinfer::cli
