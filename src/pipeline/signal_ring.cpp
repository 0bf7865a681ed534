#include "pipeline/signal_ring.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "features/broadcast_cursor.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::pipeline {

inline constexpr char kRingMagic[8] = {'T', 'K', 'S', 'I', 'G', 'R', '0', '1'};
inline constexpr std::size_t kSlotBytes = 128;
inline constexpr std::size_t kHeaderBytes = 128;

struct SignalRingHeader {
  char magic[8];
  std::uint32_t slot_bytes;
  std::uint32_t message_bytes;
  std::uint64_t capacity;
  char pad0[64 - 24];
  std::atomic<std::uint64_t> write_position;  // its own cache line: readers poll it
  char pad1[64 - 8];
};
static_assert(sizeof(SignalRingHeader) == kHeaderBytes);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

namespace {

struct Slot {
  std::atomic<std::uint64_t> seq;
  std::uint8_t message[kSignalBytes];
  std::uint8_t pad[kSlotBytes - 8 - kSignalBytes];
};
static_assert(sizeof(Slot) == kSlotBytes);

Slot* slots(SignalRingHeader* h) { return reinterpret_cast<Slot*>(reinterpret_cast<char*>(h) + kHeaderBytes); }

std::string shm_name(const std::string& name) { return "/" + name; }

}  // namespace

SignalRingWriter::SignalRingWriter(const std::string& name, std::size_t capacity, bool several_writers)
    : name_(name), several_(several_writers) {
  if (capacity < 2 || (capacity & (capacity - 1)))
    throw Error("signal ring '" + name + "': capacity must be a power of two >= 2");
  const int fd = shm_open(shm_name(name).c_str(), O_CREAT | O_RDWR, 0644);
  if (fd < 0) throw Error("signal ring '" + name + "': shm_open failed: " + std::strerror(errno));
  map_bytes_ = kHeaderBytes + capacity * kSlotBytes;
  if (ftruncate(fd, 0) != 0 || ftruncate(fd, static_cast<off_t>(map_bytes_)) != 0) {
    const int e = errno;
    close(fd);
    throw Error("signal ring '" + name + "': cannot size it: " + std::strerror(e));
  }
  void* p = mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) throw Error("signal ring '" + name + "': mmap failed: " + std::strerror(errno));
  header_ = static_cast<SignalRingHeader*>(p);
  // Fresh zero pages (ftruncate to 0 first): every slot sequence is 0 = never written.
  header_->slot_bytes = kSlotBytes;
  header_->message_bytes = kSignalBytes;
  header_->capacity = capacity;
  header_->write_position.store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  std::memcpy(header_->magic, kRingMagic, 8);  // last: a reader that sees the magic sees the rest
  mask_ = capacity - 1;
  // Touch every page now so the hot path never takes a page fault.
  std::memset(reinterpret_cast<char*>(header_) + kHeaderBytes, 0, capacity * kSlotBytes);
}

SignalRingWriter::~SignalRingWriter() {
  if (header_) munmap(header_, map_bytes_);
}

// Several compute agents may publish at once: each claims its own position, and the write
// position only ever moves forward to the highest completed one (a reader waits at a slot whose
// writer has not finished; it never skips it).
void SignalRingWriter::publish(const std::uint8_t* message) noexcept {
  // One writer: plain loads and stores (no locked instruction on the hot path).
  const std::uint64_t p = several_ ? claimed_.fetch_add(1, std::memory_order_relaxed)
                                   : claimed_.load(std::memory_order_relaxed);
  if (!several_) claimed_.store(p + 1, std::memory_order_relaxed);
  Slot& s = slots(header_)[p & mask_];
  s.seq.store(2 * p + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);  // busy mark before the bytes change
  std::memcpy(s.message, message, kSignalBytes);
  s.seq.store(2 * p + 2, std::memory_order_release);
  if (!several_) {
    header_->write_position.store(p + 1, std::memory_order_release);
    return;
  }
  std::uint64_t w = header_->write_position.load(std::memory_order_relaxed);
  while (w < p + 1 &&
         !header_->write_position.compare_exchange_weak(w, p + 1, std::memory_order_release, std::memory_order_relaxed)) {
  }
}

SignalRingReader::SignalRingReader(const std::string& name, bool from_start) {
  const int fd = shm_open(shm_name(name).c_str(), O_RDONLY, 0);
  if (fd < 0)
    throw Error("signal ring '" + name + "': cannot open /dev/shm/" + name + ": " + std::strerror(errno) +
                " (is `tickinfer run` with [signals] shm = \"" + name + "\" running?)");
  struct stat st{};
  if (fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) < kHeaderBytes) {
    close(fd);
    throw Error("signal ring '" + name + "': too small to be a signal ring");
  }
  map_bytes_ = static_cast<std::size_t>(st.st_size);
  void* p = mmap(nullptr, map_bytes_, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) throw Error("signal ring '" + name + "': mmap failed: " + std::strerror(errno));
  header_ = static_cast<SignalRingHeader*>(p);
  const std::uint64_t cap = header_->capacity;
  if (std::memcmp(header_->magic, kRingMagic, 8) != 0 || header_->slot_bytes != kSlotBytes ||
      header_->message_bytes != kSignalBytes || cap < 2 || (cap & (cap - 1)) ||
      kHeaderBytes + cap * kSlotBytes > map_bytes_) {
    munmap(header_, map_bytes_);
    header_ = nullptr;
    throw Error("signal ring '" + name + "': not a tickinfer signal ring (bad header)");
  }
  capacity_ = cap;
  mask_ = cap - 1;
  const std::uint64_t w = header_->write_position.load(std::memory_order_acquire);
  position_ = from_start ? (w > cap ? w - cap : 0) : w;
}

SignalRingReader::~SignalRingReader() {
  if (header_) munmap(header_, map_bytes_);
}

std::uint64_t SignalRingReader::write_position() const noexcept {
  return header_->write_position.load(std::memory_order_acquire);
}

bool SignalRingReader::poll(std::uint8_t* out) noexcept {
  for (;;) {
    if (!features::broadcast_next(write_position(), capacity_, position_, missed_)) return false;
    const std::uint64_t p = position_;
    const Slot& s = slots(header_)[p & mask_];
    const std::uint64_t s1 = s.seq.load(std::memory_order_acquire);
    // Below 2p+2: message p is still being written by one of several writers (a later one has
    // finished and moved the write position past it); it is read on a later poll.
    if (s1 < 2 * p + 2) return false;
    std::memcpy(out, s.message, kSignalBytes);
    std::atomic_thread_fence(std::memory_order_acquire);
    const std::uint64_t s2 = s.seq.load(std::memory_order_relaxed);
    ++position_;
    if (s1 == 2 * p + 2 && s2 == s1) return true;
    ++missed_;  // overwritten while we looked: try the next one
  }
}

}  // namespace tickinfer::pipeline
