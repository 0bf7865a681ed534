#pragma once
// What the HTML pages of `tickinfer report` and `tickinfer loadgen --html` share: the palette,
// HTML escaping, number formatting, and the log-log percentile plot.
#include <nlohmann/json.hpp>
#include <string>

namespace tickinfer::stats {

extern const char* const kColors[8];
std::string esc(const std::string& s);
std::string fmt(double v, int prec = 2);
// Log-log percentile plot: x = 1/(1-p) (decades: 50%, 90%, 99%, ...), y = latency in us (log).
// series: [{"stage": label, "curve": [[percentile, ns], ...], "max_ns": ns}, ...].
std::string percentile_svg(const nlohmann::json& series);

}  // namespace tickinfer::stats
