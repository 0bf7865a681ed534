#include "features/shm_feature_store.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "features/shm_map.hpp"
#include "features/shm_words.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::features {
namespace {

constexpr std::uint64_t kMagic = 0x31524F5453464954ull;  // "TIFSTOR1" little-endian
constexpr std::uint64_t kLayoutVersion = 2;
using shm::bits;
using shm::dbl;
using shm::kNameWords;
using shm::load_name;
using shm::store_name;
using shm::Word;
using shm::words;

// Header words (each a Word): three cache lines, the often-written heartbeat alone on the last.
enum HeaderWord : std::size_t {
  kHMagic, kHVersion, kHWidth, kHSlots, kHStride, kHFeatureSet, kHGeneration, kHPid,
  kHTtl = 8,
  kHHeartbeat = 16,
  kHeaderWords = 24,
};
// Slot words, before the values.
enum SlotWord : std::size_t {
  kSSeq, kSInstrument, kSUpdates, kSTs, kSBar, kSFlags, kSPublished, kSTickSeq, kSlotHeaderWords = 8
};

std::size_t stride_for(std::size_t width) {  // words per slot, a whole number of cache lines
  const std::size_t words = kSlotHeaderWords + width;
  return (words + 7) / 8 * 8;
}
std::size_t total_words(std::size_t width, std::size_t slots) {
  return kHeaderWords + slots * stride_for(width) + (width + 1) * kNameWords;
}

[[noreturn]] void sys_fail(const std::string& name, const char* what) { shm_fail("feature store", name, what); }

}  // namespace

ShmMapping::~ShmMapping() {
  if (base_) munmap(base_, size_);
}
ShmMapping::ShmMapping(ShmMapping&& o) noexcept : base_(o.base_), size_(o.size_) { o.base_ = nullptr; }
ShmMapping& ShmMapping::operator=(ShmMapping&& o) noexcept {
  if (this != &o) {
    if (base_) munmap(base_, size_);
    base_ = o.base_;
    size_ = o.size_;
    o.base_ = nullptr;
  }
  return *this;
}

const char* to_string(ShmRead r) {
  switch (r) {
    case ShmRead::Ok: return "ok";
    case ShmRead::Empty: return "empty";
    case ShmRead::Busy: return "busy";
    case ShmRead::Stale: return "stale";
  }
  return "?";
}

const char* to_string(WriterState s) {
  switch (s) {
    case WriterState::Alive: return "alive";
    case WriterState::Stale: return "stale";
    case WriterState::Restarted: return "restarted";
  }
  return "?";
}

ShmFeatureWriter::ShmFeatureWriter(const std::string& name, const FeatureSpec& spec, std::int64_t ttl_ns)
    : width_(spec.width()), slots_(spec.instruments.size()), stride_(stride_for(spec.width())) {
  if (ttl_ns < 0) throw Error("feature store '" + name + "': negative TTL");
  const std::size_t n_words = total_words(width_, slots_);
  const std::size_t size = n_words * sizeof(Word);
  const int fd = shm_open(name.c_str(), O_CREAT | O_RDWR, 0644);
  if (fd < 0) sys_fail(name, "shm_open");
  struct stat st{};
  if (fstat(fd, &st) != 0) {
    close(fd);
    sys_fail(name, "fstat");
  }
  const bool fresh = static_cast<std::size_t>(st.st_size) != size;
  if (fresh && ftruncate(fd, static_cast<off_t>(size)) != 0) {
    close(fd);
    sys_fail(name, "ftruncate");
  }
  void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) sys_fail(name, "mmap");
  map_ = ShmMapping(base, size);
  Word* h = words(base);
  const bool compatible = !fresh && h[kHMagic].load() == kMagic && h[kHVersion].load() == kLayoutVersion &&
                          h[kHWidth].load() == width_ && h[kHSlots].load() == slots_ &&
                          h[kHFeatureSet].load() == spec.feature_set_id();
  if (!compatible) {
    // A new or foreign layout: rebuild. Readers of the old layout see the magic change.
    h[kHMagic].store(0);
    for (std::size_t i = 1; i < n_words; ++i) h[i].store(0, std::memory_order_relaxed);
    h[kHVersion].store(kLayoutVersion);
    h[kHWidth].store(width_);
    h[kHSlots].store(slots_);
    h[kHStride].store(stride_);
    h[kHFeatureSet].store(spec.feature_set_id());
    for (std::size_t s = 0; s < slots_; ++s)
      h[kHeaderWords + s * stride_ + kSInstrument].store(spec.instruments[s], std::memory_order_relaxed);
  }
  // Names are rewritten by every writer: the feature-set id covers kinds and parameters, not the
  // column names a spec gives them.
  Word* names = h + kHeaderWords + slots_ * stride_;
  store_name(names, spec.name);
  for (std::size_t f = 0; f < width_; ++f) store_name(names + (f + 1) * kNameWords, spec.features[f].name);
  h[kHTtl].store(static_cast<std::uint64_t>(ttl_ns));
  h[kHPid].store(static_cast<std::uint64_t>(getpid()));
  generation_ = h[kHGeneration].fetch_add(1) + 1;
  h[kHMagic].store(kMagic, std::memory_order_release);
}

