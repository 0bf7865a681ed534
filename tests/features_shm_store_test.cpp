// The shared-memory feature store with real processes: one writer and several readers (fork),
// at least 10 million updates, and no reader ever sees a torn vector; stale and restarted writers
// are detected; a store holding another feature set is refused.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "features/shm_feature_store.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::features {
namespace {

FeatureSpec ten_features(const std::string& instruments = "[1, 2]") {
  std::string t = "[feature_set]\ninstruments = " + instruments + "\n";
  for (int i = 1; i <= 10; ++i) t += "[[feature]]\nkind = \"log_return\"\nticks = " + std::to_string(i) + "\n";
  return parse_feature_spec(t);
}

std::string store_name(const char* what) { return "/tickinfer-test-" + std::string(what) + "-" + std::to_string(getpid()); }

std::int64_t mono_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Reader processes report through a small shared anonymous mapping.
struct Shared {
  std::atomic<std::uint64_t> done;
  std::atomic<std::uint64_t> ready;
  std::atomic<std::uint64_t> reads[8];
  std::atomic<std::uint64_t> torn[8];
  std::atomic<std::uint64_t> backwards[8];
};

TEST(FeaturesShmStore, ReadersInOtherProcessesNeverSeeATornVector) {
  constexpr int kReaders = 3;
  constexpr std::uint64_t kUpdates = 10'000'000;
  const FeatureSpec spec = ten_features();
  const std::string name = store_name("stress");
  auto* shared = static_cast<Shared*>(mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(shared, MAP_FAILED);
  new (shared) Shared{};
  ShmFeatureWriter::unlink(name);
  ShmFeatureWriter writer(name, spec);  // the store exists before the readers attach

  std::vector<pid_t> pids;
  for (int r = 0; r < kReaders; ++r) {
    const pid_t pid = fork();
    if (pid == 0) {
      int code = 0;
      try {
        ShmFeatureReader reader(name, spec);
        shared->ready.fetch_add(1);
        double v[10];
        ShmRowMeta meta;
        std::uint64_t last[2] = {0, 0};
        while (!shared->done.load(std::memory_order_acquire)) {
          for (std::size_t slot = 0; slot < 2; ++slot) {
            if (reader.read(slot, v, &meta) != ShmRead::Ok) continue;
            // The writer stores the update number k in ts and k + i in value i: any mix of two
            // publications breaks the pattern.
            const auto k = static_cast<std::uint64_t>(meta.ts_ns);
            bool whole = meta.bar == static_cast<std::int64_t>(k) * 3 && meta.flags == (k ^ 0x5A5A);
            for (int i = 0; i < 10; ++i) whole = whole && v[i] == static_cast<double>(k + i);
            if (!whole) shared->torn[r].fetch_add(1);
            if (k < last[slot]) shared->backwards[r].fetch_add(1);
            last[slot] = k;
            shared->reads[r].fetch_add(1, std::memory_order_relaxed);
          }
        }
      } catch (...) {
        code = 2;
      }
      _exit(code);
    }
    pids.push_back(pid);
  }
  while (shared->ready.load() < kReaders) usleep(1000);
  double v[10];
  for (std::uint64_t k = 1; k <= kUpdates; ++k) {
    for (int i = 0; i < 10; ++i) v[i] = static_cast<double>(k + i);
    ShmRowMeta meta;
    meta.ts_ns = static_cast<std::int64_t>(k);
    meta.bar = static_cast<std::int64_t>(k) * 3;
    meta.flags = k ^ 0x5A5A;
    writer.publish(k & 1, v, meta);
  }
  shared->done.store(1, std::memory_order_release);
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::uint64_t reads = 0;
  for (int r = 0; r < kReaders; ++r) {
    EXPECT_EQ(shared->torn[r].load(), 0u) << "reader " << r;
    EXPECT_EQ(shared->backwards[r].load(), 0u) << "reader " << r;
    EXPECT_GT(shared->reads[r].load(), 0u) << "reader " << r;
    reads += shared->reads[r].load();
  }
  std::printf("%llu updates, %d reader processes, %llu consistent reads, 0 torn\n",
              static_cast<unsigned long long>(kUpdates), kReaders, static_cast<unsigned long long>(reads));
  ShmFeatureWriter::unlink(name);
  munmap(shared, sizeof(Shared));
}

TEST(FeaturesShmStore, StaleAndRestartedWritersAreDetected) {
  const FeatureSpec spec = ten_features();
  const std::string name = store_name("stale");
  ShmFeatureWriter::unlink(name);
  // The writer is a real process that heartbeats, then stops (dies) without cleaning up.
  const pid_t pid = fork();
  if (pid == 0) {
    ShmFeatureWriter w(name, spec);
    double v[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    w.publish(1, v, ShmRowMeta{});
    w.heartbeat(mono_ns());
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ShmFeatureReader reader(name, spec);
  const std::int64_t t0 = mono_ns();
  EXPECT_EQ(reader.writer_state(t0, 1'000'000'000), WriterState::Alive);
  EXPECT_EQ(reader.writer_state(t0 + 2'000'000'000, 1'000'000'000), WriterState::Stale);
  double v[10];
  EXPECT_EQ(reader.read(0, v), ShmRead::Empty);  // never written
  ASSERT_EQ(reader.read(1, v), ShmRead::Ok);      // the last vector stays readable
  EXPECT_EQ(v[9], 10.0);
  EXPECT_EQ(reader.slot_of(2), 1);
  EXPECT_EQ(reader.slot_of(3), -1);
  // A new writer attaches: readers learn the generation changed.
  ShmFeatureWriter again(name, spec);
  again.heartbeat(mono_ns());
  EXPECT_EQ(reader.writer_state(mono_ns(), 1'000'000'000), WriterState::Restarted);
  ShmFeatureWriter::unlink(name);
}

TEST(FeaturesShmStore, AStoreOfAnotherFeatureSetIsRefused) {
  const std::string name = store_name("mismatch");
  ShmFeatureWriter::unlink(name);
  ShmFeatureWriter w(name, ten_features());
  std::string other = "[feature_set]\ninstruments = [1, 2]\n";
  for (int i = 10; i >= 1; --i) other += "[[feature]]\nkind = \"log_return\"\nticks = " + std::to_string(i) + "\n";
  try {
    ShmFeatureReader r(name, parse_feature_spec(other));
    FAIL() << "expected a feature-set mismatch";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("different feature set"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ShmFeatureReader(name, parse_feature_spec("[feature_set]\ninstruments = [1]\n[[feature]]\nkind = \"mid\"\n")),
               Error);
  ShmFeatureWriter::unlink(name);
  EXPECT_THROW(ShmFeatureReader(name, ten_features()), Error);  // gone
}

}  // namespace
}  // namespace tickinfer::features
