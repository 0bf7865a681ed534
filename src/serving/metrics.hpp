#pragma once
// Serving metrics in Prometheus text format, with TF Serving's names (the TF monitoring name
// with every character outside [A-Za-z0-9_] turned into ':'):
//   :tensorflow:serving:request_count{model_name,status}           counter
//   :tensorflow:serving:request_latency{model_name,API,entrypoint}  histogram, us, successful
//                                                                   requests, Exponential(10,1.8,33)
//     (API: predict / classify / regress from REST, Predict / Classify / Regress / MultiInference from gRPC)
// and tickinfer's own split of a successful request's time:
//   :tickinfer:serving:queue_latency{model_name,entrypoint}    us from request complete to compute
//   :tickinfer:serving:compute_latency{model_name,entrypoint}  us in the model
//   :tickinfer:serving:model_version_available{model_name}     gauge, versions AVAILABLE
//
// Recording is lock-free (relaxed atomics on preallocated counters; one ModelMetrics per
// configured model, created before serving starts or when a reloaded config adds it) so it may
// sit on the request path. Requests
// for unknown models count under model_name="" so that clients cannot grow the label set.
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tickinfer::serving {

// Canonical gRPC / absl status codes (0..16), as TF Serving reports them.
enum class StatusCode : uint8_t {
  Ok = 0, Cancelled = 1, Unknown = 2, InvalidArgument = 3, DeadlineExceeded = 4, NotFound = 5,
  AlreadyExists = 6, PermissionDenied = 7, ResourceExhausted = 8, FailedPrecondition = 9,
  Aborted = 10, OutOfRange = 11, Unimplemented = 12, Internal = 13, Unavailable = 14,
  DataLoss = 15, Unauthenticated = 16,
};
const char* status_code_name(StatusCode c);  // "OK", "INVALID_ARGUMENT", ...
int http_status_for(StatusCode c);            // TF Serving's mapping (OK 200, NOT_FOUND 404, ...)

class AtomicHistogram {
 public:
  // Upper bounds (inclusive, in us) of the finite buckets; a +Inf bucket follows.
  explicit AtomicHistogram(std::vector<double> bounds_us);
  void record_us(double us) noexcept;
  void append_text(std::string& out, const std::string& name, const std::string& labels) const;
  uint64_t count() const noexcept { return total_.load(std::memory_order_relaxed); }

  static std::vector<double> exponential(double start, double factor, int count);

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // bounds_.size() + 1
  std::atomic<uint64_t> total_{0};
  std::atomic<uint64_t> sum_ns_{0};
};

enum class Entrypoint : uint8_t { Rest = 0, Grpc = 1 };
// The APIs besides Predict that take tf.Examples (their request_latency series).
enum class ExampleApi : uint8_t { Classify = 0, Regress = 1, MultiInference = 2 };

struct ModelMetrics {
  explicit ModelMetrics(std::string model_name);
  std::string name;
  std::array<std::atomic<uint64_t>, 17> count_by_status{};
  AtomicHistogram latency[2];  // by Entrypoint, Predict only
  AtomicHistogram queue[2];
  AtomicHistogram compute[2];
  // request_latency of Classify / Regress / MultiInference (by ExampleApi, then Entrypoint);
  // exported once a series has a sample.
  AtomicHistogram example_latency[3][2];
  std::atomic<int64_t> versions_available{0};

  void count(StatusCode c) noexcept { count_by_status[static_cast<size_t>(c)].fetch_add(1, std::memory_order_relaxed); }
};

class Metrics {
 public:
  // One entry per configured model name (and the "" entry for unknown models).
  explicit Metrics(const std::vector<std::string>& model_names);
  ModelMetrics& for_model(const std::string& name) noexcept;  // "" entry if not configured
  ModelMetrics& unknown_model() noexcept { return *slots_[0]; }
  // A model added while serving (a reloaded config): its own series from then on (the same one
  // if it was configured before). Beyond kMaxModels names, the "" entry. One caller at a time.
  ModelMetrics& add_model(const std::string& name);
  static constexpr size_t kMaxModels = 4096;
  // The whole exposition, Prometheus text format 0.0.4.
  std::string render() const;

 private:
  // Fixed capacity so render() and for_model() read while add_model() appends: slot k exists
  // once count_ > k (release/acquire). Slot 0 is the "" entry.
  std::unique_ptr<std::unique_ptr<ModelMetrics>[]> slots_;
  std::atomic<size_t> count_{0};
};

}  // namespace tickinfer::serving
