#include "formats/savedmodel/deep_stack.hpp"

#include <pthread.h>

#include <exception>

#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

struct Job {
  const std::function<void()>* fn;
  std::exception_ptr error;
};

void* run_job(void* arg) {
  auto* job = static_cast<Job*>(arg);
  try {
    (*job->fn)();
  } catch (...) {
    job->error = std::current_exception();
  }
  return nullptr;
}

}  // namespace

void run_on_deep_stack(const std::function<void()>& fn) {
  constexpr size_t kStackBytes = size_t{1} << 30;
  Job job{&fn, nullptr};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_t thread;
  const bool started = pthread_attr_setstacksize(&attr, kStackBytes) == 0 && pthread_create(&thread, &attr, run_job, &job) == 0;
  pthread_attr_destroy(&attr);
  if (!started) {
    fn();  // no thread available: run here (the depth limits still hold)
    return;
  }
  pthread_join(thread, nullptr);
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace tickinfer::formats
