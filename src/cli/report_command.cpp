// `tickinfer report RUN.json -o report.html`: one self-contained HTML page (inline SVG, no external
// assets, no script) from a run report written by `tickinfer run` (or `tickinfer pipeline bench
// --report`): per-stage latency percentile distribution on a log scale, p99 over time, the feed
// statistics, the signals, and the bare-hop comparison when the report carries one.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.hpp"
#include "stats/report_svg.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::cli {

using stats::esc;
using stats::fmt;
using stats::kColors;
using stats::percentile_svg;
namespace {

using nlohmann::json;

// Latency per interval over the run, log-scale y (a quiet second and a stall differ by 1000x).
std::string over_time_svg(const json& iv) {
  const double W = 940, H = 320, L = 70, R = 250, T = 20, B = 45;
  if (iv.empty()) return "<p>no intervals recorded</p>";
  const char* keys[] = {"rx_p99_ns", "e2e_p99_ns", "e2e_tx_p99_ns", "rx_p50_ns"};
  const char* names[] = {"rx->signal p99", "end-to-end p99", "end-to-end p99 (kernel TX)", "rx->signal p50"};
  double tmax = 0, ymin = 1e30, ymax = 0;
  for (const auto& x : iv) {
    tmax = std::max(tmax, x["t_s"].get<double>());
    for (const char* k : keys) {
      const double v = x.value(k, 0.0) / 1e3;  // reports from before a series existed lack its key
      if (v > 0) {
        ymin = std::min(ymin, v);
        ymax = std::max(ymax, v);
      }
    }
  }
  if (ymax <= 0) return "<p>no signals in any interval</p>";
  const double ly0 = std::floor(std::log10(ymin)), ly1 = std::max(std::ceil(std::log10(ymax)), ly0 + 1);
  auto X = [&](double t) { return L + t / std::max(tmax, 1e-9) * (W - L - R); };
  auto Y = [&](double us) { return T + (ly1 - std::log10(std::max(us, 1e-3))) / (ly1 - ly0) * (H - T - B); };
  std::ostringstream o;
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << W << "' height='" << H << "' font-family='sans-serif' font-size='11'>";
  o << "<rect x='" << L << "' y='" << T << "' width='" << W - L - R << "' height='" << H - T - B << "' fill='#fafafa' stroke='#999'/>";
  for (double e = ly0; e <= ly1; e += 1) {
    const double y = Y(std::pow(10.0, e));
    o << "<line x1='" << L << "' y1='" << y << "' x2='" << W - R << "' y2='" << y << "' stroke='#ddd'/>";
    o << "<text x='" << L - 6 << "' y='" << y + 4 << "' text-anchor='end'>" << fmt(std::pow(10.0, e), e < 0 ? 2 : 0) << " us</text>";
  }
  for (int i = 0; i <= 5; ++i) {
    const double t = tmax * i / 5;
    o << "<text x='" << X(t) << "' y='" << H - B + 15 << "' text-anchor='middle'>" << fmt(t, 1) << " s</text>";
  }
  o << "<text x='" << (L + W - R) / 2 << "' y='" << H - 10 << "' text-anchor='middle'>time since the run started (end of each interval)</text>";
  for (int k = 0; k < 4; ++k) {
    bool any = false;
    for (const auto& x : iv) any = any || x.value(keys[k], 0.0) > 0;
    if (!any) continue;
    o << "<polyline fill='none' stroke='" << kColors[k] << "' stroke-width='1.8' points='";
    for (const auto& x : iv) {
      const double v = x.value(keys[k], 0.0) / 1e3;
      if (v > 0) o << fmt(X(x["t_s"].get<double>()), 1) << "," << fmt(Y(v), 1) << " ";
    }
    o << "'/><text x='" << W - R + 10 << "' y='" << T + 14 + 16 * k << "' fill='" << kColors[k] << "'>" << names[k] << "</text>";
  }
  o << "</svg>";
  return o.str();
}

std::string stage_table(const json& stages) {
  std::ostringstream o;
  o << "<table><tr><th>stage</th><th>kind</th><th>samples</th><th>p50 us</th><th>p95 us</th><th>p99 us</th><th>p99.9 us</th><th>max us</th></tr>";
  for (const auto& s : stages) {
    const std::string name = s["stage"];
    const char* kind = s["compute"].get<bool>() ? "compute" : (name == "rx_to_signal" || name == "end_to_end" || name == "rx_to_tx" || name == "end_to_end_tx" ? "total" : (name == "queue" ? "queue" : "network"));
    o << "<tr><td>" << esc(name) << "</td><td>" << kind << "</td><td>" << s["count"].get<long long>() << "</td>";
    for (const char* k : {"p50_ns", "p95_ns", "p99_ns", "p999_ns", "max_ns"}) o << "<td>" << fmt(s[k].get<double>() / 1e3) << "</td>";
    o << "</tr>";
  }
  o << "</table>";
  return o.str();
}

std::string kv_table(const json& obj) {
  std::ostringstream o;
  o << "<table>";
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (it.value().is_object() || (it.value().is_array() && !it.value().empty() && it.value()[0].is_object())) continue;
    o << "<tr><td>" << esc(it.key()) << "</td><td>" << esc(it.value().dump()) << "</td></tr>";
  }
  o << "</table>";
  return o.str();
}

}  // namespace

