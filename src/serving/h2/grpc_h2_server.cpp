// The epoll loop of tickinfer's gRPC server (grpc_h2_server.hpp).
#include "serving/h2/grpc_h2_server.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "serving/epoll_pool.hpp"
#include "serving/listen_socket.hpp"

namespace tickinfer::serving {

struct GrpcH2Server::Conn {
  Conn(const GrpcH2Limits& limits, GrpcH2Connection::Handler handler) : h2(limits, std::move(handler)) {}
  int fd = -1;
  GrpcH2Connection h2;
  size_t out_sent = 0;
  bool waiting_write = false;
  bool want_close = false;  // close once the output is flushed
};

struct GrpcH2Server::Worker {
  size_t index = 0;
  int epfd = -1;
  int refresh_fd = -1;       // eventfd: refresh_streams() was called
  std::vector<Conn*> conns;  // owned
};

GrpcH2Server::GrpcH2Server(Options options, Handler handler)
    : options_(std::move(options)), handler_(std::move(handler)) {
  if (options_.threads == 0) options_.threads = 1;
  const ListenSocket ls = listen_tcp(options_.bind_address, options_.port, "the gRPC port");
  port_ = ls.port;
  pool_ = std::make_unique<EpollPool>(ls.fd, options_.threads);
  for (size_t i = 0; i < options_.threads; ++i) {
    auto w = std::make_unique<Worker>();
    w->index = i;
    w->epfd = pool_->epfd(i);
    w->refresh_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    epoll_event rev{};
    rev.events = EPOLLIN;
    rev.data.ptr = &w->refresh_fd;
    epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->refresh_fd, &rev);
    workers_.push_back(std::move(w));
  }
}

GrpcH2Server::~GrpcH2Server() {
  stop();
  for (auto& w : workers_) {
    for (Conn* c : w->conns) {
      if (c->fd >= 0) close(c->fd);
      delete c;
    }
    close(w->refresh_fd);
  }
}

void GrpcH2Server::start() {
  pool_->start([this](size_t i) { run_worker(*workers_[i]); });
}

void GrpcH2Server::stop() { pool_->stop(); }

void GrpcH2Server::refresh_streams() {
  const uint64_t one = 1;
  for (auto& w : workers_) {
    [[maybe_unused]] auto n = write(w->refresh_fd, &one, sizeof one);
  }
}

void GrpcH2Server::run_worker(Worker& w) {
  constexpr int kMaxEvents = 64;
  epoll_event events[kMaxEvents];
  auto close_conn = [&](Conn* c) {
    epoll_ctl(w.epfd, EPOLL_CTL_DEL, c->fd, nullptr);
    close(c->fd);
    connections_.fetch_sub(1, std::memory_order_relaxed);
    for (auto& p : w.conns) {
      if (p == c) {
        p = w.conns.back();
        w.conns.pop_back();
        break;
      }
    }
    delete c;
  };
  auto watch = [&](Conn* c, bool writable) {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP | (writable ? EPOLLOUT : 0u);
    ev.data.ptr = c;
    epoll_ctl(w.epfd, EPOLL_CTL_MOD, c->fd, &ev);
    c->waiting_write = writable;
  };
  // Sends the connection's pending output; returns false if the connection was closed.
  auto flush = [&](Conn* c) {
    std::string& out = c->h2.output();
    while (c->out_sent < out.size()) {
      const ssize_t n = send(c->fd, out.data() + c->out_sent, out.size() - c->out_sent, MSG_NOSIGNAL);
      if (n > 0) {
        c->out_sent += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (!c->waiting_write) watch(c, true);
        return true;
      }
      close_conn(c);
      return false;
    }
    out.clear();
    c->out_sent = 0;
    if (c->waiting_write) watch(c, false);
    if (c->want_close) {
      close_conn(c);
      return false;
    }
    return true;
  };

  const size_t worker = w.index;
  while (true) {
    const int n = epoll_wait(w.epfd, events, kMaxEvents, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < n; ++i) {
      void* tag = events[i].data.ptr;
      if (tag == pool_->stop_tag()) {
        // GOAWAY to every connection, best effort, then close.
        for (Conn* c : std::vector<Conn*>(w.conns)) {
          c->h2.goaway();
          c->want_close = true;
          flush(c);
        }
        return;
      }
      if (tag == &w.refresh_fd) {
        uint64_t count;
        [[maybe_unused]] auto r = read(w.refresh_fd, &count, sizeof count);
        for (Conn* c : std::vector<Conn*>(w.conns)) {
          c->h2.refresh_open_streams();
          flush(c);
        }
        continue;
      }
      if (tag == nullptr) {
        const int fd = accept4(pool_->listen_fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) continue;
        if (connections_.load(std::memory_order_relaxed) >= options_.max_connections) {
          close(fd);  // an HTTP/2 client sees the connection refused and retries elsewhere
          continue;
        }
        connections_.fetch_add(1, std::memory_order_relaxed);
        const int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        Conn* c = new Conn(options_.limits, [this, worker](const GrpcCall& call, GrpcReply& reply) {
          handler_(call, worker, reply);
        });
        c->fd = fd;
        w.conns.push_back(c);
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLRDHUP;
        ev.data.ptr = c;
        epoll_ctl(w.epfd, EPOLL_CTL_ADD, fd, &ev);
        flush(c);  // our SETTINGS
        continue;
      }
      Conn* c = static_cast<Conn*>(tag);
      if (events[i].events & EPOLLOUT) {
        if (!flush(c)) continue;
      }
      if (!(events[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))) continue;
      bool closed = false;
      for (;;) {
        if (c->waiting_write || c->want_close) break;  // back-pressure: finish sending first
        uint8_t buf[16 * 1024];
        const ssize_t r = recv(c->fd, buf, sizeof buf, 0);
        if (r > 0) {
          if (!c->h2.receive(buf, static_cast<size_t>(r))) c->want_close = true;
          if (!flush(c)) {
            c = nullptr;
            break;
          }
          if (static_cast<size_t>(r) < sizeof buf) break;
          continue;
        }
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        closed = true;  // EOF or error
        break;
      }
      if (c && closed) close_conn(c);
    }
  }
}

}  // namespace tickinfer::serving
