#include "pipeline/tx_stamps.hpp"

#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <netinet/in.h>
#include <time.h>

#include <algorithm>
#include <cstring>

namespace tickinfer::pipeline {

namespace {
constexpr std::size_t kControlBytes = 256;  // scm_timestamping + sock_extended_err, with headers
constexpr std::size_t kDataBytes = 64;      // OPT_TSONLY: no payload comes back; room for safety
}  // namespace

TxStampCollector::TxStampCollector(int fd) : fd_(fd), slots_(kCapacity) {
  // TSONLY: the kernel queues a bare stamp, not a copy of the datagram. OPT_ID: with its number.
  const int flags = SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_OPT_TSONLY |
                    SOF_TIMESTAMPING_OPT_ID;
  enabled_ = fd >= 0 && ::setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof flags) == 0;
  if (enabled_) {
    // The stamps wait on the error queue, which is charged to the receive buffer (each about
    // 1 KB of skb): room for a few thousand, so a stall's backlog does not drop them. Root may
    // exceed net.core.rmem_max (FORCE); otherwise the capped size still holds a few hundred.
    const int bytes = 4 << 20;
    if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes) != 0)
      ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
  }
  msgs_.resize(kReadBatch);
  iov_.resize(kReadBatch);
  data_.resize(kReadBatch * kDataBytes);
  control_.resize(kReadBatch * kControlBytes);
}

void TxStampCollector::sent(std::int64_t before_ns, std::int64_t sent_ns, const std::int64_t* exchange_ns,
                            const std::int64_t* rx_ns, std::size_t n) noexcept {
  if (!enabled_) return;
  if (count_ == kCapacity) give_up_oldest();  // stamps are not coming back (or not read)
  Slot& s = slots_[(head_ + count_) % kCapacity];
  s.id = next_id_++;
  s.slack = failed_since_sent_;
  failed_since_sent_ = 0;
  s.before_ns = before_ns;
  s.sent_ns = sent_ns;
  s.n = std::min(n, kMaxSignals);
  std::copy(exchange_ns, exchange_ns + s.n, s.exchange_ns);
  std::copy(rx_ns, rx_ns + s.n, s.rx_ns);
  ++count_;
}

int TxStampCollector::read_stamps() noexcept {
  if (!enabled_) return 0;
  for (int i = 0; i < kReadBatch; ++i) {
    const auto k = static_cast<std::size_t>(i);
    iov_[k] = iovec{data_.data() + k * kDataBytes, kDataBytes};
    msghdr& h = msgs_[k].msg_hdr;
    h = msghdr{};
    h.msg_iov = &iov_[k];
    h.msg_iovlen = 1;
    h.msg_control = control_.data() + k * kControlBytes;
    h.msg_controllen = kControlBytes;
    msgs_[k].msg_len = 0;
  }
  const int got = ::recvmmsg(fd_, msgs_.data(), kReadBatch, MSG_ERRQUEUE | MSG_DONTWAIT, nullptr);
  if (got <= 0) return 0;
  int n = 0;
  for (int i = 0; i < got; ++i) {
    msghdr& h = msgs_[static_cast<std::size_t>(i)].msg_hdr;
    std::int64_t ts = 0;
    std::uint32_t id = 0;
    bool is_stamp = false;
    for (cmsghdr* c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPING) {
        timespec t[3];  // [0]: software
        std::memcpy(t, CMSG_DATA(c), sizeof t);
        ts = t[0].tv_sec * 1'000'000'000LL + t[0].tv_nsec;
      } else if ((c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
                 (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR)) {
        sock_extended_err e;
        std::memcpy(&e, CMSG_DATA(c), sizeof e);
        is_stamp = e.ee_origin == SO_EE_ORIGIN_TIMESTAMPING && e.ee_info == SCM_TSTAMP_SND;
        id = e.ee_data;
      }
    }
    if (is_stamp && ts != 0) {
      stamps_[n] = ts;
      ids_[n++] = id;
    }
  }
  return n;
}

const TxStampCollector::Slot* TxStampCollector::match(std::uint32_t id, std::int64_t tx_ns) noexcept {
  // Candidates: the waiting datagrams whose number could be `id`, given the failed sends before
  // them (each may have used one). Counter arithmetic is modulo 2^32.
  std::size_t pick = count_;
  std::uint32_t slack = 0;
  for (std::size_t k = 0; k < count_; ++k) {
    const Slot& s = at(k);
    slack += s.slack;
    const auto ahead = static_cast<std::int32_t>(id - s.id);
    if (ahead < 0) break;  // older than this one: no later datagram can be it either
    if (static_cast<std::uint32_t>(ahead) > slack) continue;
    if (pick == count_) pick = k;
    if (tx_ns >= s.before_ns && tx_ns <= s.sent_ns) {  // stamped inside its own send(): certain
      pick = k;
      break;
    }
    if (slack == 0) break;  // no failures in between: the first candidate is the only one
  }
  if (pick == count_) {
    ++stray_;  // an older datagram's stamp, given up on already
    return nullptr;
  }
  for (std::size_t k = 0; k < pick; ++k) {  // earlier datagrams: their stamps never came
    pop();
    ++missing_;
  }
  Slot& s = at(0);
  const std::uint32_t offset = id - s.id;  // numbers the failed sends before it used: settled
  if (offset != 0) {
    for (std::size_t k = 1; k < count_; ++k) at(k).id += offset;
    next_id_ += offset;
  }
  s.slack = 0;
  ++matched_;
  return &s;
}

// The oldest datagram will get no stamp. Whatever failed sends before it left unsettled (its slack)
// passes to the next one, or to the next recorded.
void TxStampCollector::give_up_oldest() noexcept {
  const std::uint32_t unsettled = slots_[head_].slack;
  pop();
  ++missing_;
  if (count_ > 0) slots_[head_].slack += unsettled;
  else failed_since_sent_ += unsettled;
}

void TxStampCollector::pop() noexcept {
  head_ = (head_ + 1) % kCapacity;
  --count_;
}

}  // namespace tickinfer::pipeline
