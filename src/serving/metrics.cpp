#include "serving/metrics.hpp"

#include <charconv>
#include <cmath>

namespace tickinfer::serving {

const char* status_code_name(StatusCode c) {
  static const char* const names[] = {
      "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
      "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
      "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
      "UNAUTHENTICATED"};
  const auto i = static_cast<size_t>(c);
  return i < 17 ? names[i] : "UNKNOWN";
}

int http_status_for(StatusCode c) {
  switch (c) {
    case StatusCode::Ok: return 200;
    case StatusCode::Cancelled: return 499;
    case StatusCode::InvalidArgument: return 400;
    case StatusCode::DeadlineExceeded: return 504;
    case StatusCode::NotFound: return 404;
    case StatusCode::AlreadyExists: return 409;
    case StatusCode::PermissionDenied: return 403;
    case StatusCode::ResourceExhausted: return 429;
    case StatusCode::FailedPrecondition: return 400;
    case StatusCode::Aborted: return 409;
    case StatusCode::OutOfRange: return 400;
    case StatusCode::Unimplemented: return 501;
    case StatusCode::Unavailable: return 503;
    case StatusCode::Unauthenticated: return 401;
    default: return 500;
  }
}

std::vector<double> AtomicHistogram::exponential(double start, double factor, int count) {
  std::vector<double> b;
  double v = start;
  for (int i = 0; i < count; ++i) {
    b.push_back(v);
    v *= factor;
  }
  return b;
}

AtomicHistogram::AtomicHistogram(std::vector<double> bounds_us)
    : bounds_(std::move(bounds_us)), counts_(new std::atomic<uint64_t>[bounds_.size() + 1]) {
  for (size_t i = 0; i <= bounds_.size(); ++i) counts_[i].store(0, std::memory_order_relaxed);
}

void AtomicHistogram::record_us(double us) noexcept {
  if (!(us >= 0)) us = 0;
  // Few buckets and they are ordered: a linear scan from the bottom is a handful of compares for
  // the latencies seen here.
  size_t i = 0;
  while (i < bounds_.size() && us > bounds_[i]) ++i;
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  total_.fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(static_cast<uint64_t>(us * 1000.0), std::memory_order_relaxed);
}

static void append_number(std::string& out, double v) {
  if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
    return;
  }
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

static void append_uint(std::string& out, uint64_t v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void AtomicHistogram::append_text(std::string& out, const std::string& name,
                                  const std::string& labels) const {
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i].load(std::memory_order_relaxed);
    out += name + "_bucket{" + labels + ",le=\"";
    append_number(out, i < bounds_.size() ? bounds_[i] : INFINITY);
    out += "\"} ";
    append_uint(out, cumulative);
    out += '\n';
  }
  out += name + "_sum{" + labels + "} ";
  append_number(out, static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1000.0);
  out += '\n';
  // _count equals the +Inf bucket (read once above) so the exposition is self-consistent even
  // while writers run.
  out += name + "_count{" + labels + "} ";
  append_uint(out, cumulative);
  out += '\n';
}

ModelMetrics::ModelMetrics(std::string model_name)
    : name(std::move(model_name)),
      latency{AtomicHistogram(AtomicHistogram::exponential(10, 1.8, 33)),
              AtomicHistogram(AtomicHistogram::exponential(10, 1.8, 33))},
      queue{AtomicHistogram(AtomicHistogram::exponential(1, 2, 24)),
            AtomicHistogram(AtomicHistogram::exponential(1, 2, 24))},
      compute{AtomicHistogram(AtomicHistogram::exponential(1, 2, 24)),
              AtomicHistogram(AtomicHistogram::exponential(1, 2, 24))},
      example_latency{{AtomicHistogram(AtomicHistogram::exponential(10, 1.8, 33)),
                       AtomicHistogram(AtomicHistogram::exponential(10, 1.8, 33))},
                      {AtomicHistogram(AtomicHistogram::exponential(10, 1.8, 33)),
                       AtomicHistogram(AtomicHistogram::exponential(10, 1.8, 33))},
                      {AtomicHistogram(AtomicHistogram::exponential(10, 1.8, 33)),
                       AtomicHistogram(AtomicHistogram::exponential(10, 1.8, 33))}} {
  for (auto& c : count_by_status) c.store(0, std::memory_order_relaxed);
}

Metrics::Metrics(const std::vector<std::string>& model_names) {
  slots_ = std::make_unique<std::unique_ptr<ModelMetrics>[]>(kMaxModels + 1);
  slots_[0] = std::make_unique<ModelMetrics>("");
  size_t n = 1;
  for (const auto& name : model_names)
    if (n <= kMaxModels) slots_[n++] = std::make_unique<ModelMetrics>(name);
  count_.store(n, std::memory_order_release);
}

