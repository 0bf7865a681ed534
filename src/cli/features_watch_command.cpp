// `tickinfer features --watch shm:NAME`: a person's view of a running pipeline's shared-memory
// feature store ([features] shm): the writer's state, then one line per instrument with its
// update count, tick sequence, the age of its entry, whether it is fresh or stale under the
// store's TTL, and its latest vector under the store's own column names. It needs no spec: the
// store carries the names. Snapshots repeat every --interval-ms until --count or Ctrl-C.
// `--watch ring:NAME` follows the feature ring ([features] ring) instead: a line per record (or
// with --summary only the counts: read, lost to overrun, and how far behind it ended).
// `--watch udp:HOST:PORT` receives feature datagrams ([features] udp; HOST may be a multicast
// group, which it joins): records, records lost (gaps in the sender's numbering), late or
// duplicate ones, and datagrams that were not feature datagrams.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.hpp"
#include <arpa/inet.h>
#include <sys/socket.h>

#include "features/feature_datagram.hpp"
#include "features/shm_feature_ring.hpp"
#include "feed/udp_socket.hpp"
#include "features/shm_feature_store.hpp"
#include "stats/clock.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::cli {
namespace {

std::atomic<bool> g_watch_stop{false};
void on_watch_sig(int) { g_watch_stop = true; }

struct SnapshotCounts {
  std::size_t fresh = 0, stale = 0, empty = 0, busy = 0;
};

SnapshotCounts print_snapshot(const features::ShmFeatureReader& r, const std::string& name, std::size_t columns,
                              std::int64_t stale_after_ns) {
  const std::int64_t now = stats::realtime_ns();
  const std::int64_t hb = r.heartbeat_ns();
  std::printf("feature store shm:%s: set '%s', %zu instruments x %zu features, ttl %s, writer pid %llu %s "
              "(heartbeat %.1f ms ago)\n",
              name.c_str(), r.set_name().c_str(), r.slots(), r.width(),
              r.ttl_ns() > 0 ? (std::to_string(r.ttl_ns() / 1'000'000) + " ms").c_str() : "none",
              static_cast<unsigned long long>(r.writer_pid()), features::to_string(r.writer_state(now, stale_after_ns)),
              static_cast<double>(now - hb) / 1e6);
  std::printf("%10s %10s %12s %10s %6s %5s", "instrument", "updates", "tick_seq", "age_ms", "state", "warm");
  for (std::size_t c = 0; c < columns; ++c) std::printf(" %14.14s", r.names()[c].c_str());
  std::printf("\n");
  SnapshotCounts n;
  std::vector<double> v(r.width());
  for (std::size_t s = 0; s < r.slots(); ++s) {
    features::ShmRowMeta m;
    // The age is judged after the copy, so an entry published during the snapshot is not
    // shown younger than zero.
    features::ShmRead st = r.read(s, v.data(), &m);
    const std::int64_t at = stats::realtime_ns();
    if (st == features::ShmRead::Ok && r.ttl_ns() > 0 && at - m.published_ns > r.ttl_ns()) st = features::ShmRead::Stale;
    switch (st) {
      case features::ShmRead::Ok: ++n.fresh; break;
      case features::ShmRead::Stale: ++n.stale; break;
      case features::ShmRead::Empty: ++n.empty; break;
      case features::ShmRead::Busy: ++n.busy; break;
    }
    std::printf("%10u", r.instrument_at(s));
    if (st == features::ShmRead::Empty || st == features::ShmRead::Busy) {
      std::printf(" %10s %12s %10s %6s\n", "-", "-", "-", features::to_string(st));
      continue;
    }
    std::printf(" %10llu %12llu %10.1f %6s %5s", static_cast<unsigned long long>(m.updates),
                static_cast<unsigned long long>(m.tick_seq), static_cast<double>(at - m.published_ns) / 1e6,
                features::to_string(st), (m.flags & features::kShmAllWarm) ? "yes" : "no");
    for (std::size_t c = 0; c < columns; ++c) std::printf(" %14.6g", v[c]);
    std::printf("\n");
  }
  std::printf("%zu fresh, %zu stale, %zu never written, %zu busy\n", n.fresh, n.stale, n.empty, n.busy);
  std::fflush(stdout);
  return n;
}

// Follows the ring until --count records, --idle-exit seconds without one after the first, or a
// signal.
int follow_ring(const std::string& name, long count, double idle_exit_s, bool summary, std::size_t columns,
                bool from_start) {
  features::FeatureRingReader ring("/" + name, from_start);
  columns = std::min(columns, ring.width());
  std::vector<double> v(ring.width());
  features::RingRecord r;
  std::uint64_t read = 0;
  std::int64_t last_ns = 0;
  while (!g_watch_stop.load() && (count == 0 || static_cast<long>(read) < count)) {
    if (!ring.poll(r, v.data())) {
      const std::int64_t now = stats::monotonic_ns();
      if (read > 0 && idle_exit_s > 0 && static_cast<double>(now - last_ns) / 1e9 > idle_exit_s) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));  // a person's tool: no core spent spinning
      continue;
    }
    ++read;
    last_ns = stats::monotonic_ns();
    if (summary) continue;
    std::printf("instrument %u tick %llu age %.1f us", r.instrument, static_cast<unsigned long long>(r.tick_seq),
                static_cast<double>(stats::realtime_ns() - r.published_ns) / 1e3);
    for (std::size_t c = 0; c < columns; ++c) std::printf(" %s=%.6g", ring.names()[c].c_str(), v[c]);
    std::printf("\n");
  }
  std::printf("feature ring shm:%s: %llu records read, %llu lost to overrun, %llu behind at exit\n", name.c_str(),
              static_cast<unsigned long long>(read), static_cast<unsigned long long>(ring.missed()),
              static_cast<unsigned long long>(ring.lag()));
  return 0;
}

