#include "serving/http1/http_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>
#include <mutex>

#include "serving/epoll_pool.hpp"
#include "serving/listen_socket.hpp"
#include "serving/http1/tls_transport.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::serving {

uint64_t monotonic_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

const char* HttpServer::reason_phrase(int s) {
  switch (s) {
    case 100: return "Continue";
    case 200: return "OK";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 417: return "Expectation Failed";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 499: return "Client Closed Request";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

namespace {

struct Conn {
  int fd = -1;
  ssl_st* ssl = nullptr;    // TLS session, or nullptr for plain HTTP
  std::string in;           // received, not yet consumed
  std::string out;          // to send
  size_t out_sent = 0;
  bool want_close = false;  // close once `out` is flushed
  bool sent_continue = false;
  bool waiting_write = false;
};

void append_uint(std::string& s, uint64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  s.append(buf, r.ptr);
}

void append_response(std::string& out, const HttpResponse& r, bool keep_alive) {
  out += "HTTP/1.1 ";
  append_uint(out, static_cast<uint64_t>(r.status));
  out += ' ';
  out += HttpServer::reason_phrase(r.status);
  out += "\r\nContent-Type: ";
  out += r.content_type;
  out += "\r\nContent-Length: ";
  append_uint(out, r.body.size());
  if (r.cors) {
    out += "\r\nAccess-Control-Allow-Origin: *\r\nAccess-Control-Allow-Methods: POST, GET"
           "\r\nAccess-Control-Allow-Headers: Content-Type";
  }
  if (r.www_authenticate) out += "\r\nWWW-Authenticate: Bearer";
  if (!keep_alive) out += "\r\nConnection: close";
  out += "\r\n\r\n";
  out += r.body;
}

void error_response(std::string& out, int status, const char* message) {
  HttpResponse r;
  r.status = status;
  r.body = "{ \"error\": \"";
  r.body += message;
  r.body += "\" }";
  append_response(out, r, false);
}

enum class Accepted { None, Refused, Connection };

// Accepts one connection into `out`. None: none was waiting. Refused: over max_connections
// (answered 503 and closed) or its TLS handshake failed.
Accepted accept_connection(int listen_fd, TlsContext* tls, std::atomic<size_t>& connections, size_t max_connections,
                           Conn*& out) {
  const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) return Accepted::None;
  if (connections.load(std::memory_order_relaxed) >= max_connections) {
    std::string answer;
    error_response(answer, 503, "too many connections");
    [[maybe_unused]] auto s = send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
    close(fd);
    return Accepted::Refused;
  }
  connections.fetch_add(1, std::memory_order_relaxed);
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ssl_st* ssl = nullptr;
  if (tls) {
    ssl = tls->accept(fd);
    if (!ssl) {
      close(fd);
      connections.fetch_sub(1, std::memory_order_relaxed);
      return Accepted::Refused;
    }
  }
  Conn* c = new Conn();
  c->fd = fd;
  c->ssl = ssl;
  c->in.reserve(16 * 1024);
  c->out.reserve(16 * 1024);
  out = c;
  return Accepted::Connection;
}

// Reads what the socket holds into c->in (unless c waits to write: back-pressure, finish
// sending first). Returns whether bytes arrived; `closed` is set on EOF or a read error.
bool read_available(Conn* c, bool& closed) {
  bool got = false;
  for (;;) {
    if (c->waiting_write) break;
    char buf[16 * 1024];
    const ssize_t r = c->ssl ? tls_read(c->ssl, buf, sizeof buf) : recv(c->fd, buf, sizeof buf, 0);
    if (r > 0) {
      c->in.append(buf, static_cast<size_t>(r));
      got = true;
      // A short plain read drained the socket; TLS may hold decrypted bytes beyond it, so
      // it reads on until OpenSSL wants the socket again.
      if (!c->ssl && static_cast<size_t>(r) < sizeof buf) break;
      continue;
    }
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    closed = true;  // EOF or error
    break;
  }
  return got;
}

}  // namespace

struct HttpServer::Worker {
  size_t index = 0;
  int epfd = -1;
  HttpResponse response;
  std::vector<Conn*> conns;  // owned; for cleanup
  // Connections are spread by count: the worker that accepts one gives it to the worker with
  // the fewest (a worker blocked on a batched request stalls only its own connections).
  std::atomic<size_t> open{0};
  int wake_fd = -1;             // eventfd in this worker's epoll set: handed-over connections wait
  std::mutex handoff_mutex;     // accept path only, never per request
  std::vector<Conn*> handoff;
};

HttpServer::HttpServer(Options options, Handler handler)
    : options_(std::move(options)), handler_(std::move(handler)) {
  if (options_.threads == 0) options_.threads = 1;
  if (!options_.tls_cert_pem.empty()) {
    tls_ = std::make_unique<TlsContext>(options_.tls_key_pem, options_.tls_cert_pem, options_.tls_ca_pem,
                                        options_.tls_client_verify);
  }
  const ListenSocket ls = listen_tcp(options_.bind_address, options_.port, "the REST port");
  port_ = ls.port;
  pool_ = std::make_unique<EpollPool>(ls.fd, options_.threads);
  for (size_t i = 0; i < options_.threads; ++i) {
    auto w = std::make_unique<Worker>();
    w->index = i;
    w->epfd = pool_->epfd(i);
    w->response.body.reserve(64 * 1024);
    w->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (w->wake_fd < 0) throw Error(std::string("REST server: eventfd failed: ") + std::strerror(errno));
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = &w->wake_fd;
    epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->wake_fd, &ev);
    workers_.push_back(std::move(w));
  }
}

