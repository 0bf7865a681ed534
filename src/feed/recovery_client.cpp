#include "feed/recovery_client.hpp"

#include <algorithm>

#include "tickinfer/error.hpp"

namespace tickinfer::feed {

RecoveryClient::RecoveryClient(const UdpSocket& socket, Sequencer& sequencer, const RecoveryConfig& config)
    : socket_(socket), seq_(sequencer), cfg_(config) {
  if (cfg_.timeout_ns <= 0) throw Error("recovery: timeout must be > 0");
  if (cfg_.max_attempts < 1) throw Error("recovery: max attempts must be >= 1");
  if (cfg_.max_per_request == 0 || cfg_.max_per_request == 0xFFFF) {
    throw Error("recovery: messages per request must be in [1, 65534]");
  }
  if (cfg_.max_outstanding == 0) throw Error("recovery: max outstanding must be >= 1");
  table_.resize(cfg_.max_outstanding);
}

void RecoveryClient::send(Pending& p, std::int64_t now_ns) noexcept {
  // Ask for everything still missing from the first missing message to the end, in request
  // packets of at most max_per_request (a widened entry may be larger than one packet).
  std::uint64_t first = std::max(p.first, seq_.next_expected());
  while (first < p.end && !seq_.is_missing(first)) ++first;
  std::uint8_t buf[kHeaderBytes];
  int packets = 0;
  do {
    const auto count = static_cast<std::uint16_t>(std::min<std::uint64_t>(p.end - first, cfg_.max_per_request));
    encode_request(buf, seq_.session(), first, count);
    if (!socket_.send_to(buf, sizeof buf, cfg_.server)) ++stats_.send_failures;
    ++stats_.requests_sent;
    first += count;
  } while (first < p.end && ++packets < kMaxPacketsPerSend);
  ++p.attempts;
  p.sent_ns = now_ns;
}

void RecoveryClient::check_session() noexcept {
  const std::uint64_t epoch = seq_.stats().sessions;
  if (epoch != session_epoch_) {
    stats_.cancelled += count_;
    count_ = 0;
    session_epoch_ = epoch;
  }
}

void RecoveryClient::request(std::uint64_t first, std::uint64_t count, std::int64_t now_ns) noexcept {
  check_session();
  ++stats_.ranges;
  const std::uint64_t end = first + count;
  // A range that continues the newest request, while that one is young (first attempt) and still
  // fits one packet, joins it: one table entry instead of many for a run of small holes.
  if (count_ > 0) {
    Pending& last = table_[count_ - 1];
    if (last.end == first && last.attempts == 1 && end - last.first <= cfg_.max_per_request) {
      last.end = end;
      std::uint8_t buf[kHeaderBytes];
      encode_request(buf, seq_.session(), first, static_cast<std::uint16_t>(count));
      if (!socket_.send_to(buf, sizeof buf, cfg_.server)) ++stats_.send_failures;
      ++stats_.requests_sent;
      return;
    }
  }
  for (std::uint64_t s = first; s < end;) {
    const std::uint64_t e = std::min<std::uint64_t>(end, s + cfg_.max_per_request);
    if (count_ < table_.size()) {
      Pending& p = table_[count_++];
      p = Pending{s, e, now_ns, 0};
      send(p, now_ns);
    } else {
      // Table full: widen the last request; its retries will ask for the rest.
      table_[count_ - 1].end = std::max(table_[count_ - 1].end, end);
      break;
    }
    s = e;
  }
}

int RecoveryClient::poll(std::int64_t now_ns) noexcept {
  check_session();
  int acted = 0;
  const std::uint64_t n = seq_.next_expected();
  for (std::size_t i = 0; i < count_;) {
    Pending& p = table_[i];
    bool done = p.end <= n;
    if (!done && now_ns - p.sent_ns >= cfg_.timeout_ns) {
      std::uint64_t s = std::max(p.first, n);
      while (s < p.end && !seq_.is_missing(s)) ++s;
      if (s >= p.end) {
        done = true;
      } else if (p.attempts >= cfg_.max_attempts) {
        ++stats_.failed;
        stats_.messages_abandoned += p.end - p.first;
        const Pending failed = p;
        table_[i] = table_[--count_];
        seq_.abandon(failed.first, failed.end, now_ns);
        ++acted;
        continue;
      } else {
        ++stats_.retries;
        p.first = s;
        send(p, now_ns);
        ++acted;
      }
    }
    if (done) {
      ++stats_.completed;
      table_[i] = table_[--count_];
      ++acted;
      continue;
    }
    ++i;
  }
  return acted;
}

}  // namespace tickinfer::feed
