#pragma once
// What the REST and the gRPC servers share: a listening socket, a stop eventfd and `workers`
// threads, each with its own epoll set holding both (the listener with EPOLLEXCLUSIVE, so one
// worker wakes per new connection). Events of the listener carry a null tag, the stop fd's carry
// stop_tag(); each server adds its connections (and anything else) to its workers' sets.
#include <atomic>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace tickinfer::serving {

class EpollPool {
 public:
  // Takes ownership of listen_fd.
  EpollPool(int listen_fd, size_t workers);
  ~EpollPool();  // stop(), then closes the epoll sets, the stop fd and the listener
  EpollPool(const EpollPool&) = delete;
  EpollPool& operator=(const EpollPool&) = delete;

  size_t size() const { return epfds_.size(); }
  int epfd(size_t worker) const { return epfds_[worker]; }
  int listen_fd() const { return listen_fd_; }
  const void* stop_tag() const { return &stop_fd_; }
  bool stopping() const { return stopping_.load(std::memory_order_relaxed); }

  // Runs body(worker) on one thread per worker.
  void start(const std::function<void(size_t)>& body);
  // Wakes every worker (epoll_wait returns stop_tag()) and joins them. Idempotent.
  void stop();

 private:
  int listen_fd_ = -1;
  int stop_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::vector<int> epfds_;
  std::vector<std::thread> threads_;
};

}  // namespace tickinfer::serving
