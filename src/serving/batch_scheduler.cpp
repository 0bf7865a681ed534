#include "serving/batch_scheduler.hpp"

#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "serving/http1/http_server.hpp"  // monotonic_ns
#include "stats/cpu_quota.hpp"

namespace tickinfer::serving {

BatchScheduler::BatchScheduler(const BatchingParameters& params, size_t first_plan, bool per_model)
    : params_(params), first_plan_(first_plan), per_model_(per_model) {
  size_t n = params_.num_batch_threads > 0 ? static_cast<size_t>(params_.num_batch_threads)
                                           : stats::usable_cpus();
  if (params_.max_enqueued_batches < 1) params_.max_enqueued_batches = 1;
  for (size_t i = 0; i < n; ++i) threads_.emplace_back([this] { loop(); });
}

BatchScheduler::~BatchScheduler() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

BatchScheduler::Result BatchScheduler::run(const std::shared_ptr<const Servable>& servable, size_t rows,
                                           const float* const* in, float* const* out) {
  Task task{rows, in, out, monotonic_ns(), {}, false};
  // Per-model batching: the version's own parameters (its batches queue apart from the others').
  const BatchingParameters* own = per_model_ ? servable->batching_parameters() : nullptr;
  const BatchingParameters& p = own ? *own : params_;
  const size_t max_rows = static_cast<size_t>(p.max_batch_size);
  if (rows > max_rows) {
    task.result.code = StatusCode::InvalidArgument;
    return task.result;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  Batch* open = nullptr;
  size_t queued = 0;  // batches counted against max_enqueued_batches
  for (const auto& b : queue_) {
    if (own && b->servable != servable) continue;
    ++queued;
    if (b->servable == servable && !b->closed) open = b.get();
  }
  Batch* full = nullptr;  // open, but without room for these rows: closed if a new batch opens
  if (open && open->rows + rows > max_rows) {
    full = open;
    open = nullptr;
  }
  if (!open) {
    if (queued >= static_cast<size_t>(std::max<int64_t>(1, p.max_enqueued_batches))) {
      task.result.code = StatusCode::Unavailable;
      return task.result;
    }
    if (full) full->closed = true;
    if (!own)  // one queue: a newer batch opens, the older is done filling
      for (auto& b : queue_) b->closed = true;
    queue_.push_back(std::make_unique<Batch>());
    open = queue_.back().get();
    open->servable = servable;
    open->opened_ns = task.enqueued_ns;
    open->timeout_ns = static_cast<uint64_t>(p.batch_timeout_micros) * 1000;
    open->max_rows = max_rows;
  }
  open->tasks.push_back(&task);
  open->rows += rows;
  if (open->rows >= open->max_rows) open->closed = true;
  work_cv_.notify_one();
  done_cv_.wait(lock, [&] { return task.done; });
  return task.result;
}

// The batch's rows as one call where the model computes rows together (one input, one output,
// Plan::run_rows: each layer's weights read once per group of rows): every task's rows are
// copied into one input block, run, and the outputs copied back. Otherwise (several inputs or
// outputs, a sequence model) each task's rows run back to back. Each task's compute time is its
// rows' share of the batch's model time.
void BatchScheduler::run_batch(Batch& batch, size_t plan, uint64_t start, MergeBuffers& merged) {
  const Servable& sv = *batch.servable;
  if (batch.tasks.size() > 1 && sv.rows_together()) {
    const size_t in_w = sv.inputs()[0].size, out_w = sv.outputs()[0].size;
    // Grown to the largest batch seen, then reused: no allocation once warm.
    if (merged.in.size() < batch.rows * in_w) merged.in.resize(batch.rows * in_w);
    if (merged.out.size() < batch.rows * out_w) merged.out.resize(batch.rows * out_w);
    size_t r = 0;
    for (const Task* t : batch.tasks) {
      std::memcpy(merged.in.data() + r * in_w, t->in[0], t->rows * in_w * sizeof(float));
      r += t->rows;
    }
    const float* in[] = {merged.in.data()};
    float* out[] = {merged.out.data()};
    const uint64_t t0 = monotonic_ns();
    sv.run(plan, batch.rows, in, out);
    const uint64_t compute = monotonic_ns() - t0;
    r = 0;
    for (Task* t : batch.tasks) {
      std::memcpy(t->out[0], merged.out.data() + r * out_w, t->rows * out_w * sizeof(float));
      r += t->rows;
      t->result.queue_ns = start - t->enqueued_ns;
      t->result.compute_ns = compute * t->rows / batch.rows;
      t->result.batch_rows = batch.rows;
    }
    return;
  }
  for (Task* t : batch.tasks) {
    const uint64_t t0 = monotonic_ns();
    sv.run(plan, t->rows, t->in, t->out);
    t->result.queue_ns = start - t->enqueued_ns;
    t->result.compute_ns = monotonic_ns() - t0;
    t->result.batch_rows = batch.rows;
  }
}

void BatchScheduler::loop() {
  // Wake at a batch's deadline, not up to the default 50 us timer slack after it.
  prctl(PR_SET_TIMERSLACK, 1000UL);
  MergeBuffers merged;  // this batch thread's
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (stopping_ && queue_.empty()) return;
    if (queue_.empty()) {
      work_cv_.wait(lock);
      continue;
    }
    // The oldest batch that is ready (closed, or its timeout passed); batches of models with
    // their own timeouts do not wait behind a longer one.
    const uint64_t now = monotonic_ns();
    auto ready = queue_.end();
    uint64_t next_deadline = UINT64_MAX;
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      const uint64_t deadline = (*it)->opened_ns + (*it)->timeout_ns;
      if ((*it)->closed || now >= deadline || stopping_) {
        ready = it;
        break;
      }
      next_deadline = std::min(next_deadline, deadline);
    }
    if (ready == queue_.end()) {
      work_cv_.wait_for(lock, std::chrono::nanoseconds(next_deadline - now));
      continue;
    }
    std::unique_ptr<Batch> batch = std::move(*ready);
    queue_.erase(ready);
    lock.unlock();
    const uint64_t start = monotonic_ns();
    const size_t plan = batch->servable->acquire_plan(first_plan_);
    run_batch(*batch, plan, start, merged);
    batch->servable->release_plan(plan);
    lock.lock();
    for (Task* t : batch->tasks) t->done = true;
    done_cv_.notify_all();
  }
}

}  // namespace tickinfer::serving
