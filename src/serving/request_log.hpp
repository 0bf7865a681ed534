#pragma once
// The optional request log: one JSON line per sampled request, written off the request path.
//
//   {"time":"2026-11-30T04:44:01.123456Z","model":"mlp","version":3,"status":"OK",
//    "queue_us":2.1,"compute_us":0.4,"total_us":7.9,"input_fingerprint":"9f1c0e2a77d3b5e1"}
//
// A worker calls record() with the worker index it owns; record() copies a fixed-size entry
// into that worker's single-producer/single-consumer ring and returns: no allocation, no lock,
// no syscall (the wall clock is read through the vDSO). A background thread drains every ring
// every 20 ms and appends the lines to the file. When a ring is full the entry is dropped and
// counted ("dropped" in the final line written at shutdown): logging never slows a request.
// Sampling is deterministic per worker: every k-th request, k = round(1 / sample_rate).
// The input fingerprint is FNV-1a 64 of the request body.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "serving/metrics.hpp"

namespace tickinfer::serving {

struct RequestLogEntry {
  int64_t wall_ns = 0;            // CLOCK_REALTIME
  const std::string* model = nullptr;  // must outlive the log (ModelMetrics::name)
  int64_t version = -1;           // -1 when no version was resolved
  uint64_t queue_ns = 0, compute_ns = 0, total_ns = 0;
  StatusCode status = StatusCode::Ok;
  uint64_t fingerprint = 0;
};

uint64_t fnv1a64(std::string_view bytes) noexcept;

class RequestLog {
 public:
  // Opens (appends to) `path`; throws tickinfer::Error naming it on failure.
  RequestLog(const std::string& path, double sample_rate, size_t workers);
  ~RequestLog();  // drains, writes a summary line, closes

  // True when this worker's next request is to be logged (advances the sampling counter).
  bool sample(size_t worker) noexcept;
  void record(size_t worker, const RequestLogEntry& e) noexcept;
  uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }
  void flush();  // drain now (tests)

 private:
  static constexpr size_t kRing = 4096;  // entries per worker (power of two)
  struct alignas(64) Ring {
    std::unique_ptr<RequestLogEntry[]> slots{new RequestLogEntry[kRing]};
    alignas(64) std::atomic<uint64_t> head{0};  // written by the worker
    alignas(64) std::atomic<uint64_t> tail{0};  // written by the drain thread
    uint64_t counter = 0;                       // sampling, worker-owned
  };
  void drain_locked();

  std::FILE* file_ = nullptr;
  uint64_t every_ = 1;
  std::vector<std::unique_ptr<Ring>> rings_;
  std::atomic<uint64_t> dropped_{0};
  std::mutex mutex_;  // drain thread vs flush(); never taken by workers
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
  std::string line_;
};

}  // namespace tickinfer::serving
