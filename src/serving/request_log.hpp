#pragma once
// The request log (--request_log_file): a binary, append-only, checksummed record of inference
// calls, REST and gRPC alike, errors included (format and reader: request_log_format.hpp). Each
// record holds the wall time, model, version, signature, status (and the error's text), queue,
// compute and total latency, the fingerprint of the decoded inputs, the inputs themselves (for
// the sampled share --request_log_inputs_rate) and the outputs, so `tickinfer replay` can re-run
// a served call through another model version and say what changed.
//
// Hot path: a worker calls record() with the log ring it owns (one per REST worker, one per
// native gRPC worker, one shared by grpc++'s threads under a lock). record() writes the record
// straight into that ring's bytes (single producer, single consumer) and returns: no allocation,
// no lock, no syscall (CLOCK_REALTIME is read through the vDSO). A writer thread drains every
// ring every 20 ms, frames each record with its length and CRC-32 and appends them with one
// write(2). When a ring is short of room the record is kept without its input values (counted:
// inputs_omitted), else dropped (counted: dropped): logging never slows a request. Both counts
// and the number of records go into a summary record when the log closes.
//
// Sampling is deterministic per ring: every k-th call is logged, k = round(1 / sample_rate), and
// every j-th logged call carries its inputs, j = round(1 / inputs_rate).
//
// Opening an existing log appends to it. A file that is not a request log is refused (nothing
// is overwritten); a torn last record (a crash mid-write) is cut off first, so the records
// appended after it stay readable.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "serving/request_log_format.hpp"
#include "serving/tensor_spec.hpp"

namespace tickinfer::serving {

// One call as the handler saw it. The tensors are read during record() only.
struct RequestLogEntry {
  LoggedApi api = LoggedApi::Rest;
  LoggedMethod method = LoggedMethod::Predict;
  StatusCode status = StatusCode::Ok;
  std::string_view model, signature, message;  // message: the error's text (empty when OK)
  int64_t version = -1;                        // -1 when no version was resolved
  uint64_t queue_ns = 0, compute_ns = 0, total_ns = 0;
  uint32_t batch = 0;
  // The decoded inputs and the computed outputs, batch rows each: nullptr when the call never got
  // that far. specs[i].size floats per row.
  const std::vector<TensorSpec>* input_specs = nullptr;
  const float* const* inputs = nullptr;
  const std::vector<TensorSpec>* output_specs = nullptr;
  const float* const* outputs = nullptr;
};

// The fingerprint of decoded inputs (request_log_format.hpp): FNV-1a 64 over every input's floats.
uint64_t input_fingerprint(const std::vector<TensorSpec>& specs, const float* const* inputs, size_t batch) noexcept;

struct RequestLogOptions {
  double sample_rate = 1.0;  // share of calls logged, (0, 1]
  double inputs_rate = 1.0;  // share of logged calls that carry their input values, [0, 1]
  size_t ring_bytes = size_t{1} << 20;  // per ring; rounded up to a power of two (at least 4 KiB)
  bool writer_thread = true;  // false: rings are drained by flush() and at close only (tests)
};

class RequestLog {
 public:
  // Opens (appends to) `path`; throws tickinfer::Error naming it on failure.
  RequestLog(const std::string& path, const RequestLogOptions& options, size_t rings);
  ~RequestLog();  // drains, writes the summary record, closes

  // True when this ring's next call is to be logged (advances the sampling counter).
  bool sample(size_t ring) noexcept;
  void record(size_t ring, const RequestLogEntry& e) noexcept;
  void flush();  // drain now (tests)

  uint64_t records() const noexcept { return records_.load(std::memory_order_relaxed); }
  uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }
  uint64_t inputs_omitted() const noexcept { return inputs_omitted_.load(std::memory_order_relaxed); }
  uint64_t write_errors() const noexcept { return write_errors_.load(std::memory_order_relaxed); }
  // What opening found: the bytes of a torn last record that were cut off (0 when none).
  uint64_t repaired_bytes() const noexcept { return repaired_bytes_; }

 private:
  struct alignas(64) Ring {
    explicit Ring(size_t bytes) : data(new uint8_t[bytes]) {}
    std::unique_ptr<uint8_t[]> data;
    alignas(64) std::atomic<uint64_t> head{0};  // bytes written, by the worker
    alignas(64) std::atomic<uint64_t> tail{0};  // bytes consumed, by the writer thread
    uint64_t calls = 0, logged = 0;             // sampling, worker-owned
  };
  void open_file(const std::string& path);
  void put(Ring& r, uint64_t pos, const void* src, size_t n) noexcept;
  void get(const Ring& r, uint64_t pos, void* dst, size_t n) const noexcept;
  void drain_locked();
  void write_all(const uint8_t* p, size_t n) noexcept;

  int fd_ = -1;
  std::string path_;
  uint64_t calls_every_ = 1, inputs_every_ = 1;  // inputs_every_ 0: never
  size_t ring_bytes_ = 0;
  std::vector<std::unique_ptr<Ring>> rings_;
  std::atomic<uint64_t> records_{0}, dropped_{0}, inputs_omitted_{0}, write_errors_{0};
  uint64_t repaired_bytes_ = 0;
  std::mutex mutex_;  // the writer thread vs flush(); never taken by workers
  std::condition_variable cv_;
  bool stopping_ = false;
  std::vector<uint8_t> out_;  // the writer thread's framing buffer
  std::thread thread_;
};

}  // namespace tickinfer::serving