ArgParser report_parser() {
  ArgParser p("report", "render a run report (JSON from `tickinfer run`) as an HTML page with inline SVG");
  p.positional("RUN", "run statistics JSON ([run] report / --report)");
  p.option("output", "FILE", "HTML file to write (-o FILE works too)", "report.html");
  return p;
}

int run_report(const ArgParser& a) {
  const std::string in = a.positional_value("RUN");
  const std::string out = a.value("output");
  std::ifstream f(in);
  if (!f) throw Error("run report '" + in + "': cannot open");
  json j;
  try {
    j = json::parse(f);
  } catch (const std::exception& e) {
    throw Error("run report '" + in + "': not valid JSON: " + e.what());
  }
  if (!j.is_object() || j.value("format", "") != "tickinfer-run-1" || !j.contains("stages") || !j.contains("totals"))
    throw Error("run report '" + in + "': not a tickinfer run report (format tickinfer-run-1)");
  std::ostringstream h;
  const auto& t = j["totals"];
  h << "<!DOCTYPE html><html><head><meta charset='utf-8'><title>tickinfer run report</title><style>"
       "body{font-family:sans-serif;max-width:1000px;margin:20px auto;color:#222}"
       "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
       "td:first-child,th:first-child{text-align:left}h2{margin-top:28px}.bad{color:#b00}.ok{color:#070}"
       "</style></head><body>";
  h << "<h1>tickinfer run report</h1><p>" << esc(j["config"].value("source", "")) << " on " << esc(j.value("host", ""))
    << ": " << t["events"].get<long long>() << " ticks in " << fmt(t["seconds"].get<double>(), 1) << " s ("
    << fmt(t["ticks_per_second"].get<double>(), 0) << " ticks/s), " << t["signals"].get<long long>() << " signals, "
    << j["config"].value("threading", "") << " threading. State: "
    << (t["degraded"].get<bool>() ? "<b class='bad'>DEGRADED: " + esc(t["degraded_reason"].get<std::string>()) + "</b>"
                                  : std::string("<b class='ok'>ok</b>"))
    << ". Allocations in steady state: " << t["allocations_in_steady_state"].get<long long>() << ".</p>";
  if (j.contains("bench") && j["bench"].contains("bare_hop")) {
    const auto& b = j["bench"];
    h << "<h2>Against the floor: bare UDP loopback hop, same run</h2><table><tr><th>path</th><th>samples</th><th>p50 us</th>"
         "<th>p99 us</th><th>p99.9 us</th><th>max us</th><th>bar: p99 &le; bare p99 + 10 us</th></tr>";
    auto brow = [&](const std::string& name, const json& x, const std::string& verdict) {
      h << "<tr><td>" << esc(name) << "</td><td>" << x["count"].get<long long>() << "</td>";
      for (const char* k : {"p50_ns", "p99_ns", "p999_ns", "max_ns"}) h << "<td>" << fmt(x[k].get<double>() / 1e3) << "</td>";
      h << "<td>" << verdict << "</td></tr>";
    };
    brow("bare hop: exchange send -> user", b["bare_hop"], "");
    for (auto it = b["modes"].begin(); it != b["modes"].end(); ++it) {
      // The bar is judged at the kernel's transmit stamp of the signal where the run has one.
      const std::string verdict =
          it.value()["pass"].get<bool>() ? "<span class='ok'>PASS</span>" : "<span class='bad'>FAIL</span>";
      const bool at_tx = it.value().value("bar_at", "") == "kernel_tx";
      if (at_tx) brow("pipeline " + it.key() + ": exchange send -> kernel TX of the signal", it.value()["end_to_end_tx"], verdict);
      brow("pipeline " + it.key() + ": exchange send -> send() returned", it.value()["end_to_end"], at_tx ? "" : verdict);
    }
    h << "</table>";
    if (b.contains("cpu_stops") && !b["cpu_stops"].empty()) {
      // The machine's own stops of a busy core (tickinfer pipeline bench --stall-probe).
      h << "<p>Core stops measured before the run (clock-read gaps &gt; 1 us while spinning):";
      for (const auto& s : b["cpu_stops"])
        h << " cpu " << s["cpu"].get<int>() << ": " << fmt(s["per_second"].get<double>(), 0) << "/s, "
          << fmt(100 * s["fraction"].get<double>()) << " % of the time, p50 " << fmt(s["p50_ns"].get<double>() / 1e3)
          << " us;";
      for (auto it = b["modes"].begin(); it != b["modes"].end(); ++it)
        if (it.value().contains("stop_exposure") && it.value()["stop_exposure"].is_object())
          h << " packets whose path a stop overlaps: bare hop " << fmt(100 * it.value()["stop_exposure"]["bare"].get<double>())
            << " %, pipeline " << it.key() << " " << fmt(100 * it.value()["stop_exposure"]["pipeline"].get<double>()) << " %;";
      h << " above 1 %, a path's p99 carries such a stop.</p>";
    }
  }
  h << "<h2>Latency per stage</h2>" << stage_table(j["stages"]);
  h << "<p>network/queue stages (wire, receive, queue) are separated from compute (features, model, signal); "
       "wire and end_to_end need the exchange to stamp its send time on this host's clock. rx_to_tx and end_to_end_tx end at "
       "the kernel's transmit stamp of the signal's UDP datagram (the hand-off to the device); rx_to_signal and "
       "end_to_end at the return of send(), which on loopback also covers the receiving socket's stack.</p>";
  h << "<h2>Percentile distribution per stage</h2>" << percentile_svg(j["stages"]);
  h << "<h2>Latency over time (per " << fmt(j.value("status_interval_s", 1.0), 1) << " s interval)</h2>" << over_time_svg(j["intervals"]);
  h << "<h2>Feed</h2>" << kv_table(j["feed"]);
  if (j["feed"].contains("lines")) {
    h << "<table><tr><th>line</th><th>packets</th><th>messages</th><th>missed</th><th>duplicate pkts</th><th>reordered pkts</th><th>led</th></tr>";
    for (const auto& l : j["feed"]["lines"])
      h << "<tr><td>" << esc(l["line"].get<std::string>()) << "</td><td>" << l["packets"] << "</td><td>" << l["messages"]
        << "</td><td>" << l["lost_messages"] << "</td><td>" << l["duplicate_packets"] << "</td><td>" << l["reordered_packets"]
        << "</td><td>" << l["led"] << "</td></tr>";
    h << "</table>";
  }
  if (j.contains("books") && !j["books"].empty()) {  // ITCH: each symbol's book at the end
    h << "<h2>Books</h2><table><tr><th>symbol</th><th>instrument</th><th>in sync</th><th>bid levels</th><th>ask levels</th>"
         "<th>orders</th><th>integrity counts not 0</th></tr>";
    for (const auto& b : j["books"]) {
      std::string bad;
      for (const auto& [name, v] : b["integrity"].items())
        if (v.get<long long>() != 0) bad += (bad.empty() ? "" : ", ") + name + " " + v.dump();
      h << "<tr><td>" << esc(b["symbol"].get<std::string>()) << "</td><td>" << b["instrument"] << "</td><td>"
        << (!b["seen"].get<bool>() ? "never seen" : b["synced"].get<bool>() ? "yes" : "NO") << "</td><td>"
        << b["bid_levels"] << "</td><td>" << b["ask_levels"] << "</td><td>" << b["orders"] << "</td><td>"
        << esc(bad.empty() ? "none" : bad) << "</td></tr>";
    }
    h << "</table>";
  }
  h << "<h2>Signals</h2><table><tr><th>model</th><th>version</th><th>signals</th><th>long</th><th>short</th><th>flat</th>"
       "<th>score min</th><th>mean</th><th>max</th></tr>";
  for (const auto& m : j["models"])
    h << "<tr><td>" << esc(m["name"].get<std::string>()) << "</td><td>" << m["version"] << "</td><td>" << m["runs"] << "</td><td>"
      << m["long"] << "</td><td>" << m["short"] << "</td><td>" << m["flat"] << "</td><td>" << fmt(m["score_min"].get<double>(), 4)
      << "</td><td>" << fmt(m["score_mean"].get<double>(), 4) << "</td><td>" << fmt(m["score_max"].get<double>(), 4) << "</td></tr>";
  h << "</table><h2>Run</h2>" << kv_table(t) << kv_table(j["config"]) << "</body></html>\n";
  std::ofstream o(out);
  if (!o) throw Error("report '" + out + "': cannot create");
  o << h.str();
  std::printf("report: %s\n", out.c_str());
  return 0;
}

}  // namespace tickinfer::cli
