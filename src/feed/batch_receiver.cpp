#include "feed/batch_receiver.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <string>

#include "tickinfer/error.hpp"

namespace tickinfer::feed {

BatchReceiver::BatchReceiver(int batch, std::size_t max_datagram)
    : batch_(batch), max_datagram_(max_datagram) {
  if (batch < 1 || batch > 1024) throw Error("receiver: batch " + std::to_string(batch) + " not in [1, 1024]");
  if (max_datagram < 20) throw Error("receiver: max datagram must hold a 20-byte MoldUDP64 header");
  buffers_.resize(static_cast<std::size_t>(batch) * max_datagram);
  control_.resize(static_cast<std::size_t>(batch) * kControlBytes);
  iov_.resize(batch);
  msgs_.resize(batch);
  addrs_.resize(batch);
  rx_ns_.resize(batch);
  stamped_.resize(batch);
  for (int i = 0; i < batch_; ++i) iov_[i] = iovec{buffers_.data() + i * max_datagram_, max_datagram_};
  reset_headers(batch_);
}

// Only the headers the kernel filled are rewritten: an empty poll costs the syscall alone.
void BatchReceiver::reset_headers(int n) noexcept {
  for (int i = 0; i < n; ++i) {
    msghdr& h = msgs_[i].msg_hdr;
    h.msg_name = &addrs_[i];
    h.msg_namelen = sizeof(sockaddr_in);
    h.msg_iov = &iov_[i];
    h.msg_iovlen = 1;
    h.msg_control = control_.data() + i * kControlBytes;
    h.msg_controllen = kControlBytes;
    h.msg_flags = 0;
    msgs_[i].msg_len = 0;
  }
}

int BatchReceiver::receive(int fd, int max) noexcept {
  if (dirty_ > 0) {
    reset_headers(dirty_);
    dirty_ = 0;
  }
  const int want = max <= 0 || max > batch_ ? batch_ : max;
  const int n = ::recvmmsg(fd, msgs_.data(), static_cast<unsigned>(want), MSG_DONTWAIT, nullptr);
  if (n <= 0) {
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) ++errors_;
    return 0;
  }
  dirty_ = n;
  timespec read_time{};
  bool have_read_time = false;
  for (int i = 0; i < n; ++i) {
    msghdr& h = msgs_[i].msg_hdr;
    rx_ns_[i] = 0;
    for (cmsghdr* c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c)) {
      if (c->cmsg_level != SOL_SOCKET) continue;
      if (c->cmsg_type == SCM_TIMESTAMPNS) {
        timespec ts;
        std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
        rx_ns_[i] = ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
      } else if (c->cmsg_type == SO_RXQ_OVFL) {
        std::memcpy(&kernel_drops_, CMSG_DATA(c), sizeof kernel_drops_);
      }
    }
    stamped_[i] = rx_ns_[i] != 0;
    if (rx_ns_[i] == 0) {
      if (!have_read_time) {
        clock_gettime(CLOCK_REALTIME, &read_time);
        have_read_time = true;
      }
      rx_ns_[i] = read_time.tv_sec * 1'000'000'000LL + read_time.tv_nsec;
    }
  }
  return n;
}

}  // namespace tickinfer::feed
