#pragma once
// MoldUDP64 gap recovery: turns the sequencer's on_gap_detected ranges into unicast re-request
// packets to the re-request server, and owns retry and timeout.
//
// Each range is split into requests of at most max_per_request messages; a range that continues
// the newest young request joins it. A request is complete
// when the sequencer no longer misses anything in it. After timeout_ns without completion it is
// sent again for what is still missing (so a partial answer shrinks the next request), up to
// max_attempts sends in all. When the last attempt times out, recovery has FAILED for that
// range: it calls Sequencer::abandon(), which reports the still-missing messages as lost
// (LossReason::Unrecoverable) and lets delivery continue after them. Nothing waits forever.
//
// The answer arrives as ordinary downstream packets on the socket the request was sent from; the
// owner reads that socket and feeds it to the arbiter as kLineRecovery. Single-threaded, no
// allocation after construction (requests live in a fixed table; when it is full a new range
// widens the last entry instead). When the sequencer starts a new session, every outstanding
// request is cancelled (counted): old sequence numbers mean nothing in the new space.
#include <netinet/in.h>

#include <cstdint>
#include <vector>

#include "feed/sequencer.hpp"
#include "feed/udp_socket.hpp"

namespace tickinfer::feed {

struct RecoveryConfig {
  sockaddr_in server{};
  std::int64_t timeout_ns = 5'000'000;  // per attempt
  int max_attempts = 4;
  std::uint16_t max_per_request = 1024;  // messages per request packet
  std::size_t max_outstanding = 4096;
};

class RecoveryClient {
 public:
  // socket: where requests go out from and answers come back to. Throws tickinfer::Error on a
  // bad configuration (zero timeout, attempts or size).
  RecoveryClient(const UdpSocket& socket, Sequencer& sequencer, const RecoveryConfig& config);

  // A missing range (from SequencerSink::on_gap_detected). Sends the first requests now.
  void request(std::uint64_t first, std::uint64_t count, std::int64_t now_ns) noexcept;
  // Retries, completions and failures. Returns the number of requests it acted on.
  int poll(std::int64_t now_ns) noexcept;

  std::size_t outstanding() const noexcept { return count_; }
  const RecoveryStats& stats() const noexcept { return stats_; }

 private:
  struct Pending {
    std::uint64_t first, end;
    std::int64_t sent_ns;
    int attempts;
  };
  void send(Pending& p, std::int64_t now_ns) noexcept;
  static constexpr int kMaxPacketsPerSend = 64;  // bounds the burst one retry puts on the wire
  // A new session is a new sequence space: requests for the old one are void.
  void check_session() noexcept;

  const UdpSocket& socket_;
  Sequencer& seq_;
  RecoveryConfig cfg_;
  std::vector<Pending> table_;
  std::size_t count_ = 0;
  std::uint64_t session_epoch_ = 0;  // Sequencer::stats().sessions the table belongs to
  RecoveryStats stats_;
};

}  // namespace tickinfer::feed