int follow_udp(const std::string& host_port, long count, double idle_exit_s, bool summary, std::size_t columns,
               const std::string& ready_file) {
  const auto c = host_port.rfind(':');
  if (c == std::string::npos) throw UsageError("--watch udp: expects udp:HOST:PORT");
  feed::ReceiverConfig rc;
  const std::string host = host_port.substr(0, c);
  const bool group = IN_MULTICAST(ntohl(feed::make_address(host, 0).sin_addr.s_addr));
  if (group) rc.group = host;
  else rc.bind_address = host;
  rc.port = static_cast<std::uint16_t>(std::stoi(host_port.substr(c + 1)));
  rc.kernel_timestamps = false;
  rc.rcvbuf_bytes = 64 << 20;
  feed::UdpSocket udp = feed::UdpSocket::receiver(rc);
  if (!ready_file.empty()) {
    std::FILE* f = std::fopen(ready_file.c_str(), "w");
    if (!f) throw Error("ready file '" + ready_file + "': cannot create");
    std::fclose(f);
  }
  std::vector<std::uint8_t> buf(65536);
  std::vector<double> v(features::kMaxFeatures);
  features::RingRecord r;
  std::uint64_t records = 0, lost = 0, late = 0, malformed = 0, next = 0;
  std::int64_t last_ns = 0;
  std::string why;
  while (!g_watch_stop.load() && (count == 0 || static_cast<long>(records) < count)) {
    const ssize_t n = ::recv(udp.fd(), buf.data(), buf.size(), MSG_DONTWAIT);
    if (n <= 0) {
      if (records + malformed > 0 && idle_exit_s > 0 && static_cast<double>(stats::monotonic_ns() - last_ns) / 1e9 > idle_exit_s)
        break;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      continue;
    }
    last_ns = stats::monotonic_ns();
    features::FeatureDatagram d;
    if (!features::decode_feature_datagram(buf.data(), static_cast<std::size_t>(n), d, &why)) {
      if (malformed++ == 0) std::fprintf(stderr, "features --watch: %s\n", why.c_str());
      continue;
    }
    if (d.first + d.count <= next) {  // all of it seen before
      late += d.count;
      continue;
    }
    if (d.first > next) lost += d.first - next;
    next = d.first + d.count;
    for (std::size_t i = 0; i < d.count; ++i) {
      ++records;
      if (summary) continue;
      features::decode_feature_record(d, i, r, v.data());
      std::printf("instrument %u tick %llu age %.1f us", r.instrument, static_cast<unsigned long long>(r.tick_seq),
                  static_cast<double>(stats::realtime_ns() - r.published_ns) / 1e3);
      for (std::size_t k = 0; k < std::min(columns, d.width); ++k) std::printf(" %.6g", v[k]);
      std::printf("\n");
    }
  }
  std::printf("feature vectors udp:%s: %llu records read, %llu lost, %llu late or duplicate, %llu malformed datagrams\n",
              host_port.c_str(), static_cast<unsigned long long>(records), static_cast<unsigned long long>(lost),
              static_cast<unsigned long long>(late), static_cast<unsigned long long>(malformed));
  return 0;
}

}  // namespace

