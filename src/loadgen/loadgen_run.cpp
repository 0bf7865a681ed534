// tickinfer loadgen's engine (loadgen.hpp): a thread and a connection per worker, closed or open
// loop, per-worker histograms merged at the end; and the REST transport.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>

#include "loadgen/loadgen.hpp"
#include "stats/clock.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::loadgen {

namespace {

constexpr std::int64_t kHistogramCeilingNs = 600'000'000'000;  // 10 min: a stalled run still fits

void sleep_until(std::int64_t t_ns) {
  timespec ts{static_cast<time_t>(t_ns / 1'000'000'000), static_cast<long>(t_ns % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

struct WorkerState {
  WorkerState() : total(kHistogramCeilingNs), service(kHistogramCeilingNs), queue(kHistogramCeilingNs) {}
  stats::LatencyHistogram total, service, queue;
  std::uint64_t ok = 0, errors = 0;
  double sum = 0, sum_sq = 0;  // of total latency, ns
  bool broken = false;
};

}  // namespace

LoadResult::LoadResult() : total(kHistogramCeilingNs), service(kHistogramCeilingNs), queue(kHistogramCeilingNs) {}

LoadResult run_load(const LoadOptions& o, const TransportFactory& connect) {
  const int n = o.workers;
  std::vector<std::unique_ptr<Transport>> conns;
  for (int k = 0; k < n; ++k) conns.push_back(connect());  // all open before the clock starts
  std::vector<WorkerState> state(static_cast<size_t>(n));
  std::atomic<std::uint64_t> done{0};
  const bool open = o.rate > 0;
  const double interval_ns = open ? 1e9 / o.rate : 0;
  const std::int64_t t0 = stats::monotonic_ns() + 2'000'000;
  const std::int64_t measure_from = t0 + static_cast<std::int64_t>(o.warmup_seconds * 1e9);
  const std::int64_t end = measure_from + static_cast<std::int64_t>(o.seconds * 1e9);
  std::atomic<int> running{n};
  std::vector<std::thread> threads;
  for (int k = 0; k < n; ++k)
    threads.emplace_back([&, k] {
      prctl(PR_SET_TIMERSLACK, 1000UL);  // wake within a microsecond of each due time
      WorkerState& w = state[static_cast<size_t>(k)];
      Transport& t = *conns[static_cast<size_t>(k)];
      sleep_until(t0);
      for (long j = 0;; ++j) {
        std::int64_t due = 0;
        if (open) {
          due = t0 + static_cast<std::int64_t>((static_cast<double>(j) * n + k) * interval_ns);
          if (due >= end) break;
          if (stats::monotonic_ns() < due) sleep_until(due);
        } else if (j >= o.requests_per_worker) {
          break;
        }
        const std::int64_t sent = stats::monotonic_ns();
        if (!open) due = sent;
        bool broken = false;
        const bool ok = t.call(broken);
        const std::int64_t answered = stats::monotonic_ns();
        if (!open || due >= measure_from) {
          w.total.record(answered - due);
          const double t_ns = static_cast<double>(answered - due);
          w.sum += t_ns;
          w.sum_sq += t_ns * t_ns;
          w.service.record(answered - sent);
          w.queue.record(sent - due);
          (ok ? w.ok : w.errors) += 1;
          done.fetch_add(1, std::memory_order_relaxed);
        }
        if (broken) {
          w.broken = true;
          break;
        }
      }
      running.fetch_sub(1);
    });
  if (o.progress) {
    std::int64_t next = t0 + 1'000'000'000;
    std::uint64_t last = 0;
    while (running.load() > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      const std::int64_t now = stats::monotonic_ns();
      if (now < next) continue;
      const std::uint64_t d = done.load(std::memory_order_relaxed);
      std::fprintf(stderr, "[%6.1fs] %10llu requests answered, %8.0f/s\n", static_cast<double>(now - t0) / 1e9,
                   static_cast<unsigned long long>(d), static_cast<double>(d - last));
      last = d;
      next += 1'000'000'000;
    }
  }
  for (auto& t : threads) t.join();
  LoadResult r;
  r.seconds = static_cast<double>(stats::monotonic_ns() - std::max(t0, measure_from)) / 1e9;
  if (open) r.seconds = o.seconds;
  double sum = 0, sum_sq = 0;
  for (const WorkerState& w : state) {
    sum += w.sum;
    sum_sq += w.sum_sq;
    r.total.merge(w.total);
    r.service.merge(w.service);
    r.queue.merge(w.queue);
    r.ok += w.ok;
    r.errors += w.errors;
    r.broken_connections += w.broken ? 1 : 0;
  }
  const double cnt = static_cast<double>(r.total.count());
  if (cnt > 1) r.total_stddev_ns = std::sqrt(std::max(0.0, (sum_sq - sum * sum / cnt) / (cnt - 1)));
  return r;
}

namespace {

// One keep-alive HTTP/1.1 connection, one request at a time, the whole answer read (by
// Content-Length; the servers measured here answer with one).
class RestTransport final : public Transport {
 public:
  RestTransport(const std::string& host, int port, const std::string& path, const std::string& body) {
    request_ = "POST " + path + " HTTP/1.1\r\nHost: " + host + ":" + std::to_string(port) +
               "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) throw Error("loadgen: '" + host + "' is not an IPv4 address");
    if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
      throw Error("loadgen: cannot connect to " + host + ":" + std::to_string(port) + ": " + std::strerror(errno));
    const int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    in_.reserve(1 << 16);
  }
  ~RestTransport() override {
    if (fd_ >= 0) close(fd_);
  }
  bool call(bool& broken) override {
    if (send(fd_, request_.data(), request_.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request_.size())) {
      broken = true;
      return false;
    }
    for (;;) {
      const size_t he = in_.find("\r\n\r\n");
      if (he != std::string::npos) {
        size_t len = 0;
        for (size_t p = 0; p < he;) {  // Content-Length, case-insensitive
          const size_t eol = in_.find("\r\n", p);
          if (eol == std::string::npos || eol > he) break;
          if (eol - p > 15 && strncasecmp(in_.data() + p, "content-length:", 15) == 0)
            len = std::strtoul(in_.c_str() + p + 15, nullptr, 10);
          p = eol + 2;
        }
        if (in_.size() >= he + 4 + len) {
          const bool ok = in_.size() > 12 && in_.compare(9, 3, "200") == 0;
          in_.erase(0, he + 4 + len);
          return ok;
        }
      }
      char buf[65536];
      const ssize_t r = recv(fd_, buf, sizeof buf, 0);
      if (r <= 0) {
        broken = true;
        return false;
      }
      in_.append(buf, static_cast<size_t>(r));
    }
  }

 private:
  int fd_ = -1;
  std::string request_, in_;
};

}  // namespace

std::unique_ptr<Transport> rest_transport(const std::string& host, int port, const std::string& path,
                                          const std::string& body) {
  return std::make_unique<RestTransport>(host, port, path, body);
}

}  // namespace tickinfer::loadgen