void ShmFeatureWriter::publish(std::size_t slot, const double* values, const ShmRowMeta& meta) noexcept {
  Word* s = words(map_.base()) + kHeaderWords + slot * stride_;
  const std::uint64_t seq = s[kSSeq].load(std::memory_order_relaxed);
  s[kSSeq].store(seq + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  s[kSUpdates].store(s[kSUpdates].load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  s[kSTs].store(static_cast<std::uint64_t>(meta.ts_ns), std::memory_order_relaxed);
  s[kSBar].store(static_cast<std::uint64_t>(meta.bar), std::memory_order_relaxed);
  s[kSFlags].store(meta.flags, std::memory_order_relaxed);
  s[kSPublished].store(static_cast<std::uint64_t>(meta.published_ns), std::memory_order_relaxed);
  s[kSTickSeq].store(meta.tick_seq, std::memory_order_relaxed);
  Word* v = s + kSlotHeaderWords;
  for (std::size_t i = 0; i < width_; ++i) v[i].store(bits(values[i]), std::memory_order_relaxed);
  s[kSSeq].store(seq + 2, std::memory_order_release);
}

void ShmFeatureWriter::heartbeat(std::int64_t now_ns) noexcept {
  words(map_.base())[kHHeartbeat].store(static_cast<std::uint64_t>(now_ns), std::memory_order_release);
}

void ShmFeatureWriter::unlink(const std::string& name) noexcept { shm_unlink(name.c_str()); }

ShmFeatureReader::ShmFeatureReader(const std::string& name)
    : map_(map_shm_readonly("feature store", name, "is the writer running?", kHeaderWords * sizeof(Word))) {
  const std::size_t size = map_.size();
  const Word* h = words(map_.base());
  if (h[kHMagic].load(std::memory_order_acquire) != kMagic)
    throw Error("feature store '" + name + "': not a tickinfer feature store (bad magic)");
  if (h[kHVersion].load() != kLayoutVersion)
    throw Error("feature store '" + name + "': layout version " + std::to_string(h[kHVersion].load()) +
                ", this build reads " + std::to_string(kLayoutVersion));
  width_ = h[kHWidth].load();
  slots_ = h[kHSlots].load();
  stride_ = h[kHStride].load();
  if (width_ == 0 || width_ > kMaxFeatures || slots_ == 0 || slots_ > kMaxInstruments || stride_ != stride_for(width_) ||
      total_words(width_, slots_) * sizeof(Word) > size)
    throw Error("feature store '" + name + "': header says " + std::to_string(slots_) + " slots of " +
                std::to_string(width_) + " features, which does not fit its " + std::to_string(size) + " bytes");
  ttl_ns_ = static_cast<std::int64_t>(h[kHTtl].load());
  set_id_ = h[kHFeatureSet].load();
  generation_seen_ = h[kHGeneration].load(std::memory_order_acquire);
  const Word* names = h + kHeaderWords + slots_ * stride_;
  set_name_ = load_name(names);
  names_.reserve(width_);
  for (std::size_t f = 0; f < width_; ++f) names_.push_back(load_name(names + (f + 1) * kNameWords));
}

ShmFeatureReader::ShmFeatureReader(const std::string& name, const FeatureSpec& spec) : ShmFeatureReader(name) {
  if (width_ != spec.width())
    throw Error("feature store '" + name + "': holds " + std::to_string(width_) + " features per vector, the spec has " +
                std::to_string(spec.width()));
  if (set_id_ != spec.feature_set_id())
    throw Error("feature store '" + name + "': holds a different feature set (id mismatch: order or parameters differ)");
}

ShmRead ShmFeatureReader::read(std::size_t slot, double* values, ShmRowMeta* meta, std::int64_t now_ns,
                               int max_retries) const noexcept {
  if (slot >= slots_) return ShmRead::Empty;
  const Word* s = words(map_.base()) + kHeaderWords + slot * stride_;
  const Word* v = s + kSlotHeaderWords;
  for (int attempt = 0; attempt <= max_retries; ++attempt) {
    const std::uint64_t s1 = s[kSSeq].load(std::memory_order_acquire);
    if (s1 & 1) continue;
    if (s1 == 0) return ShmRead::Empty;
    for (std::size_t i = 0; i < width_; ++i) values[i] = dbl(v[i].load(std::memory_order_relaxed));
    ShmRowMeta m;
    m.published_ns = static_cast<std::int64_t>(s[kSPublished].load(std::memory_order_relaxed));
    if (meta) {
      m.updates = s[kSUpdates].load(std::memory_order_relaxed);
      m.ts_ns = static_cast<std::int64_t>(s[kSTs].load(std::memory_order_relaxed));
      m.bar = static_cast<std::int64_t>(s[kSBar].load(std::memory_order_relaxed));
      m.flags = s[kSFlags].load(std::memory_order_relaxed);
      m.tick_seq = s[kSTickSeq].load(std::memory_order_relaxed);
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    if (s[kSSeq].load(std::memory_order_relaxed) == s1) {
      if (meta) *meta = m;
      if (now_ns > 0 && ttl_ns_ > 0 && now_ns - m.published_ns > ttl_ns_) return ShmRead::Stale;
      return ShmRead::Ok;
    }
  }
  return ShmRead::Busy;
}

int ShmFeatureReader::slot_of(std::uint32_t instrument) const noexcept {
  const Word* base = words(map_.base()) + kHeaderWords;
  for (std::size_t i = 0; i < slots_; ++i)
    if (base[i * stride_ + kSInstrument].load(std::memory_order_relaxed) == instrument) return static_cast<int>(i);
  return -1;
}

std::uint32_t ShmFeatureReader::instrument_at(std::size_t slot) const noexcept {
  if (slot >= slots_) return 0;
  return static_cast<std::uint32_t>(
      words(map_.base())[kHeaderWords + slot * stride_ + kSInstrument].load(std::memory_order_relaxed));
}

std::int64_t ShmFeatureReader::heartbeat_ns() const noexcept {
  return static_cast<std::int64_t>(words(map_.base())[kHHeartbeat].load(std::memory_order_acquire));
}

std::uint64_t ShmFeatureReader::writer_pid() const noexcept {
  return words(map_.base())[kHPid].load(std::memory_order_relaxed);
}

WriterState ShmFeatureReader::writer_state(std::int64_t now_ns, std::int64_t stale_after_ns) const noexcept {
  const Word* h = words(map_.base());
  if (h[kHGeneration].load(std::memory_order_acquire) != generation_seen_ ||
      h[kHMagic].load(std::memory_order_acquire) != kMagic)
    return WriterState::Restarted;
  const auto hb = static_cast<std::int64_t>(h[kHHeartbeat].load(std::memory_order_acquire));
  return now_ns - hb > stale_after_ns ? WriterState::Stale : WriterState::Alive;
}

}  // namespace tickinfer::features
