// The feature update path's promises, checked rather than assumed (as engine_hot_path_test does
// for Plan::run): no heap allocation (global operator new and malloc/calloc/realloc replaced by
// counters), no lock (pthread_mutex_lock interposed and counted), no syscall (a forked child in
// seccomp strict mode runs the path; any syscall but read/write/exit kills it). Covered: per-event
// updates of every feature kind, invalid inputs under each policy, bar closes with interpolated
// and invalid rows, on_timer, window pushes, rolling standardization (hot side and refit side),
// the feature cache, and shared-memory publish/read.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>
#include <string>

#include "features/feature_cache.hpp"
#include "features/feature_pipeline.hpp"
#include "features/shm_feature_ring.hpp"
#include "features/shm_feature_store.hpp"

#include "support/counting_allocator.hpp"

namespace tickinfer::features {
namespace {

FeatureSpec spec(InvalidPolicy policy) {
  FeatureSpec s = parse_feature_spec(R"([feature_set]
instruments = [3, 5, 8]
bar_ns = 1000
gap_limit = 3
window = 16
[standardize]
mode = "rolling"
window = 64
refit_every = 16
drift_threshold = 2.0
[[feature]]
kind = "mid"
[[feature]]
kind = "microprice"
[[feature]]
kind = "spread_bps"
[[feature]]
kind = "book_imbalance"
[[feature]]
kind = "log_return"
ticks = 5
[[feature]]
kind = "momentum"
ticks = 10
[[feature]]
kind = "realized_vol"
ticks = 20
[[feature]]
kind = "realized_vol"
window_ns = 5000
capacity = 64
[[feature]]
kind = "ewma_mean"
alpha = 0.1
[[feature]]
kind = "ewma_vol"
alpha = 0.05
[[feature]]
kind = "trade_imbalance"
trades = 20
[[feature]]
kind = "vwap_deviation"
trades = 30
[[feature]]
kind = "time_since_trade"
[[feature]]
kind = "tick_rate"
window_ns = 2000
capacity = 64
)");
  s.invalid_policy = policy;
  return s;
}

// A deterministic stream with gaps, invalid ticks and an unknown instrument; no allocation.
struct Stream {
  std::uint64_t x = 88172645463325252ull;
  std::int64_t ts = 0;
  double mid = 100;
  std::uint64_t next() {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  }
  SourceTick tick() {
    const std::uint64_t r = next();
    ts += 50 + static_cast<std::int64_t>(r % 400);
    if (r % 97 == 0) ts += 6000;   // a long gap (> 3 bars)
    if (r % 89 == 0) ts += 2500;   // a short one
    mid *= 1.0 + (static_cast<double>(r % 2001) - 1000.0) * 1e-6;
    const std::uint32_t inst = (r >> 8) % 7 == 0 ? 99u : static_cast<std::uint32_t>(3 + ((r >> 12) % 3) * ((r >> 12) % 3 == 2 ? 2 : 1));
    SourceTick t;
    const auto px = static_cast<std::int64_t>(mid * 1e8);
    if ((r >> 16) % 10 < 7) {
      md::Quote q;
      q.instrument = inst;
      q.exchange_ts_ns = ts;
      q.bid_price = px - 1'000'000;
      q.ask_price = px + 1'000'000;
      q.bid_size = 1 + static_cast<std::uint32_t>((r >> 20) % 500);
      q.ask_size = 1 + static_cast<std::uint32_t>((r >> 30) % 500);
      if ((r >> 40) % 50 == 0) q.bid_price = q.ask_price + 5;  // crossed
      t.event = md::Event::of(q);
    } else {
      md::Trade tr;
      tr.instrument = inst;
      tr.exchange_ts_ns = ts;
      tr.price = px;
      tr.size = static_cast<std::uint32_t>((r >> 20) % 300);  // sometimes 0: invalid
      tr.aggressor = (r >> 33) & 1 ? md::Side::Buy : md::Side::Sell;
      t.event = md::Event::of(tr);
    }
    if ((r >> 44) % 61 == 0) t.flaw = InvalidReason::NonFinite;
    return t;
  }
};

struct Harness {
  explicit Harness(InvalidPolicy policy)
      : pipeline(spec(policy)), cache(256, pipeline.width(), 10'000),
        writer("/tickinfer-hotpath-" + std::to_string(::getpid()), pipeline.spec()),
        reader("/tickinfer-hotpath-" + std::to_string(::getpid()), pipeline.spec()),
        ring("/tickinfer-hotpath-ring-" + std::to_string(::getpid()), pipeline.spec(), 1024),
        ring_reader("/tickinfer-hotpath-ring-" + std::to_string(::getpid()), false) {
    ShmFeatureWriter::unlink("/tickinfer-hotpath-" + std::to_string(::getpid()));
    FeatureRingWriter::unlink("/tickinfer-hotpath-ring-" + std::to_string(::getpid()));
  }
  // The whole per-tick path as a pipeline thread runs it; returns a checksum so nothing is
  // optimized away.
  double run(int events) {
    double sum = 0;
    double out[64];
    for (int i = 0; i < events; ++i) {
      const SourceTick t = stream.tick();
      const FeatureUpdate& u = pipeline.on_tick(t, i);
      if (i % 500 == 0) pipeline.on_timer(t.event.exchange_ts_ns() + 4000);
      if (u.values && u.has_values) {
        const int slot = pipeline.instrument_index(u.instrument);
        ShmRowMeta meta;
        meta.ts_ns = t.event.exchange_ts_ns();
        writer.publish(static_cast<std::size_t>(slot), u.values, meta);
        if (reader.read(static_cast<std::size_t>(slot), out) == ShmRead::Ok) sum += out[0];
        RingRecord rec;
        rec.instrument = u.instrument;
        rec.tick_seq = static_cast<std::uint64_t>(i);
        ring.publish(rec, u.values);
        if (ring_reader.poll(rec, out)) sum += out[1];
        const CacheKey k{u.instrument, t.event.exchange_ts_ns(), set_id};
        if (const double* hit = cache.get(k, i)) sum += hit[1];
        else cache.put(k, u.values, i);
        if (u.window_ready) sum += pipeline.window(static_cast<std::size_t>(slot)).view()[0];
        sum += u.model_input[0];
      }
      if (i % 64 == 0) pipeline.refit_step();  // the refit side, on this thread for the count
      writer.heartbeat(i);
    }
    return sum;
  }
  Stream stream;
  FeaturePipeline pipeline;
  std::uint64_t set_id = pipeline.spec().feature_set_id();  // computed once (it formats text)
  FeatureCache cache;
  ShmFeatureWriter writer;
  ShmFeatureReader reader;
  FeatureRingWriter ring;
  FeatureRingReader ring_reader;
};

TEST(FeaturesHotPath, UpdatePathNeverAllocatesOrLocks) {
  for (InvalidPolicy policy : {InvalidPolicy::Drop, InvalidPolicy::HoldLast, InvalidPolicy::MarkInvalid}) {
    Harness h(policy);
    h.run(2000);  // warm-up (nothing is lazily allocated, but first-touch belongs outside)
    g_allocs = 0;
    g_locks = 0;
    g_counting = true;
    const double sum = h.run(200000);
    g_counting = false;
    EXPECT_EQ(g_allocs.load(), 0) << invalid_policy_name(policy);
    EXPECT_EQ(g_locks.load(), 0) << invalid_policy_name(policy);
    EXPECT_TRUE(std::isfinite(sum) || std::isnan(sum));
    const auto& c = h.pipeline.counters();
    // The stream really exercised what the test claims to cover.
    EXPECT_GT(c.rows_interpolated, 0u);
    EXPECT_GT(c.rows_invalid, 0u);
    EXPECT_GT(c.invalid_total(), 0u);
    EXPECT_GT(c.unknown_instrument, 0u);
    EXPECT_GT(h.pipeline.standardizer(0).publications(), 0u);
    EXPECT_GT(h.cache.stats().hits + h.cache.stats().evicted, 0u);
  }
}

template <class Fn>
bool runs_without_syscalls(Fn fn) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) != 0) _exit(3);
    fn();
    syscall(SYS_exit, 0);  // plain _exit uses exit_group, which strict mode forbids
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST(FeaturesHotPath, UpdatePathMakesNoSyscalls) {
  Harness h(InvalidPolicy::MarkInvalid);
  h.run(2000);
  EXPECT_TRUE(runs_without_syscalls([&] { h.run(50000); }));
  EXPECT_FALSE(runs_without_syscalls([] { (void)syscall(SYS_getpid); }));  // the harness catches one
}

}  // namespace
}  // namespace tickinfer::features
