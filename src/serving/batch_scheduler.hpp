#pragma once
// Server-side batching, off by default (--enable_batching), with TF Serving's BatchingParameters
// semantics: requests for the same version join the newest open batch while it has room for
// their rows (max_batch_size); a batch is closed when full or batch_timeout_micros after it was
// opened; at most max_enqueued_batches batches wait (a request that would need one more gets
// UNAVAILABLE, REST 503); num_batch_threads threads run closed batches, oldest first. A request
// with more rows than max_batch_size is refused (INVALID_ARGUMENT).
//
// A batch of a model that computes rows together (one input, one output, a row-wise plan:
// Plan::run_rows) runs as one call over all its requests' rows: each layer's weights are read
// once per group of rows instead of once per row. Other models run each request's rows back to
// back. Time in the queue and time in compute are measured separately (a request's compute is
// its rows' share of its batch's model time).
// With batching on, the request path takes a mutex and waits on a condition variable.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "serving/metrics.hpp"
#include "serving/server_config.hpp"
#include "serving/servable.hpp"

namespace tickinfer::serving {

class BatchScheduler {
 public:
  // The batch threads take plans from each servable's pool at [first_plan, ...). per_model
  // (--enable_per_model_batching_parameters): a version with its own batching_params.pbtxt
  // batches by those (its batch size, timeout and queue bound, its batches apart from the
  // others'); a version without one is not batched (batches() is false) and runs at once.
  BatchScheduler(const BatchingParameters& params, size_t first_plan, bool per_model = false);
  bool batches(const Servable& s) const { return !per_model_ || s.batching_parameters() != nullptr; }
  ~BatchScheduler();

  struct Result {
    StatusCode code = StatusCode::Ok;
    uint64_t queue_ns = 0;    // enqueue -> its batch starts running
    uint64_t compute_ns = 0;  // its rows' share of its batch's time in the model
    size_t batch_rows = 0;    // rows of the batch it ran in
  };
  // Blocks until `rows` rows are computed (or refused). in/out as Servable::run.
  Result run(const std::shared_ptr<const Servable>& servable, size_t rows, const float* const* in,
             float* const* out);

  size_t num_threads() const { return threads_.size(); }

 private:
  struct Task {
    size_t rows;
    const float* const* in;
    float* const* out;
    uint64_t enqueued_ns;
    Result result;
    bool done = false;
  };
  struct Batch {
    std::shared_ptr<const Servable> servable;
    std::vector<Task*> tasks;
    size_t rows = 0;
    uint64_t opened_ns = 0;
    uint64_t timeout_ns = 0;  // batch_timeout_micros of its parameters
    size_t max_rows = 0;      // max_batch_size of its parameters
    bool closed = false;
  };
  struct MergeBuffers {
    std::vector<float> in, out;
  };
  void loop();
  static void run_batch(Batch& batch, size_t plan, uint64_t start, MergeBuffers& merged);

  BatchingParameters params_;
  size_t first_plan_;
  bool per_model_ = false;
  std::mutex mutex_;
  std::condition_variable work_cv_;  // batch threads wait here
  std::condition_variable done_cv_;  // requests wait here
  std::deque<std::unique_ptr<Batch>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace tickinfer::serving