HttpServer::~HttpServer() {
  stop();
  for (auto& w : workers_) {
    w->conns.insert(w->conns.end(), w->handoff.begin(), w->handoff.end());
    for (Conn* c : w->conns) {
      tls_close(c->ssl);
      if (c->fd >= 0) close(c->fd);
      delete c;
    }
    if (w->wake_fd >= 0) close(w->wake_fd);
  }
}

void HttpServer::start() {
  pool_->start([this](size_t i) { run_worker(*workers_[i]); });
}

void HttpServer::stop() { pool_->stop(); }

namespace {
// A connection joins a worker's epoll set and list (generic: the worker type is private).
const auto adopt = [](auto& w, Conn* c) {
  w.conns.push_back(c);
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.ptr = c;
  epoll_ctl(w.epfd, EPOLL_CTL_ADD, c->fd, &ev);
};
}  // namespace

// One connection per wake-up (the listening socket is level-triggered). The kernel tends to wake
// the same worker again, so the connection goes to the worker with the fewest.
void HttpServer::accept_one(Worker& w) {
  Conn* c = nullptr;
  if (accept_connection(pool_->listen_fd(), tls_.get(), connections_, options_.max_connections, c) !=
      Accepted::Connection)
    return;
  Worker* target = &w;
  for (auto& o : workers_)
    if (o->open.load(std::memory_order_relaxed) < target->open.load(std::memory_order_relaxed)) target = o.get();
  target->open.fetch_add(1, std::memory_order_relaxed);
  if (target == &w) {
    adopt(w, c);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(target->handoff_mutex);
    target->handoff.push_back(c);
  }
  const uint64_t one = 1;
  if (write(target->wake_fd, &one, sizeof one) < 0) {
    // The counter cannot overflow here; the connection waits for the next wake-up.
  }
}

void HttpServer::take_handoff(Worker& w) {
  uint64_t n = 0;
  if (read(w.wake_fd, &n, sizeof n) < 0) {
    // EAGAIN: another read took the count; the queue is drained below either way.
  }
  std::vector<Conn*> mine;
  {
    std::lock_guard<std::mutex> lock(w.handoff_mutex);
    mine.swap(w.handoff);
  }
  for (Conn* h : mine) adopt(w, h);
}

