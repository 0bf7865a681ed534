#pragma once
// An epoll HTTP/1.1 server with keep-alive and pipelining for the REST port.
//
// Threads: a fixed set of `threads` workers, created at start(); nothing is created per
// request or per connection. Each worker has its own epoll set holding the shared listening
// socket (EPOLLEXCLUSIVE, so one worker wakes per new connection) and the connections it
// accepted; a connection stays on its worker for life, so its requests are handled in order
// without locks. The handler runs on the worker thread with that worker's index (0..threads-1),
// which it uses to pick per-thread scratch (plans, buffers).
//
// Per connection: one receive buffer and one send buffer, reused across requests. A response
// that cannot be sent at once waits for EPOLLOUT; the connection reads no further requests
// until it is flushed. Malformed requests get their 4xx/5xx answer and the connection closes.
// Over max_connections, a new connection gets 503 and is closed. With TLS, reads and writes go
// through OpenSSL on the same non-blocking sockets (the handshake runs inside the first reads).
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "serving/http1/http_parser.hpp"

namespace tickinfer::serving {

// What a handler fills in. body and content_type are written straight into the response.
struct HttpResponse {
  int status = 200;
  const char* content_type = "application/json";
  std::string body;            // reused across requests by the worker (capacity kept)
  bool cors = false;           // add the Access-Control-Allow-* headers
  bool close = false;          // close the connection after this response
  bool www_authenticate = false;  // add WWW-Authenticate: Bearer (401 answers)
};

class HttpServer {
 public:
  using Handler = std::function<void(const HttpRequest& req, uint64_t received_ns, size_t worker,
                                     HttpResponse& resp)>;

  struct Options {
    std::string bind_address = "0.0.0.0";
    int port = 0;                  // 0 = an ephemeral port (see port())
    size_t threads = 1;
    size_t max_connections = 1024;
    HttpLimits limits;
    // TLS (tls_transport.hpp) when tls_cert_pem is set: PEM contents, as TF Serving's SSLConfig.
    std::string tls_key_pem, tls_cert_pem, tls_ca_pem;
    bool tls_client_verify = false;
  };

  // Binds and listens; throws tickinfer::Error naming the address on failure.
  HttpServer(Options options, Handler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  void start();
  void stop();  // idempotent; joins the workers, closes every connection
  int port() const { return port_; }
  size_t connections() const { return connections_.load(std::memory_order_relaxed); }

  static const char* reason_phrase(int status);

 private:
  struct Worker;
  void run_worker(Worker& w);
  void accept_one(Worker& w);    // a new connection, placed on the worker with the fewest
  void take_handoff(Worker& w);  // connections another worker placed here

  Options options_;
  Handler handler_;
  std::unique_ptr<class TlsContext> tls_;
  std::unique_ptr<class EpollPool> pool_;  // listener, stop fd, worker threads
  int port_ = 0;
  std::atomic<size_t> connections_{0};
  std::vector<std::unique_ptr<Worker>> workers_;
};

// CLOCK_MONOTONIC in ns.
uint64_t monotonic_ns() noexcept;

}  // namespace tickinfer::serving
