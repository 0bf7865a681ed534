#pragma once
// tickinfer's own gRPC server for the insecure port: epoll, HTTP/2 (grpc_h2_connection.hpp) and
// the handler run on the thread that read the call, like the REST server (http_server.hpp):
// `threads` workers, each with its own epoll set holding the shared listening socket
// (EPOLLEXCLUSIVE) and the connections it accepted, for life. Nothing is handed between threads
// per call. grpc++ 1.51 (Debian 12) costs about 80 us of CPU per unary call on each side on the
// 2-vCPU machine of docs/performance.md; this path costs a few.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "serving/h2/grpc_h2_connection.hpp"

namespace tickinfer::serving {

class GrpcH2Server {
 public:
  // worker: 0..threads-1, for per-thread scratch.
  using Handler = std::function<void(const GrpcCall& call, size_t worker, GrpcReply& reply)>;

  struct Options {
    std::string bind_address = "0.0.0.0";
    int port = 0;  // 0 = ephemeral (see port())
    size_t threads = 1;
    size_t max_connections = 1024;
    GrpcH2Limits limits;
  };

  // Binds and listens; throws tickinfer::Error naming the address on failure.
  GrpcH2Server(Options options, Handler handler);
  ~GrpcH2Server();
  GrpcH2Server(const GrpcH2Server&) = delete;
  GrpcH2Server& operator=(const GrpcH2Server&) = delete;

  void start();
  void stop();  // idempotent: GOAWAY to every connection, joins the workers, closes everything
  // From any thread: every worker re-runs the handler of its open streaming calls
  // (GrpcH2Connection::refresh_open_streams) and sends what changed.
  void refresh_streams();
  int port() const { return port_; }
  size_t connections() const { return connections_.load(std::memory_order_relaxed); }

 private:
  struct Worker;
  struct Conn;
  void run_worker(Worker& w);

  Options options_;
  Handler handler_;
  std::unique_ptr<class EpollPool> pool_;  // listener, stop fd, worker threads
  int port_ = 0;
  std::atomic<size_t> connections_{0};
  std::vector<std::unique_ptr<Worker>> workers_;
};

}  // namespace tickinfer::serving
