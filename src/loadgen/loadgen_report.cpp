// tickinfer loadgen's reports (loadgen.hpp): the percentile table, the JSON of a run, the .hgrm
// percentile distribution, and the comparison of two runs.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "loadgen/loadgen.hpp"
#include "stats/report_svg.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::loadgen {

using stats::esc;
using stats::percentile_svg;

namespace {

using nlohmann::json;

constexpr double kPercentiles[] = {50, 95, 99, 99.9, 100};
const char* const kNames[] = {"p50", "p95", "p99", "p99.9", "max"};

// The percentile curve for the plot: 10 points per decade of 1/(1-p) up to 99.999 %, then 100.
json curve(const stats::LatencyHistogram& h) {
  json c = json::array();
  if (h.count() == 0) return c;
  for (int i = 0; i <= 50; ++i) {
    const double p = 100.0 * (1.0 - std::pow(10.0, -i / 10.0));
    c.push_back({p, h.value_at_percentile(p)});
  }
  c.push_back({100.0, h.max()});
  return c;
}

json summary(const stats::LatencyHistogram& h) {
  json j;
  j["count"] = h.count();
  j["curve"] = curve(h);
  j["max_ns"] = h.max();
  j["mean_us"] = h.mean() / 1e3;
  for (size_t i = 0; i < 5; ++i) j[std::string(kNames[i]) + "_us"] = static_cast<double>(h.value_at_percentile(kPercentiles[i])) / 1e3;
  return j;
}

std::string row(const char* name, const stats::LatencyHistogram& h) {
  char b[256];
  std::snprintf(b, sizeof b, "%-26s %10lld %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f\n", name,
                static_cast<long long>(h.count()), h.mean() / 1e3, h.value_at_percentile(50) / 1e3,
                h.value_at_percentile(95) / 1e3, h.value_at_percentile(99) / 1e3, h.value_at_percentile(99.9) / 1e3,
                static_cast<double>(h.max()) / 1e3);
  return b;
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("loadgen --compare: cannot read '" + path + "'");
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw Error("loadgen --compare: '" + path + "' is not a loadgen result (" + e.what() + ")");
  }
}

}  // namespace

std::string result_table(const LoadResult& r, bool open_loop) {
  char head[256];
  std::snprintf(head, sizeof head, "%-26s %10s %10s %10s %10s %10s %10s %10s\n", "latency (us)", "requests", "mean",
                "p50", "p95", "p99", "p99.9", "max");
  std::string out = head;
  if (open_loop) {
    out += row("total (from due time)", r.total);
    out += row("service (sent -> answer)", r.service);
    out += row("queue (due -> sent)", r.queue);
  } else {
    out += row("service (sent -> answer)", r.service);
  }
  char tail[256];
  std::snprintf(tail, sizeof tail, "%llu ok, %llu errors, %llu connections broken, %.0f requests/s over %.2f s\n",
                static_cast<unsigned long long>(r.ok), static_cast<unsigned long long>(r.errors),
                static_cast<unsigned long long>(r.broken_connections),
                r.seconds > 0 ? static_cast<double>(r.ok + r.errors) / r.seconds : 0.0, r.seconds);
  return out + tail;
}

std::string result_json(const LoadResult& r, const LoadOptions& o, const std::string& target) {
  json j;
  j["target"] = target;
  j["mode"] = o.rate > 0 ? "open" : "closed";
  j["workers"] = o.workers;
  if (o.rate > 0) {
    j["rate"] = o.rate;
    j["seconds"] = o.seconds;
  } else {
    j["requests_per_worker"] = o.requests_per_worker;
  }
  j["ok"] = r.ok;
  j["errors"] = r.errors;
  j["broken_connections"] = r.broken_connections;
  j["measured_seconds"] = r.seconds;
  j["total"] = summary(r.total);
  j["service"] = summary(r.service);
  j["queue"] = summary(r.queue);
  return j.dump(1);
}

