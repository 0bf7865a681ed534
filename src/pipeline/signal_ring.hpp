#pragma once
// The shared-memory signal ring: a broadcast ring of fixed 96-byte signal messages in a POSIX
// shared-memory object (/dev/shm/<name>), for strategy processes on the same host.
//
// One writing process (the pipeline, from one or several compute agents), any number of readers,
// none of which can slow the writers down:
//   * a writer never waits. It claims message number p (an atomic counter of the process); slot
//     i holds message p where p % capacity == i; before writing it sets the slot's sequence word
//     to 2p+1 (busy), after writing to 2p+2 (done), then raises write_position to p+1 if it is
//     lower (release): the position only moves forward;
//   * a reader at p whose slot word is still below 2p+2 (another agent's message p is being
//     written while a later one is done) waits for it: nothing is skipped;
//   * a reader keeps its own position. It reads a slot's sequence word, copies the message, reads
//     the word again: a value other than 2p+2 both times means the writer lapped it (the message
//     was overwritten) and the reader counts it as missed and moves on. A reader further behind
//     than `capacity` jumps forward and counts what it skipped.
// Layout (docs/signal-format.md section 3): a 128-byte header, then capacity slots of 128 bytes.
// Writer and reader throw tickinfer::Error naming the object when it cannot be created/opened or
// is not a signal ring; publish() and poll() never throw, allocate or make a syscall.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "pipeline/signal_format.hpp"

namespace tickinfer::pipeline {

struct SignalRingHeader;

class SignalRingWriter {
 public:
  // Creates (or re-creates, resetting it) /dev/shm/<name> with `capacity` slots (power of two).
  // several_writers: publish() may be called from several threads at once (compute agents).
  SignalRingWriter(const std::string& name, std::size_t capacity, bool several_writers = false);
  ~SignalRingWriter();
  SignalRingWriter(const SignalRingWriter&) = delete;
  SignalRingWriter& operator=(const SignalRingWriter&) = delete;

  // kSignalBytes bytes. From several threads at once only if constructed with several_writers.
  void publish(const std::uint8_t* message) noexcept;
  std::uint64_t published() const noexcept { return claimed_.load(std::memory_order_relaxed); }
  const std::string& name() const noexcept { return name_; }

 private:
  std::string name_;
  SignalRingHeader* header_ = nullptr;
  std::size_t map_bytes_ = 0;
  std::uint64_t mask_ = 0;
  bool several_ = false;
  std::atomic<std::uint64_t> claimed_{0};  // positions handed to publishers
};

class SignalRingReader {
 public:
  // Opens an existing ring read-only. from_start: begin at the oldest message still held;
  // otherwise at the next one written.
  SignalRingReader(const std::string& name, bool from_start);
  ~SignalRingReader();
  SignalRingReader(const SignalRingReader&) = delete;
  SignalRingReader& operator=(const SignalRingReader&) = delete;

  // The next message into `out` (kSignalBytes): true if one was read.
  bool poll(std::uint8_t* out) noexcept;
  std::uint64_t missed() const noexcept { return missed_; }  // overwritten before it was read
  std::uint64_t position() const noexcept { return position_; }
  std::uint64_t write_position() const noexcept;
  // Messages written and not yet read: how far behind this reader is (may exceed the capacity).
  std::uint64_t lag() const noexcept {
    const std::uint64_t w = write_position();
    return w > position_ ? w - position_ : 0;
  }

 private:
  SignalRingHeader* header_ = nullptr;
  std::size_t map_bytes_ = 0;
  std::uint64_t mask_ = 0, capacity_ = 0;
  std::uint64_t position_ = 0;
  std::uint64_t missed_ = 0;
};

}  // namespace tickinfer::pipeline
