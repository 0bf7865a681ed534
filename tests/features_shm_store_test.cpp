// The shared-memory feature store with real processes: one writer and several readers (fork),
// at least 10 million updates, and no reader ever sees a torn vector; stale entries (per-entry
// TTL), stale and restarted writers are detected; a reader without a spec learns the columns from
// the store; a store holding another feature set, or a file that is not a store, is refused.
#include <gtest/gtest.h>
#include <fcntl.h>
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
            bool whole = meta.bar == static_cast<std::int64_t>(k) * 3 && meta.flags == (k ^ 0x5A5A) &&
                         meta.tick_seq == k * 7 && meta.published_ns == static_cast<std::int64_t>(k) + 11;
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
    meta.tick_seq = k * 7;
    meta.published_ns = static_cast<std::int64_t>(k) + 11;
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

TEST(FeaturesShmStore, EntriesOlderThanTheTtlReadAsStaleOnePerEntry) {
  const FeatureSpec spec = ten_features("[1, 2, 3]");
  const std::string name = store_name("ttl");
  ShmFeatureWriter::unlink(name);
  ShmFeatureWriter w(name, spec, 5'000'000);  // 5 ms
  double v[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  ShmRowMeta m;
  m.published_ns = 1'000'000'000;
  m.tick_seq = 41;
  w.publish(0, v, m);
  m.published_ns = 1'004'000'000;
  m.tick_seq = 42;
  w.publish(1, v, m);
  ShmFeatureReader r(name, spec);
  EXPECT_EQ(r.ttl_ns(), 5'000'000);
  double out[10];
  ShmRowMeta got;
  // At 1.0065 s: slot 0 is 6.5 ms old (stale), slot 1 is 2.5 ms old (fresh), slot 2 never written.
  EXPECT_EQ(r.read(0, out, &got, 1'006'500'000), ShmRead::Stale);
  EXPECT_EQ(got.tick_seq, 41u);  // a stale entry still comes back whole: the reader decides
  EXPECT_EQ(out[9], 10.0);
  EXPECT_EQ(r.read(1, out, &got, 1'006'500'000), ShmRead::Ok);
  EXPECT_EQ(got.tick_seq, 42u);
  EXPECT_EQ(got.published_ns, 1'004'000'000);
  EXPECT_EQ(r.read(2, out, &got, 1'006'500'000), ShmRead::Empty);
  EXPECT_EQ(r.read(0, out, &got), ShmRead::Ok);  // no now: no TTL check
  // Exactly at the TTL is still fresh; one nanosecond past it is not.
  EXPECT_EQ(r.read(0, out, nullptr, 1'005'000'000), ShmRead::Ok);
  EXPECT_EQ(r.read(0, out, nullptr, 1'005'000'001), ShmRead::Stale);
  // A store without a TTL never reads stale.
  ShmFeatureWriter::unlink(name);
  ShmFeatureWriter w0(name, spec);
  w0.publish(0, v, m);
  EXPECT_EQ(ShmFeatureReader(name, spec).read(0, out, nullptr, 1'000'000'000'000'000LL), ShmRead::Ok);
  ShmFeatureWriter::unlink(name);
}

TEST(FeaturesShmStore, AReaderWithoutASpecLearnsNamesAndInstrumentsFromTheStore) {
  const FeatureSpec spec = parse_feature_spec(
      "[feature_set]\nname = \"desk_a\"\ninstruments = [7, 3, 11]\n"
      "[[feature]]\nkind = \"mid\"\n[[feature]]\nkind = \"log_return\"\nticks = 5\n"
      "[[feature]]\nkind = \"spread_bps\"\nname = \"a_column_name_that_is_longer_than_sixty_three_characters_in_all_0123\"\n");
  const std::string name = store_name("names");
  ShmFeatureWriter::unlink(name);
  ShmFeatureWriter w(name, spec, 250'000'000);
  const ShmFeatureReader r(name);
  EXPECT_EQ(r.set_name(), "desk_a");
  ASSERT_EQ(r.width(), 3u);
  EXPECT_EQ(r.names()[0], "mid");
  EXPECT_EQ(r.names()[1], "log_return_5");
  EXPECT_EQ(r.names()[2], spec.features[2].name.substr(0, 63));  // 64-byte slots keep 63 characters
  ASSERT_EQ(r.slots(), 3u);
  EXPECT_EQ(r.instrument_at(0), 7u);
  EXPECT_EQ(r.instrument_at(2), 11u);
  EXPECT_EQ(r.slot_of(3), 1);
  EXPECT_EQ(r.feature_set_id(), spec.feature_set_id());
  EXPECT_EQ(r.ttl_ns(), 250'000'000);
  EXPECT_EQ(r.writer_pid(), static_cast<std::uint64_t>(getpid()));
  ShmFeatureWriter::unlink(name);
}

TEST(FeaturesShmStore, ObjectsThatAreNotAStoreAreRefusedWithTheReason) {
  const std::string name = store_name("hostile");
  auto write_object = [&](const std::vector<std::uint64_t>& words, std::size_t bytes) {
    shm_unlink(name.c_str());
    const int fd = shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, static_cast<off_t>(bytes)), 0);
    if (!words.empty()) {
      ASSERT_EQ(pwrite(fd, words.data(), words.size() * 8, 0), static_cast<ssize_t>(words.size() * 8));
    }
    close(fd);
  };
  auto refusal = [&]() -> std::string {
    try {
      ShmFeatureReader r(name);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  write_object({}, 16);
  EXPECT_NE(refusal().find("too small"), std::string::npos) << refusal();
  write_object({}, 4096);
  EXPECT_NE(refusal().find("bad magic"), std::string::npos) << refusal();
  const std::uint64_t magic = 0x31524F5453464954ull;
  write_object({magic, 1}, 4096);  // the layout before per-entry TTLs
  EXPECT_NE(refusal().find("layout version 1"), std::string::npos) << refusal();
  // A header that claims more slots than the object holds.
  write_object({magic, 2, 10, 100000, 24}, 4096);
  EXPECT_NE(refusal().find("does not fit"), std::string::npos) << refusal();
  // ... or a stride that is not the one its width implies.
  write_object({magic, 2, 10, 2, 8}, 4096);
  EXPECT_NE(refusal().find("does not fit"), std::string::npos) << refusal();
  shm_unlink(name.c_str());
  EXPECT_NE(refusal().find("is the writer running"), std::string::npos) << refusal();
}

}  // namespace
}  // namespace tickinfer::features
