#include "pipeline/metrics_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "pipeline/metrics_text.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::pipeline {

MetricsServer::MetricsServer(const std::string& host, std::uint16_t port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw Error("metrics endpoint: socket failed: " + std::string(std::strerror(errno)));
  int one = 1;
  setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host.c_str(), &a.sin_addr) != 1) {
    ::close(fd_);
    throw Error("metrics endpoint: '" + host + "' is not an IPv4 address");
  }
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 16) != 0) {
    const int e = errno;
    ::close(fd_);
    throw Error("metrics endpoint " + host + ":" + std::to_string(port) + ": " + std::strerror(e));
  }
  socklen_t len = sizeof a;
  getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
  port_ = ntohs(a.sin_port);
  text_.reserve(kMetricsTextBytes);
  response_.reserve(kMetricsTextBytes + 256);
  thread_ = std::thread([this] { serve(); });
}

MetricsServer::~MetricsServer() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0) ::close(fd_);
}

void MetricsServer::set_text(std::string_view text) {
  std::lock_guard<std::mutex> g(mu_);
  text_.assign(text);
}

void MetricsServer::serve() {
  while (!stop_.load()) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) continue;
    pollfd q{c, POLLIN, 0};
    char req[1024];
    if (::poll(&q, 1, 500) > 0) (void)::recv(c, req, sizeof req, 0);  // the request itself does not matter
    {
      std::lock_guard<std::mutex> g(mu_);
      char head[160];
      std::snprintf(head, sizeof head,
                    "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: %zu\r\n"
                    "Connection: close\r\n\r\n",
                    text_.size());
      response_.assign(head);
      response_.append(text_);
    }
    (void)::send(c, response_.data(), response_.size(), MSG_NOSIGNAL);
    ::close(c);
  }
}

}  // namespace tickinfer::pipeline
