// `tickinfer features --watch shm:NAME`: a person's view of a running pipeline's shared-memory
// feature store ([features] shm): the writer's state, then one line per instrument with its
// update count, tick sequence, the age of its entry, whether it is fresh or stale under the
// store's TTL, and its latest vector under the store's own column names. It needs no spec: the
// store carries the names. Snapshots repeat every --interval-ms until --count or Ctrl-C.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.hpp"
#include "features/shm_feature_store.hpp"
#include "stats/clock.hpp"

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

}  // namespace

ArgParser features_watch_parser() {
  ArgParser p("features", "watch a running pipeline's shared-memory feature store");
  p.option("watch", "shm:NAME", "the store ([features] shm of the run's config)");
  p.option("interval-ms", "MS", "time between snapshots", "1000");
  p.option("count", "N", "stop after N snapshots (0: until Ctrl-C)", "0");
  p.option("columns", "K", "show the first K features (default: all)", "64");
  p.option("stale-after-ms", "MS", "report the writer stale when its heartbeat is older than this", "2000");
  return p;
}

int run_features_watch(const ArgParser& a) {
  const std::string src = a.value("watch");
  if (src.rfind("shm:", 0) != 0 || src.size() == 4)
    throw UsageError("--watch expects shm:NAME, got '" + src + "'");
  const std::string name = src.substr(4);
  const long interval_ms = a.integer("interval-ms", 1, 3'600'000);
  const long count = a.integer("count", 0, 1L << 40);
  const auto columns = static_cast<std::size_t>(a.integer("columns", 0, 64));
  const std::int64_t stale_after_ns = a.integer("stale-after-ms", 1, 86'400'000) * 1'000'000;
  const features::ShmFeatureReader reader("/" + name);
  std::signal(SIGINT, on_watch_sig);
  std::signal(SIGTERM, on_watch_sig);
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