ArgParser features_watch_parser() {
  ArgParser p("features", "watch a running pipeline's feature store, feature ring or feature datagrams");
  p.option("watch", "shm:NAME|ring:NAME|udp:HOST:PORT",
           "the store ([features] shm of the run's config), the ring ([features] ring) or the datagrams ([features] udp)");
  p.option("ready-file", "FILE", "udp: write this file once the socket is bound");
  p.option("interval-ms", "MS", "time between snapshots", "1000");
  p.option("count", "N", "stop after N snapshots, or N ring/udp records (0: until Ctrl-C)", "0");
  p.option("columns", "K", "show the first K features (default: all)", "64");
  p.option("stale-after-ms", "MS", "report the writer stale when its heartbeat is older than this", "2000");
  p.option("idle-exit", "S", "ring, udp: stop after this long without a record once one was seen (0: never)", "0");
  p.flag("summary", "ring, udp: print only the final counts");
  p.flag("from-start", "ring: start at the oldest record still held (else at the next one)");
  return p;
}

int run_features_watch(const ArgParser& a) {
  const std::string src = a.value("watch");
  const bool ring = src.rfind("ring:", 0) == 0 && src.size() > 5;
  const bool udp = src.rfind("udp:", 0) == 0 && src.size() > 4;
  if (!ring && !udp && (src.rfind("shm:", 0) != 0 || src.size() == 4))
    throw UsageError("--watch expects shm:NAME, ring:NAME or udp:HOST:PORT, got '" + src + "'");
  const std::string name = src.substr(ring ? 5 : 4);
  const long interval_ms = a.integer("interval-ms", 1, 3'600'000);
  const long count = a.integer("count", 0, 1L << 40);
  const auto columns = static_cast<std::size_t>(a.integer("columns", 0, 64));
  const std::int64_t stale_after_ns = a.integer("stale-after-ms", 1, 86'400'000) * 1'000'000;
  std::signal(SIGINT, on_watch_sig);
  std::signal(SIGTERM, on_watch_sig);
  if (udp)
    return follow_udp(src.substr(4), count, a.number("idle-exit", 0, 1e7), a.flag_set("summary"), columns,
                      a.value("ready-file"));
  if (ring)
    return follow_ring(name, count, a.number("idle-exit", 0, 1e7), a.flag_set("summary"), columns, a.flag_set("from-start"));
  const features::ShmFeatureReader reader("/" + name);
  for (long k = 0; !g_watch_stop.load() && (count == 0 || k < count); ++k) {
    if (k > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
      std::printf("\n");
    }
    print_snapshot(reader, name, std::min(columns, reader.width()), stale_after_ns);
  }
  return 0;
}

}  // namespace tickinfer::cli