void HttpServer::run_worker(Worker& w) {
  constexpr int kMaxEvents = 64;
  epoll_event events[kMaxEvents];
  auto close_conn = [&](Conn* c) {
    epoll_ctl(w.epfd, EPOLL_CTL_DEL, c->fd, nullptr);
    tls_close(c->ssl);
    close(c->fd);
    c->fd = -1;
    connections_.fetch_sub(1, std::memory_order_relaxed);
    w.open.fetch_sub(1, std::memory_order_relaxed);
    for (auto& p : w.conns) {
      if (p == c) {
        p = w.conns.back();
        w.conns.pop_back();
        break;
      }
    }
    delete c;
  };
  // Sends what is pending; returns false if the connection was closed.
  auto flush = [&](Conn* c) {
    while (c->out_sent < c->out.size()) {
      const ssize_t n = c->ssl ? tls_write(c->ssl, c->out.data() + c->out_sent, c->out.size() - c->out_sent)
                               : send(c->fd, c->out.data() + c->out_sent, c->out.size() - c->out_sent, MSG_NOSIGNAL);
      if (n > 0) {
        c->out_sent += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (!c->waiting_write) {
          epoll_event ev{};
          ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP;
          ev.data.ptr = c;
          epoll_ctl(w.epfd, EPOLL_CTL_MOD, c->fd, &ev);
          c->waiting_write = true;
        }
        return true;
      }
      close_conn(c);
      return false;
    }
    c->out.clear();
    c->out_sent = 0;
    if (c->waiting_write) {
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLRDHUP;
      ev.data.ptr = c;
      epoll_ctl(w.epfd, EPOLL_CTL_MOD, c->fd, &ev);
      c->waiting_write = false;
    }
    if (c->want_close) {
      close_conn(c);
      return false;
    }
    return true;
  };
  // Handles every complete request in c->in. Returns false if the connection was closed.
  auto process = [&](Conn* c) {
    size_t offset = 0;
    while (!c->want_close && c->out.size() - c->out_sent < (1u << 20)) {
      HttpRequest req;
      const ParseResult r = parse_http_request(c->in.data() + offset, c->in.size() - offset,
                                               options_.limits, req);
      if (r.status == ParseStatus::NeedMore) break;
      if (r.status == ParseStatus::HeadersDone) {
        if (req.expect_continue && !c->sent_continue) {
          c->out += "HTTP/1.1 100 Continue\r\n\r\n";
          c->sent_continue = true;
        }
        break;
      }
      if (r.status == ParseStatus::Error) {
        error_response(c->out, r.http_status, r.message);
        c->want_close = true;
        break;
      }
      const uint64_t now = monotonic_ns();
      HttpResponse& resp = w.response;
      resp.status = 200;
      resp.content_type = "application/json";
      resp.body.clear();
      resp.cors = false;
      resp.close = false;
      resp.www_authenticate = false;
      handler_(req, now, w.index, resp);
      const bool keep = req.keep_alive && !resp.close;
      append_response(c->out, resp, keep);
      c->sent_continue = false;
      offset += r.consumed;
      if (!keep) c->want_close = true;
    }
    if (offset) c->in.erase(0, offset);
    return flush(c);
  };

  while (!pool_->stopping()) {
    const int n = epoll_wait(w.epfd, events, kMaxEvents, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < n; ++i) {
      void* tag = events[i].data.ptr;
      if (tag == pool_->stop_tag()) return;
      if (tag == nullptr) {
        accept_one(w);
        continue;
      }
      if (tag == &w.wake_fd) {
        take_handoff(w);
        continue;
      }
      Conn* c = static_cast<Conn*>(tag);
      if (events[i].events & EPOLLOUT) {
        if (!flush(c)) continue;
        if (c->waiting_write) continue;
      }
      if (events[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
        bool closed = false;
        const bool got = read_available(c, closed);
        if (got && !process(c)) continue;
        if (closed) close_conn(c);
      }
    }
  }
}

}  // namespace tickinfer::serving
