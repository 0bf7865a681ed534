#include "serving/batch_scheduler.hpp"

#include <chrono>

#include "serving/http1/http_server.hpp"  // monotonic_ns
#include "stats/cpu_quota.hpp"

namespace tickinfer::serving {

BatchScheduler::BatchScheduler(const BatchingParameters& params, size_t first_plan)
    : params_(params), first_plan_(first_plan) {
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
  if (rows > static_cast<size_t>(params_.max_batch_size)) {
    task.result.code = StatusCode::InvalidArgument;
    return task.result;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  Batch* open = nullptr;
  if (!queue_.empty()) {
    Batch* last = queue_.back().get();
    if (!last->closed && last->servable == servable && last->rows + rows <= static_cast<size_t>(params_.max_batch_size)) {
      open = last;
    }
  }
  if (!open) {
    if (queue_.size() >= static_cast<size_t>(params_.max_enqueued_batches)) {
      task.result.code = StatusCode::Unavailable;
      return task.result;
    }
    if (!queue_.empty()) queue_.back()->closed = true;  // a newer batch opens: the older is done filling
    queue_.push_back(std::make_unique<Batch>());
    open = queue_.back().get();
    open->servable = servable;
    open->opened_ns = task.enqueued_ns;
  }
  open->tasks.push_back(&task);
  open->rows += rows;
  if (open->rows >= static_cast<size_t>(params_.max_batch_size)) open->closed = true;
  work_cv_.notify_one();
  done_cv_.wait(lock, [&] { return task.done; });
  return task.result;
}

void BatchScheduler::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (stopping_ && queue_.empty()) return;
    if (queue_.empty()) {
      work_cv_.wait(lock);
      continue;
    }
    Batch& front = *queue_.front();
    const uint64_t deadline = front.opened_ns + static_cast<uint64_t>(params_.batch_timeout_micros) * 1000;
    const uint64_t now = monotonic_ns();
    if (!front.closed && now < deadline && !stopping_) {
      work_cv_.wait_for(lock, std::chrono::nanoseconds(deadline - now));
      continue;
    }
    std::unique_ptr<Batch> batch = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    const uint64_t start = monotonic_ns();
    const size_t plan = batch->servable->acquire_plan(first_plan_);
    for (Task* t : batch->tasks) {
      const uint64_t t0 = monotonic_ns();
      batch->servable->run(plan, t->rows, t->in, t->out);
      t->result.queue_ns = start - t->enqueued_ns;
      t->result.compute_ns = monotonic_ns() - t0;
    }
    batch->servable->release_plan(plan);
    lock.lock();
    for (Task* t : batch->tasks) t->done = true;
    done_cv_.notify_all();
  }
}

}  // namespace tickinfer::serving