ModelMetrics& Metrics::for_model(const std::string& name) noexcept {
  const size_t n = count_.load(std::memory_order_acquire);
  for (size_t i = 1; i < n; ++i) {
    if (slots_[i]->name == name) return *slots_[i];
  }
  return *slots_[0];
}

// One writer (the repository, under its poll mutex); readers see a slot only after it is built.
ModelMetrics& Metrics::add_model(const std::string& name) {
  const size_t n = count_.load(std::memory_order_relaxed);
  for (size_t i = 1; i < n; ++i)
    if (slots_[i]->name == name) return *slots_[i];  // removed once and added again: same series
  if (n > kMaxModels) return *slots_[0];
  slots_[n] = std::make_unique<ModelMetrics>(name);
  count_.store(n + 1, std::memory_order_release);
  return *slots_[n];
}

// Label values are escaped as the text format requires (\\, \", \n).
static std::string label_value(const std::string& v) {
  std::string o;
  for (char c : v) {
    if (c == '\\') o += "\\\\";
    else if (c == '"') o += "\\\"";
    else if (c == '\n') o += "\\n";
    else o += c;
  }
  return o;
}

std::string Metrics::render() const {
  std::string out;
  static const char* const entry[2] = {"REST", "GRPC"};
  out += "# HELP :tensorflow:serving:request_count The total number of requests.\n";
  out += "# TYPE :tensorflow:serving:request_count counter\n";
  const size_t count = count_.load(std::memory_order_acquire);
  for (size_t k0 = 0; k0 < count; ++k0) {
    const auto& m = slots_[k0];
    for (size_t s = 0; s < 17; ++s) {
      const uint64_t n = m->count_by_status[s].load(std::memory_order_relaxed);
      if (n == 0) continue;
      out += ":tensorflow:serving:request_count{model_name=\"" + label_value(m->name) +
             "\",status=\"" + status_code_name(static_cast<StatusCode>(s)) + "\"} ";
      append_uint(out, n);
      out += '\n';
    }
  }
  out += "# HELP :tensorflow:serving:request_latency Distribution of wall time (in microseconds) for successful requests.\n";
  out += "# TYPE :tensorflow:serving:request_latency histogram\n";
  for (size_t k = 1; k < count; ++k) {
    const auto& m = *slots_[k];
    for (int e = 0; e < 2; ++e) {
      const std::string labels = "model_name=\"" + label_value(m.name) + "\",API=\"" +
                                 (e == 0 ? "predict" : "Predict") + "\",entrypoint=\"" + entry[e] + "\"";
      m.latency[e].append_text(out, ":tensorflow:serving:request_latency", labels);
    }
    static const char* const api[3][2] = {{"classify", "Classify"}, {"regress", "Regress"}, {"multiinference", "MultiInference"}};
    for (int a = 0; a < 3; ++a) {
      for (int e = 0; e < 2; ++e) {
        if (m.example_latency[a][e].count() == 0) continue;
        m.example_latency[a][e].append_text(out, ":tensorflow:serving:request_latency",
                                            "model_name=\"" + label_value(m.name) + "\",API=\"" + api[a][e] +
                                                "\",entrypoint=\"" + entry[e] + "\"");
      }
    }
  }
  out += "# HELP :tickinfer:serving:queue_latency Microseconds from a complete request to the start of compute.\n";
  out += "# TYPE :tickinfer:serving:queue_latency histogram\n";
  for (size_t k = 1; k < count; ++k) {
    const auto& m = *slots_[k];
    for (int e = 0; e < 2; ++e) {
      m.queue[e].append_text(out, ":tickinfer:serving:queue_latency",
                             "model_name=\"" + label_value(m.name) + "\",entrypoint=\"" + entry[e] + "\"");
    }
  }
  out += "# HELP :tickinfer:serving:compute_latency Microseconds spent running the model.\n";
  out += "# TYPE :tickinfer:serving:compute_latency histogram\n";
  for (size_t k = 1; k < count; ++k) {
    const auto& m = *slots_[k];
    for (int e = 0; e < 2; ++e) {
      m.compute[e].append_text(out, ":tickinfer:serving:compute_latency",
                               "model_name=\"" + label_value(m.name) + "\",entrypoint=\"" + entry[e] + "\"");
    }
  }
  out += "# HELP :tickinfer:serving:model_version_available Number of AVAILABLE versions.\n";
  out += "# TYPE :tickinfer:serving:model_version_available gauge\n";
  for (size_t k = 1; k < count; ++k) {
    out += ":tickinfer:serving:model_version_available{model_name=\"" + label_value(slots_[k]->name) + "\"} ";
    out += std::to_string(slots_[k]->versions_available.load(std::memory_order_relaxed));
    out += '\n';
  }
  return out;
}

}  // namespace tickinfer::serving