// HdrHistogram's percentile distribution, as its outputPercentileDistribution (5 ticks per
// half-distance) and wrk2 write it: values in ms, the count at or below each, 1/(1-percentile).
std::string hgrm(const stats::LatencyHistogram& h, double stddev_ns) {
  std::ostringstream o;
  o << "       Value     Percentile TotalCount 1/(1-Percentile)\n\n";
  const double n = static_cast<double>(h.count());
  char b[160];
  if (h.count() > 0) {
    double p = 0;
    while (p < 1 - 0.5 / n) {
      const double v = static_cast<double>(h.value_at_percentile(p * 100)) / 1e6;
      std::snprintf(b, sizeof b, "%12.3f %14.12f %10.0f %14.2f\n", v, p, std::max(1.0, std::ceil(p * n)), 1 / (1 - p));
      o << b;
      // Level L = floor(log2(1 / (1 - p))): ticks of 1 / (5 * 2^(L + 1)).
      const double level = std::floor(std::log2(1 / (1 - p)));
      p += 1 / (5 * std::pow(2.0, level + 1));
    }
    std::snprintf(b, sizeof b, "%12.3f %14.12f %10.0f\n", static_cast<double>(h.max()) / 1e6, 1.0, n);
    o << b;
  }
  std::snprintf(b, sizeof b, "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n#[Max     = %12.3f, Total count    = %12lld]\n",
                h.mean() / 1e6, stddev_ns / 1e6, static_cast<double>(h.max()) / 1e6, static_cast<long long>(h.count()));
  o << b;
  return o.str();
}

namespace {

std::string page(const std::string& title, const std::string& pre, const json& series) {
  std::ostringstream h;
  h << "<!doctype html><html><head><meta charset='utf-8'><title>" << esc(title) << "</title>"
    << "<style>body{font-family:sans-serif;margin:24px}pre{background:#f4f4f4;padding:10px}</style></head><body>"
    << "<h1>" << esc(title) << "</h1><pre>" << esc(pre) << "</pre><h2>Percentile distribution</h2>"
    << percentile_svg(series) << "</body></html>\n";
  return h.str();
}

json series_of(const json& run, const std::string& prefix) {
  json s = json::array();
  const bool open = run.value("mode", "") == "open";
  for (const char* part : {"total", "service", "queue"}) {
    if (!open && std::string(part) != "service") continue;
    if (!run.contains(part) || run[part].value("count", 0) == 0) continue;
    s.push_back({{"stage", prefix + part}, {"curve", run[part]["curve"]}, {"max_ns", run[part].value("max_ns", 0)}});
  }
  return s;
}

}  // namespace

std::string result_html(const LoadResult& r, const LoadOptions& o, const std::string& target) {
  const json run = json::parse(result_json(r, o, target));
  return page("tickinfer loadgen: " + target, result_table(r, o.rate > 0), series_of(run, ""));
}

std::string compare_html(const std::string& a_path, const std::string& b_path) {
  const json a = read_json(a_path), b = read_json(b_path);
  json series = series_of(a, "A ");
  for (auto& x : series_of(b, "B ")) series.push_back(x);
  return page("tickinfer loadgen: " + a_path + " (A) vs " + b_path + " (B)", compare_results(a_path, b_path), series);
}

std::string compare_results(const std::string& a_path, const std::string& b_path) {
  const json a = read_json(a_path), b = read_json(b_path);
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "A: %s (%s, %s)\nB: %s (%s, %s)\n", a_path.c_str(), a.value("target", "?").c_str(),
                a.value("mode", "?").c_str(), b_path.c_str(), b.value("target", "?").c_str(), b.value("mode", "?").c_str());
  out += line;
  // Closed loop has no queue (each request leaves when the previous answer is in): service only.
  const bool open = a.value("mode", "") == "open" || b.value("mode", "") == "open";
  for (const char* part : {"total", "service", "queue"}) {
    if (!open && std::string(part) != "service") continue;
    if (!a.contains(part) || !b.contains(part)) continue;
    if (a[part].value("count", 0) == 0 && b[part].value("count", 0) == 0) continue;
    std::snprintf(line, sizeof line, "\n%-8s %12s %12s %8s\n", part, "A us", "B us", "B / A");
    out += line;
    for (const char* p : kNames) {
      const std::string k = std::string(p) + "_us";
      const double va = a[part].value(k, 0.0), vb = b[part].value(k, 0.0);
      std::snprintf(line, sizeof line, "%-8s %12.1f %12.1f %8.2f\n", p, va, vb, va > 0 ? vb / va : 0.0);
      out += line;
    }
  }
  std::snprintf(line, sizeof line, "\nerrors: A %lld, B %lld\n", static_cast<long long>(a.value("errors", 0)),
                static_cast<long long>(b.value("errors", 0)));
  return out + line;
}

}  // namespace tickinfer::loadgen
