#pragma once
// Kernel transmit timestamps of the UDP signal datagrams: the moment each one was handed to the
// network device (SO_TIMESTAMPING with SOF_TIMESTAMPING_TX_SOFTWARE, generated in the driver just
// before the hardware gets the packet). That is when a signal is sent, the counterpart of the
// kernel receive stamp the feed takes on the way in.
//
// Why not the return of send(): on loopback the kernel runs the *receiving* socket's whole stack
// (netif_rx, then the softirq on bottom-half enable: IP, UDP, socket enqueue) inside the sender's
// syscall, so send() returns about 1.6 us after the datagram left. A NIC returns right after the
// hand-off. Both figures are kept (the stage table has each).
//
// The stamps come back on the socket's error queue. Reading them is a syscall, so the pipeline
// reads them only when it has nothing else to do (Pipeline: idle rounds), many per recvmmsg.
// Each carries the kernel's per-socket send counter (SOF_TIMESTAMPING_OPT_ID), which is matched
// to the datagram it counted. That holds when a stamp comes late (a NIC whose queue was busy
// stamps when it finally sends). A failed send() may or may not have used a number (it depends
// on the kernel), so after failures a stamp may belong to any of a few datagrams: the one whose
// send() it falls inside is taken, else the first; the match settles the numbering after it.
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pipeline/signal_format.hpp"

namespace tickinfer::pipeline {

class TxStampCollector {
 public:
  static constexpr std::size_t kMaxSignals = kMaxSignalsPerDatagram;
  static constexpr std::size_t kCapacity = 1024;   // datagrams waiting for their stamp
  static constexpr int kReadBatch = 16;            // stamps per recvmmsg

  // Turns on transmit timestamps for fd. enabled() is false if the kernel refuses them.
  explicit TxStampCollector(int fd);
  bool enabled() const noexcept { return enabled_; }

  // One datagram left: its send() ran within [before_ns, sent_ns]; it carries n signals with
  // these exchange and kernel receive times. When kCapacity datagrams already wait, the oldest is
  // given up.
  void sent(std::int64_t before_ns, std::int64_t sent_ns, const std::int64_t* exchange_ns, const std::int64_t* rx_ns,
            std::size_t n) noexcept;
  // A send() on the socket failed: the kernel may have used a counter value for it.
  void send_failed() noexcept { ++failed_since_sent_; }

  std::size_t waiting() const noexcept { return count_; }
  std::int64_t oldest_sent_ns() const noexcept { return count_ ? slots_[head_].sent_ns : 0; }

  // Reads up to kReadBatch stamps from the error queue and calls
  // on_signal(tx_ns, exchange_ns, rx_ns) for each signal of each matched datagram. Returns the
  // number of stamps read (0: none queued).
  template <class F>
  int drain(F&& on_signal) noexcept {
    const int n = read_stamps();
    for (int i = 0; i < n; ++i) {
      const Slot* s = match(ids_[static_cast<std::size_t>(i)], stamps_[static_cast<std::size_t>(i)]);
      if (!s) continue;
      for (std::size_t k = 0; k < s->n; ++k) on_signal(stamps_[static_cast<std::size_t>(i)], s->exchange_ns[k], s->rx_ns[k]);
      pop();
    }
    return n;
  }

  std::uint64_t matched() const noexcept { return matched_; }
  std::uint64_t missing() const noexcept { return missing_; }   // datagrams whose stamp never came
  std::uint64_t stray() const noexcept { return stray_; }       // stamps that matched no waiting datagram

 private:
  struct Slot {
    std::uint32_t id = 0;     // the kernel's counter value expected for this datagram
    std::uint32_t slack = 0;  // sends that failed just before it: the id may be up to this much higher
    std::int64_t before_ns = 0, sent_ns = 0;
    std::size_t n = 0;
    std::int64_t exchange_ns[kMaxSignals];
    std::int64_t rx_ns[kMaxSignals];
  };
  int read_stamps() noexcept;
  const Slot* match(std::uint32_t id, std::int64_t tx_ns) noexcept;
  Slot& at(std::size_t k) noexcept { return slots_[(head_ + k) % kCapacity]; }
  void pop() noexcept;
  void give_up_oldest() noexcept;

  int fd_ = -1;
  bool enabled_ = false;
  std::vector<Slot> slots_;
  std::size_t head_ = 0, count_ = 0;
  std::uint32_t next_id_ = 0;          // the counter starts at 0 when OPT_ID is turned on
  std::uint32_t failed_since_sent_ = 0;
  std::uint64_t matched_ = 0, missing_ = 0, stray_ = 0;
  // recvmmsg state, allocated once.
  std::vector<mmsghdr> msgs_;
  std::vector<iovec> iov_;
  std::vector<std::uint8_t> data_, control_;
  std::int64_t stamps_[kReadBatch];
  std::uint32_t ids_[kReadBatch];
};

}  // namespace tickinfer::pipeline
