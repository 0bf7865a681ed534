// The feed's hot path never allocates or locks: parse, arbitrate/sequence (in order, reordered,
// duplicated, gaps skipped), decode and the SPSC ring, counted with malloc/operator new and
// pthread_mutex_lock replaced by counters. A forked child also runs it under seccomp strict mode
// (any system call but read/write/exit kills it).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include "feed/arbiter.hpp"
#include "feed/messages.hpp"
#include "feed/moldudp64.hpp"
#include "tickinfer/spsc_ring.hpp"

#include "support/counting_allocator.hpp"

namespace tickinfer::feed {
namespace {

struct DecodingSink : SequencerSink {
  SpscRing<md::Event>* ring;
  std::uint64_t delivered = 0, lost = 0;
  void on_message(std::uint64_t, const std::uint8_t* msg, std::uint16_t len, const RxMeta&,
                  std::int64_t) noexcept override {
    md::Event e;
    if (decode_message(msg, len, e) == DecodeStatus::Ok) {
      md::Event out;
      ring->try_push(e);
      ring->try_pop(out);
      ++delivered;
    }
  }
  void on_lost(std::uint64_t, std::uint64_t c, LossReason) noexcept override { lost += c; }
};

// Packets of 2 quotes each, pre-built: seq 1, 3, 5, ...
struct Workload {
  std::vector<std::vector<std::uint8_t>> packets;
  explicit Workload(int n) {
    for (int i = 0; i < n; ++i) {
      std::vector<std::uint8_t> b(128);
      PacketBuilder pb(b.data(), b.size());
      pb.start(Session::from("HOT"), 1 + 2ull * i);
      for (int k = 0; k < 2; ++k) {
        md::Quote q;
        q.instrument = 1 + k;
        q.bid_price = 100 + i;
        q.ask_price = 101 + i;
        std::uint8_t m[kQuoteBytes];
        encode_quote(q, m);
        pb.add(m, kQuoteBytes);
      }
      b.resize(pb.finish());
      packets.push_back(std::move(b));
    }
  }
};

// Feeds the workload: line A in order with every 7th packet swapped with the next and every
// 50th dropped, line B a full copy one packet behind; then the rest of the session.
std::uint64_t drive(Arbiter& arb, const Workload& w, std::int64_t& now) {
  std::uint64_t parsed = 0;
  const std::size_t n = w.packets.size();
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t a = i;
    if (i % 7 == 0 && i + 1 < n) a = i + 1;
    else if (i % 7 == 1) a = i - 1;
    PacketView v;
    if (i % 50 != 3 && parse_packet(w.packets[a].data(), w.packets[a].size(), v, 64) == ParseStatus::Ok) {
      arb.on_packet(0, v, now, now);
      ++parsed;
    }
    if (i > 0 && parse_packet(w.packets[i - 1].data(), w.packets[i - 1].size(), v, 64) == ParseStatus::Ok) {
      arb.on_packet(1, v, now, now);
      ++parsed;
    }
    now += 1000;
    arb.sequencer().poll(now);
  }
  return parsed;
}

TEST(FeedHotPath, SequencingArbitrationDecodeAndRingNeverAllocateOrLock) {
  SpscRing<md::Event> ring(1024);
  DecodingSink sink;
  sink.ring = &ring;
  SequencerConfig c;
  c.policy = GapPolicy::Skip;
  c.gap_timeout_ns = 5000;
  Sequencer seq(c, sink);
  Arbiter arb(seq, 1 << 16);
  Workload w(5000);
  std::int64_t now = 0;
  drive(arb, w, now);  // warm-up: first session start
  g_allocs = 0;
  g_locks = 0;
  g_counting = true;
  for (int rep = 0; rep < 3; ++rep) drive(arb, w, now);  // duplicates and stale copies now
  Workload* fresh = nullptr;
  g_counting = false;
  fresh = new Workload(5000);
  {  // End of Session first: the only rule that lets a locked session change
    std::uint8_t eos[kHeaderBytes];
    encode_control(eos, Session::from("HOT"), 10001, true);
    PacketView v;
    if (parse_packet(eos, sizeof eos, v, 64) == ParseStatus::Ok) arb.on_packet(0, v, now, now);
  }
  // A new session through the counted path as well.
  for (auto& p : fresh->packets) std::memcpy(p.data(), "HOT2      ", 10);
  g_counting = true;
  drive(arb, *fresh, now);
  g_counting = false;
  EXPECT_EQ(g_allocs.load(), 0);
  EXPECT_EQ(g_locks.load(), 0);
  EXPECT_GT(sink.delivered, 19000u);
  EXPECT_EQ(seq.stats().sessions, 2u);
  delete fresh;
}

TEST(FeedHotPath, MakesNoSystemCallUnderSeccompStrict) {
  SpscRing<md::Event> ring(1024);
  DecodingSink sink;
  sink.ring = &ring;
  SequencerConfig c;
  c.policy = GapPolicy::Skip;
  c.gap_timeout_ns = 5000;
  Sequencer seq(c, sink);
  Arbiter arb(seq, 1 << 16);
  Workload w(5000);
  std::int64_t now = 0;
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) != 0) syscall(SYS_exit, 3);
    drive(arb, w, now);
    drive(arb, w, now);
    syscall(SYS_exit, sink.delivered == 10000 ? 0 : 4);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace tickinfer::feed
