#pragma once
// Reading tickinfer's shared-memory feature store from any process: the vectors a running
// `tickinfer run` ([features] shm = "NAME") publishes, one entry per instrument, read without
// locks or syscalls. The layout and the protocol are in features/shm_feature_store.hpp and
// docs/features.md ("Shared-memory store"); the Python module's FeatureStore is this class.
// FeatureRingReader follows the feature ring ([features] ring) instead: every vector, in order
// (features/shm_feature_ring.hpp; Python: FeatureRing).
//
//   tickinfer::features::ShmFeatureReader store("/NAME");
//   double v[64];
//   tickinfer::features::ShmRowMeta meta;
//   if (store.read(store.slot_of(instrument), v, &meta, now_realtime_ns) == ShmRead::Ok) ...
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tickinfer::features {

struct FeatureSpec;  // features/feature_spec.hpp: in-tree users may check a store against one

struct ShmRowMeta {
  std::int64_t ts_ns = 0;         // exchange time of the tick the vector is as of
  std::int64_t bar = 0;
  std::uint64_t flags = 0;        // caller-defined (tickinfer run: kShm* bits)
  std::uint64_t updates = 0;      // publications to this slot so far (0: never written)
  std::int64_t published_ns = 0;  // the writer's CLOCK_REALTIME when it published
  std::uint64_t tick_seq = 0;     // the feed sequence number of that tick (0: none)
};

// The flag bits `tickinfer run` publishes.
inline constexpr std::uint64_t kShmAllWarm = 1;      // every feature's window is full
inline constexpr std::uint64_t kShmWindowReady = 2;  // the instrument's model window is usable

enum class ShmRead : std::uint8_t { Ok, Empty, Busy, Stale };
const char* to_string(ShmRead r);
enum class WriterState : std::uint8_t { Alive, Stale, Restarted };
const char* to_string(WriterState s);

class ShmMapping {  // an mmap'ed store; unmapped on destruction
 public:
  ShmMapping() = default;
  ShmMapping(void* base, std::size_t size) : base_(base), size_(size) {}
  ~ShmMapping();
  ShmMapping(ShmMapping&& o) noexcept;
  ShmMapping& operator=(ShmMapping&& o) noexcept;
  ShmMapping(const ShmMapping&) = delete;
  ShmMapping& operator=(const ShmMapping&) = delete;
  void* base() const noexcept { return base_; }
  std::size_t size() const noexcept { return size_; }

 private:
  void* base_ = nullptr;
  std::size_t size_ = 0;
};

class ShmFeatureReader {
 public:
  // Attaches read-only to `name` whatever feature set it holds (names(), instrument_at() say
  // what). Error when it is not a store of this layout.
  explicit ShmFeatureReader(const std::string& name);
  // The same, and checks it holds `spec`'s feature set (id and width). Error otherwise.
  ShmFeatureReader(const std::string& name, const FeatureSpec& spec);
  // Copies slot's latest vector (width values) and its meta. noexcept, lock-free, no syscall.
  // Empty for a slot never written or out of range; Busy if every retry met a write in progress;
  // Stale (values copied) when now_ns > 0, the store has a TTL and the entry was published more
  // than the TTL before now_ns.
  ShmRead read(std::size_t slot, double* values, ShmRowMeta* meta = nullptr, std::int64_t now_ns = 0,
               int max_retries = 1000) const noexcept;
  // Slot index of an instrument id, or -1.
  int slot_of(std::uint32_t instrument) const noexcept;
  std::uint32_t instrument_at(std::size_t slot) const noexcept;
  WriterState writer_state(std::int64_t now_ns, std::int64_t stale_after_ns) const noexcept;
  std::int64_t heartbeat_ns() const noexcept;
  std::size_t width() const noexcept { return width_; }
  std::size_t slots() const noexcept { return slots_; }
  std::int64_t ttl_ns() const noexcept { return ttl_ns_; }
  std::uint64_t feature_set_id() const noexcept { return set_id_; }
  std::uint64_t writer_pid() const noexcept;
  const std::string& set_name() const noexcept { return set_name_; }
  const std::vector<std::string>& names() const noexcept { return names_; }  // width column names

 private:
  ShmMapping map_;
  std::size_t width_ = 0, slots_ = 0, stride_ = 0;
  std::int64_t ttl_ns_ = 0;
  std::uint64_t set_id_ = 0, generation_seen_ = 0;
  std::string set_name_;
  std::vector<std::string> names_;
};

// One record: what a store entry holds, for one publication.
struct RingRecord {
  std::uint32_t instrument = 0;
  std::uint64_t tick_seq = 0;
  std::int64_t ts_ns = 0;         // exchange time
  std::int64_t published_ns = 0;  // the writer's CLOCK_REALTIME
  std::uint64_t flags = 0;        // kShmAllWarm, kShmWindowReady
};

class FeatureRingReader {
 public:
  // Attaches read-only. from_start: begin at the oldest record still held; else at the next.
  FeatureRingReader(const std::string& name, bool from_start);
  // The next record and its width values: true if one was read.
  bool poll(RingRecord& r, double* values) noexcept;
  std::uint64_t missed() const noexcept { return missed_; }  // lost: overwritten before it was read
  std::uint64_t position() const noexcept { return position_; }
  std::uint64_t write_position() const noexcept;
  std::uint64_t lag() const noexcept;  // records published and not yet read (may exceed capacity)
  std::size_t width() const noexcept { return width_; }
  std::uint64_t capacity() const noexcept { return capacity_; }
  std::uint64_t feature_set_id() const noexcept { return set_id_; }
  const std::string& set_name() const noexcept { return set_name_; }
  const std::vector<std::string>& names() const noexcept { return names_; }

 private:
  ShmMapping map_;
  std::size_t width_ = 0, stride_ = 0;
  std::uint64_t capacity_ = 0, mask_ = 0, position_ = 0, missed_ = 0, set_id_ = 0;
  std::string set_name_;
  std::vector<std::string> names_;
};

}  // namespace tickinfer::features
