#pragma once
// A tiny HTTP/1.0 text endpoint for `[run] metrics = "HOST:PORT"`: any GET is answered with the
// current metrics text (metrics_text.hpp) and the connection closed. It runs on its own thread and
// never touches the hot path: the pipeline publishes a snapshot under a mutex once per status
// interval, from the reporting side. Neither publishing nor serving allocates (buffers of
// kMetricsTextBytes are reserved up front), so scrapes leave the run's allocation counter flat.
#include <atomic>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace tickinfer::pipeline {

class MetricsServer {
 public:
  // Binds and listens; throws tickinfer::Error naming the address on failure.
  MetricsServer(const std::string& host, std::uint16_t port);
  ~MetricsServer();
  void set_text(std::string_view text);
  std::uint16_t port() const noexcept { return port_; }

 private:
  void serve();
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::mutex mu_;
  std::string text_;      // guarded by mu_
  std::string response_;  // the serving thread's
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace tickinfer::pipeline
