// The shared-memory feature ring: records come back whole and in order; a reader that is lapped
// counts exactly what it lost; with one writer publishing 300,000 records and three reader
// processes at once, the two that keep up lose nothing and see every record once, in order, and
// the slow one never holds the writer back: what it read plus what it missed is what was written.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "features/shm_feature_ring.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::features {
namespace {

FeatureSpec three_features() {
  return parse_feature_spec(
      "[feature_set]\nname = \"ringset\"\ninstruments = [1, 2]\n[[feature]]\nkind = \"mid\"\n"
      "[[feature]]\nkind = \"spread_bps\"\n[[feature]]\nkind = \"log_return\"\nticks = 5\n");
}

std::string ring_name(const char* what) { return "/tickinfer-ring-" + std::string(what) + "-" + std::to_string(getpid()); }

// Record k: every field derived from k, so a mix of two publications is detectable.
void make(std::uint64_t k, RingRecord& r, double* v) {
  r.instrument = static_cast<std::uint32_t>(k % 7);
  r.tick_seq = k;
  r.ts_ns = static_cast<std::int64_t>(3 * k);
  r.published_ns = static_cast<std::int64_t>(k + 5);
  r.flags = k & 3;
  for (int i = 0; i < 3; ++i) v[i] = static_cast<double>(k) + i * 0.25;
}
bool whole(const RingRecord& r, const double* v) {
  RingRecord e;
  double ev[3];
  make(r.tick_seq, e, ev);
  return r.instrument == e.instrument && r.ts_ns == e.ts_ns && r.published_ns == e.published_ns && r.flags == e.flags &&
         v[0] == ev[0] && v[1] == ev[1] && v[2] == ev[2];
}

TEST(FeaturesRing, RecordsInOrderThenALappedReaderCountsWhatItLost) {
  const std::string name = ring_name("order");
  FeatureRingWriter w(name, three_features(), 8);
  RingRecord r;
  double v[3];
  for (std::uint64_t k = 1; k <= 5; ++k) {
    make(k, r, v);
    w.publish(r, v);
  }
  FeatureRingReader late(name, false);  // starts at the next record
  FeatureRingReader from_start(name, true);
  EXPECT_EQ(from_start.set_name(), "ringset");
  EXPECT_EQ(from_start.names()[2], "log_return_5");
  EXPECT_EQ(from_start.capacity(), 8u);
  EXPECT_EQ(late.lag(), 0u);
  EXPECT_EQ(from_start.lag(), 5u);
  for (std::uint64_t k = 1; k <= 5; ++k) {
    ASSERT_TRUE(from_start.poll(r, v));
    EXPECT_EQ(r.tick_seq, k);
    EXPECT_TRUE(whole(r, v));
  }
  EXPECT_FALSE(from_start.poll(r, v));
  // 20 more while nobody reads: the ring holds the last 8 (18..25); 12 are lost to each reader.
  for (std::uint64_t k = 6; k <= 25; ++k) {
    make(k, r, v);
    w.publish(r, v);
  }
  EXPECT_EQ(from_start.lag(), 20u);
  for (FeatureRingReader* rd : {&from_start, &late}) {
    std::uint64_t next = 18;
    while (rd->poll(r, v)) {
      EXPECT_EQ(r.tick_seq, next++);
      EXPECT_TRUE(whole(r, v));
    }
    EXPECT_EQ(next, 26u);
    EXPECT_EQ(rd->missed(), 12u);
    EXPECT_EQ(rd->lag(), 0u);
  }
  FeatureRingWriter::unlink(name);
}

TEST(FeaturesRing, ThingsThatAreNotARingAreRefused) {
  EXPECT_THROW(FeatureRingWriter(ring_name("bad"), three_features(), 6), Error);  // not a power of two
  try {
    FeatureRingReader r(ring_name("absent"), false);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is `tickinfer run` with [features] ring running?"), std::string::npos);
  }
}

struct Shared {
  std::atomic<int> ready;
  std::atomic<int> done;
  std::atomic<std::uint64_t> read[3], missed[3], torn[3], out_of_order[3], behind_at_end[3];
};

TEST(FeaturesRing, ReadersThatKeepUpLoseNothingAndASlowOneCountsWhatItLost) {
  constexpr std::uint64_t kRecords = 300'000;
  constexpr std::size_t kCapacity = 131072;
  const std::string name = ring_name("fanout");
  auto* sh = static_cast<Shared*>(mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(sh, MAP_FAILED);
  new (sh) Shared{};
  FeatureRingWriter w(name, three_features(), kCapacity);
  std::vector<pid_t> pids;
  for (int id = 0; id < 3; ++id) {
    const pid_t pid = fork();
    if (pid == 0) {
      FeatureRingReader rd(name, true);
      sh->ready.fetch_add(1);
      RingRecord r;
      double v[3];
      std::uint64_t last = 0, n = 0;
      const bool slow = id == 2;
      for (;;) {
        if (rd.poll(r, v)) {
          if (!whole(r, v)) sh->torn[id].fetch_add(1);
          if (r.tick_seq <= last || (!slow && r.tick_seq != last + 1)) sh->out_of_order[id].fetch_add(1);
          last = r.tick_seq;
          // The slow consumer: 2 ms of "work" every 64 records, about 32,000 records a second.
          if (slow && ++n % 64 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
          continue;
        }
        if (sh->done.load() && rd.lag() == 0) break;
        sched_yield();
      }
      sh->read[id] = rd.position() - rd.missed();
      sh->missed[id] = rd.missed();
      _exit(0);
    }
    pids.push_back(pid);
  }
  while (sh->ready.load() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // About 100,000 records a second: the ring holds 1.3 s of them, so a reader that keeps up can
  // be descheduled for a while (4 processes on this machine's cores) and still lose nothing.
  RingRecord r;
  double v[3];
  const auto t0 = std::chrono::steady_clock::now();
  for (std::uint64_t k = 1; k <= kRecords; ++k) {
    make(k, r, v);
    w.publish(r, v);
    if (k % 1500 == 0) std::this_thread::sleep_until(t0 + std::chrono::microseconds(k * 1'000'000 / 100'000));
  }
  sh->done = 1;
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  for (int id = 0; id < 3; ++id) {
    EXPECT_EQ(sh->torn[id].load(), 0u) << id;
    EXPECT_EQ(sh->out_of_order[id].load(), 0u) << id;
    EXPECT_EQ(sh->read[id].load() + sh->missed[id].load(), kRecords) << id;
  }
  EXPECT_EQ(sh->missed[0].load(), 0u);
  EXPECT_EQ(sh->missed[1].load(), 0u);
  EXPECT_GT(sh->missed[2].load(), 0u);  // the slow one fell behind by more than the ring, and knows it
  std::printf("%llu records; fast readers read %llu and %llu, missed 0; slow reader read %llu, missed %llu\n",
              static_cast<unsigned long long>(kRecords), static_cast<unsigned long long>(sh->read[0].load()),
              static_cast<unsigned long long>(sh->read[1].load()), static_cast<unsigned long long>(sh->read[2].load()),
              static_cast<unsigned long long>(sh->missed[2].load()));
  FeatureRingWriter::unlink(name);
  munmap(sh, sizeof(Shared));
}

}  // namespace
}  // namespace tickinfer::features
