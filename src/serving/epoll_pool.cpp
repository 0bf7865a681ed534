// The servers' shared worker pool (epoll_pool.hpp).
#include "serving/epoll_pool.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

namespace tickinfer::serving {

EpollPool::EpollPool(int listen_fd, size_t workers) : listen_fd_(listen_fd) {
  stop_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  for (size_t i = 0; i < (workers == 0 ? 1 : workers); ++i) {
    const int epfd = epoll_create1(EPOLL_CLOEXEC);
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLEXCLUSIVE;
    ev.data.ptr = nullptr;
    epoll_ctl(epfd, EPOLL_CTL_ADD, listen_fd_, &ev);
    epoll_event sev{};
    sev.events = EPOLLIN;
    sev.data.ptr = &stop_fd_;
    epoll_ctl(epfd, EPOLL_CTL_ADD, stop_fd_, &sev);
    epfds_.push_back(epfd);
  }
}

EpollPool::~EpollPool() {
  stop();
  for (int epfd : epfds_) close(epfd);
  if (listen_fd_ >= 0) close(listen_fd_);
  if (stop_fd_ >= 0) close(stop_fd_);
}

void EpollPool::start(const std::function<void(size_t)>& body) {
  for (size_t i = 0; i < epfds_.size(); ++i) threads_.emplace_back([body, i] { body(i); });
}

void EpollPool::stop() {
  stopping_.store(true);
  if (stop_fd_ >= 0) {
    const uint64_t one = 1;
    [[maybe_unused]] auto n = write(stop_fd_, &one, sizeof one);
  }
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

}  // namespace tickinfer::serving
