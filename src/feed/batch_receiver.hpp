#pragma once
// Batched non-blocking receive with recvmmsg(MSG_DONTWAIT): up to `batch` datagrams per system
// call into buffers allocated once. For each datagram it reports the payload, the kernel receive
// timestamp (SO_TIMESTAMPNS, CLOCK_REALTIME ns; the read time when the socket has none), whether
// it was truncated (longer than the buffer: the caller must drop it), the sender's address, and
// the socket's cumulative kernel drop counter (SO_RXQ_OVFL: datagrams the kernel discarded
// because the receive buffer was full).
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tickinfer::feed {

class BatchReceiver {
 public:
  // Throws tickinfer::Error if batch is not in [1, 1024] or max_datagram < 20.
  explicit BatchReceiver(int batch = 32, std::size_t max_datagram = 2048);
  // The headers point into the buffers (set once): a copy would point into the original's. A
  // move keeps the buffers, and so the pointers.
  BatchReceiver(const BatchReceiver&) = delete;
  BatchReceiver& operator=(const BatchReceiver&) = delete;
  BatchReceiver(BatchReceiver&&) noexcept = default;
  BatchReceiver& operator=(BatchReceiver&&) noexcept = default;

  // Receives what is queued on fd, up to `max` datagrams (<= 0 or above batch: batch). Returns
  // how many (0 when none). Errors other than "nothing queued" are counted in errors() and
  // return 0. Never blocks or throws.
  //
  // A poller that found the socket empty last time should ask for 1: the kernel then returns as
  // soon as it has one datagram instead of trying for a second (about 0.25 us on loopback), and
  // that datagram is handled first. Ask for a whole batch while datagrams keep coming.
  int receive(int fd, int max = 0) noexcept;

  const std::uint8_t* data(int i) const noexcept { return buffers_.data() + i * max_datagram_; }
  std::size_t length(int i) const noexcept { return msgs_[i].msg_len; }
  bool truncated(int i) const noexcept { return (msgs_[i].msg_hdr.msg_flags & MSG_TRUNC) != 0; }
  std::int64_t kernel_rx_ns(int i) const noexcept { return rx_ns_[i]; }
  // False when the kernel attached no stamp and kernel_rx_ns(i) is the read time instead.
  bool kernel_stamped(int i) const noexcept { return stamped_[i] != 0; }
  const sockaddr_in& source(int i) const noexcept { return addrs_[i]; }
  // Cumulative SO_RXQ_OVFL value last reported by the kernel for this socket. The kernel stamps
  // each datagram with the count at the time it was queued, so drops show up with the first
  // datagram queued after them.
  std::uint32_t kernel_drops() const noexcept { return kernel_drops_; }
  std::uint64_t errors() const noexcept { return errors_; }
  int batch() const noexcept { return batch_; }

 private:
  int batch_;
  std::size_t max_datagram_;
  static constexpr std::size_t kControlBytes = 128;  // room for the timestamp and drop cmsgs
  std::vector<std::uint8_t> buffers_;
  std::vector<std::uint8_t> control_;
  std::vector<iovec> iov_;
  std::vector<mmsghdr> msgs_;
  std::vector<sockaddr_in> addrs_;
  std::vector<std::int64_t> rx_ns_;
  std::vector<std::uint8_t> stamped_;
  void reset_headers(int n) noexcept;  // restores the fields the kernel wrote back
  int dirty_ = 0;                      // headers the last call filled
  std::uint32_t kernel_drops_ = 0;
  std::uint64_t errors_ = 0;
};

}  // namespace tickinfer::feed
