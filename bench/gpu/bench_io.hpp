// Latency summaries for the GPU benches (p50 ... max as one JSON object).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>


namespace tickinfer::benchgpu {

struct Summary {
  double p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0, mean = 0;
  size_t n = 0;
};

inline Summary summarize(std::vector<double> v) {
  Summary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, size_t(q * double(v.size())))]; };
  s.p50 = at(0.5), s.p90 = at(0.9), s.p99 = at(0.99), s.p999 = at(0.999), s.max = v.back(), s.n = v.size();
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / double(v.size());
  return s;
}

inline std::string json(const Summary& s) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "{\"n\":%zu,\"p50\":%.3f,\"p90\":%.3f,\"p99\":%.3f,\"p999\":%.3f,\"max\":%.3f,\"mean\":%.3f}",
                s.n, s.p50, s.p90, s.p99, s.p999, s.max, s.mean);
  return buf;
}

// A double as JSON can hold it: inf and NaN are not JSON (the table would drop the whole row), so
// they print as +-1e300, an excess no real reply reaches.
inline double json_finite(double v) { return std::isnan(v) ? 1e300 : std::isinf(v) ? std::copysign(1e300, v) : v; }

}  // namespace tickinfer::benchgpu
