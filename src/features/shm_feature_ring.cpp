#include "features/shm_feature_ring.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "features/broadcast_cursor.hpp"
#include "features/shm_map.hpp"
#include "features/shm_words.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::features {
namespace {

using shm::bits;
using shm::dbl;
using shm::kNameWords;
using shm::Word;
using shm::words;

constexpr std::uint64_t kMagic = 0x31474E4952464954ull;  // "TIFRING1" little-endian
constexpr std::uint64_t kVersion = 1;

enum HeaderWord : std::size_t {
  kHMagic, kHVersion, kHWidth, kHCapacity, kHStride, kHFeatureSet, kHPid,
  kHWritePosition = 16,  // its own cache line: every reader polls it
  kHeaderWords = 24,
};
enum SlotWord : std::size_t { kSSeq, kSInstrument, kSTickSeq, kSTs, kSPublished, kSFlags, kSlotHeaderWords = 8 };

std::size_t stride_for(std::size_t width) { return (kSlotHeaderWords + width + 7) / 8 * 8; }
std::size_t total_words(std::size_t width, std::size_t capacity) {
  return kHeaderWords + capacity * stride_for(width) + (width + 1) * kNameWords;
}

[[noreturn]] void sys_fail(const std::string& name, const char* what) { shm_fail("feature ring", name, what); }

}  // namespace

FeatureRingWriter::FeatureRingWriter(const std::string& name, const FeatureSpec& spec, std::size_t capacity)
    : width_(spec.width()), stride_(stride_for(spec.width())), mask_(capacity - 1) {
  if (capacity < 2 || (capacity & (capacity - 1)))
    throw Error("feature ring '" + name + "': capacity must be a power of two >= 2");
  const std::size_t n = total_words(width_, capacity);
  const int fd = shm_open(name.c_str(), O_CREAT | O_RDWR, 0644);
  if (fd < 0) sys_fail(name, "shm_open");
  // Truncated to 0 first: fresh zero pages, every slot's sequence 0 (never written).
  if (ftruncate(fd, 0) != 0 || ftruncate(fd, static_cast<off_t>(n * sizeof(Word))) != 0) {
    const int e = errno;
    close(fd);
    errno = e;
    sys_fail(name, "ftruncate");
  }
  void* base = mmap(nullptr, n * sizeof(Word), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) sys_fail(name, "mmap");
  map_ = ShmMapping(base, n * sizeof(Word));
  Word* h = words(base);
  // Touch every page now so the hot path never takes a page fault.
  for (std::size_t i = 1; i < n; ++i) h[i].store(0, std::memory_order_relaxed);
  h[kHVersion].store(kVersion, std::memory_order_relaxed);
  h[kHWidth].store(width_, std::memory_order_relaxed);
  h[kHCapacity].store(capacity, std::memory_order_relaxed);
  h[kHStride].store(stride_, std::memory_order_relaxed);
  h[kHFeatureSet].store(spec.feature_set_id(), std::memory_order_relaxed);
  h[kHPid].store(static_cast<std::uint64_t>(getpid()), std::memory_order_relaxed);
  Word* names = h + kHeaderWords + capacity * stride_;
  shm::store_name(names, spec.name);
  for (std::size_t f = 0; f < width_; ++f) shm::store_name(names + (f + 1) * kNameWords, spec.features[f].name);
  h[kHMagic].store(kMagic, std::memory_order_release);  // last: a reader that sees it sees the rest
}

void FeatureRingWriter::publish(const RingRecord& r, const double* values) noexcept {
  Word* h = words(map_.base());
  const std::uint64_t p = position_;
  Word* s = h + kHeaderWords + (p & mask_) * stride_;
  s[kSSeq].store(2 * p + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);  // busy mark before the payload changes
  s[kSInstrument].store(r.instrument, std::memory_order_relaxed);
  s[kSTickSeq].store(r.tick_seq, std::memory_order_relaxed);
  s[kSTs].store(static_cast<std::uint64_t>(r.ts_ns), std::memory_order_relaxed);
  s[kSPublished].store(static_cast<std::uint64_t>(r.published_ns), std::memory_order_relaxed);
  s[kSFlags].store(r.flags, std::memory_order_relaxed);
  Word* v = s + kSlotHeaderWords;
  for (std::size_t i = 0; i < width_; ++i) v[i].store(bits(values[i]), std::memory_order_relaxed);
  s[kSSeq].store(2 * p + 2, std::memory_order_release);
  position_ = p + 1;
  h[kHWritePosition].store(position_, std::memory_order_release);
}

