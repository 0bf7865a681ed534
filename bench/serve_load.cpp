// serve_load: an open-loop (constant-rate) HTTP/1.1 load generator for `tickinfer serve` and
// its HTTP floor (nginx answering a fixed body), in the manner of wrk2.
//
// Each of C keep-alive connections sends on a fixed schedule: request k of connection c is due
// at t0 + (k * C + c) / rate. At most one request is outstanding per connection; when a reply
// is late the next request leaves late, but every latency is measured from the request's
// *scheduled* time (coordinated-omission free), so a stall shows up in the tail as the clients
// would see it. One thread drives all connections through epoll; it sleeps in epoll_pwait2 with
// a ns timeout (timer slack set to 1 ns) until the next send is due, so it does not spin on a
// core the server needs.
//
// usage: serve_load --port P [--host 127.0.0.1] [--path /v1/models/mlp_small:predict]
//                   [--body-file F | --body S] [--method POST] [--connections 8]
//                   [--rate 5000] [--seconds 10] [--warmup-seconds 2] [--label name]
// Prints one line: label, rate, count, errors, p50/p90/p99/p99.9/max in microseconds.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "stats/latency_histogram.hpp"

namespace {

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

struct Conn {
  int fd = -1;
  int64_t k = 0;              // requests sent so far
  bool busy = false;          // a request is outstanding
  int64_t scheduled_ns = 0;   // of the outstanding request
  std::string in;
};

[[noreturn]] void die(const std::string& m) {
  std::fprintf(stderr, "serve_load: %s\n", m.c_str());
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string host = "127.0.0.1", path = "/v1/models/mlp_small:predict", body, method = "POST", label = "server";
  int port = 0, conns = 8;
  double rate = 5000, seconds = 10, warmup = 2;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) die("option " + a + " needs a value");
      return argv[++i];
    };
    if (a == "--port") port = std::atoi(next().c_str());
    else if (a == "--host") host = next();
    else if (a == "--path") path = next();
    else if (a == "--body") body = next();
    else if (a == "--body-file") {
      std::ifstream f(next());
      std::ostringstream ss;
      ss << f.rdbuf();
      body = ss.str();
    } else if (a == "--method") method = next();
    else if (a == "--connections") conns = std::atoi(next().c_str());
    else if (a == "--rate") rate = std::atof(next().c_str());
    else if (a == "--seconds") seconds = std::atof(next().c_str());
    else if (a == "--warmup-seconds") warmup = std::atof(next().c_str());
    else if (a == "--label") label = next();
    else die("unknown option " + a);
  }
  if (port <= 0 || conns <= 0 || rate <= 0 || seconds <= 0) die("need --port, and positive --connections/--rate/--seconds");
  prctl(PR_SET_TIMERSLACK, 1UL);
  const std::string request = method + " " + path + " HTTP/1.1\r\nHost: " + host +
                              "\r\nContent-Type: application/json\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\n\r\n" + body;
  const int ep = epoll_create1(0);
  std::vector<Conn> c(static_cast<size_t>(conns));
  for (int i = 0; i < conns; ++i) {
    c[i].fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, host.c_str(), &a.sin_addr);
    if (connect(c[i].fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) die("connect failed: " + std::string(std::strerror(errno)));
    const int one = 1;
    setsockopt(c[i].fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(i);
    epoll_ctl(ep, EPOLL_CTL_ADD, c[i].fd, &ev);
  }
  const double interval_ns = 1e9 / rate;
  tickinfer::stats::LatencyHistogram hist;
  int64_t errors = 0, measured = 0;
  const int64_t t0 = now_ns() + 1000000;
  const int64_t measure_from = t0 + static_cast<int64_t>(warmup * 1e9);
  const int64_t end = measure_from + static_cast<int64_t>(seconds * 1e9);
  auto due = [&](int i) {
    return t0 + static_cast<int64_t>((static_cast<double>(c[i].k) * conns + i) * interval_ns);
  };
  epoll_event events[64];
  for (;;) {
    int64_t now = now_ns();
    // Send every request that is due on an idle connection.
    int64_t next_due = INT64_MAX;
    bool all_done = true;
    for (int i = 0; i < conns; ++i) {
      if (c[i].busy) {
        all_done = false;
        continue;
      }
      const int64_t d = due(i);
      if (d >= end) continue;
      all_done = false;
      if (d <= now) {
        if (send(c[i].fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
          die("send failed (server closed the connection?)");
        }
        c[i].busy = true;
        c[i].scheduled_ns = d;
        c[i].k++;
      } else if (d < next_due) {
        next_due = d;
      }
    }
    if (all_done) break;
    now = now_ns();
    timespec to{0, 0};
    bool any_busy = false;
    for (const auto& x : c) any_busy = any_busy || x.busy;
    if (next_due != INT64_MAX && next_due > now) {
      to.tv_sec = (next_due - now) / 1000000000;
      to.tv_nsec = (next_due - now) % 1000000000;
    } else if (next_due == INT64_MAX && any_busy) {
      to.tv_sec = 1;
    }
    const int n = epoll_pwait2(ep, events, 64, &to, nullptr);
    for (int e = 0; e < n; ++e) {
      Conn& x = c[events[e].data.u32];
      char buf[65536];
      const ssize_t r = recv(x.fd, buf, sizeof buf, 0);
      if (r <= 0) die("connection closed by the server");
      x.in.append(buf, static_cast<size_t>(r));
      for (;;) {
        const size_t he = x.in.find("\r\n\r\n");
        if (he == std::string::npos) break;
        size_t len = 0;
        const char* cl = strcasestr(x.in.c_str(), "content-length:");
        if (cl && cl < x.in.c_str() + he) len = std::strtoul(cl + 15, nullptr, 10);
        if (x.in.size() < he + 4 + len) break;
        const int status = std::atoi(x.in.c_str() + 9);
        const int64_t done = now_ns();
        if (x.scheduled_ns >= measure_from) {
          hist.record(done - x.scheduled_ns);
          ++measured;
          if (status != 200) ++errors;
        }
        x.in.erase(0, he + 4 + len);
        x.busy = false;
      }
    }
  }
  const double us = 1000.0;
  std::printf("%-22s rate %7.0f/s  n %8lld  errors %lld  p50 %7.1f  p90 %7.1f  p99 %7.1f  p99.9 %7.1f  max %8.1f us\n",
              label.c_str(), static_cast<double>(measured) / seconds, static_cast<long long>(measured),
              static_cast<long long>(errors), hist.value_at_percentile(50) / us, hist.value_at_percentile(90) / us,
              hist.value_at_percentile(99) / us, hist.value_at_percentile(99.9) / us, hist.max() / us);
  return errors ? 1 : 0;
}