void FeatureRingWriter::unlink(const std::string& name) noexcept { shm_unlink(name.c_str()); }

FeatureRingReader::FeatureRingReader(const std::string& name, bool from_start)
    : map_(map_shm_readonly("feature ring", name, "is `tickinfer run` with [features] ring running?",
                            kHeaderWords * sizeof(Word))) {
  const std::size_t size = map_.size();
  const Word* h = words(map_.base());
  if (h[kHMagic].load(std::memory_order_acquire) != kMagic)
    throw Error("feature ring '" + name + "': not a tickinfer feature ring (bad magic)");
  if (h[kHVersion].load() != kVersion)
    throw Error("feature ring '" + name + "': layout version " + std::to_string(h[kHVersion].load()) +
                ", this build reads " + std::to_string(kVersion));
  width_ = h[kHWidth].load();
  capacity_ = h[kHCapacity].load();
  stride_ = h[kHStride].load();
  if (width_ == 0 || width_ > kMaxFeatures || capacity_ < 2 || (capacity_ & (capacity_ - 1)) ||
      capacity_ > (std::uint64_t{1} << 30) || stride_ != stride_for(width_) ||
      total_words(width_, capacity_) * sizeof(Word) > size)
    throw Error("feature ring '" + name + "': header says " + std::to_string(capacity_) + " records of " +
                std::to_string(width_) + " features, which does not fit its " + std::to_string(size) + " bytes");
  mask_ = capacity_ - 1;
  set_id_ = h[kHFeatureSet].load();
  const Word* names = h + kHeaderWords + capacity_ * stride_;
  set_name_ = shm::load_name(names);
  for (std::size_t f = 0; f < width_; ++f) names_.push_back(shm::load_name(names + (f + 1) * kNameWords));
  const std::uint64_t w = write_position();
  position_ = from_start ? (w > capacity_ ? w - capacity_ : 0) : w;
}

std::uint64_t FeatureRingReader::write_position() const noexcept {
  return words(map_.base())[kHWritePosition].load(std::memory_order_acquire);
}

std::uint64_t FeatureRingReader::lag() const noexcept {
  const std::uint64_t w = write_position();
  return w > position_ ? w - position_ : 0;
}

bool FeatureRingReader::poll(RingRecord& r, double* values) noexcept {
  const Word* h = words(map_.base());
  for (;;) {
    if (!broadcast_next(write_position(), capacity_, position_, missed_)) return false;
    const std::uint64_t p = position_;
    const Word* s = h + kHeaderWords + (p & mask_) * stride_;
    const std::uint64_t s1 = s[kSSeq].load(std::memory_order_acquire);
    r.instrument = static_cast<std::uint32_t>(s[kSInstrument].load(std::memory_order_relaxed));
    r.tick_seq = s[kSTickSeq].load(std::memory_order_relaxed);
    r.ts_ns = static_cast<std::int64_t>(s[kSTs].load(std::memory_order_relaxed));
    r.published_ns = static_cast<std::int64_t>(s[kSPublished].load(std::memory_order_relaxed));
    r.flags = s[kSFlags].load(std::memory_order_relaxed);
    const Word* v = s + kSlotHeaderWords;
    for (std::size_t i = 0; i < width_; ++i) values[i] = dbl(v[i].load(std::memory_order_relaxed));
    std::atomic_thread_fence(std::memory_order_acquire);
    const std::uint64_t s2 = s[kSSeq].load(std::memory_order_relaxed);
    ++position_;
    if (s1 == 2 * p + 2 && s2 == s1) return true;
    ++missed_;  // overwritten while it was copied: the next one
  }
}

}  // namespace tickinfer::features
