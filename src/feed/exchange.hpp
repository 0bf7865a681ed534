#pragma once
// The synthetic exchange behind `tickinfer feed serve` and the end-to-end tests: generates a
// seeded market (MarketGenerator), frames it as MoldUDP64, publishes every packet on line A and
// line B through each line's fault injector (LineInjector), answers re-requests from its message
// store on a unicast socket, and ends the session with End of Session packets.
//
// It accounts for exactly what each line sent, from the real send order, with the receiver's
// definitions (src/feed/arbiter.hpp): messages never sent on the line, duplicate packets (first
// sequence already sent on that line), reordered packets (first sequence below one already sent),
// and the messages sent on neither line. It also hashes every message (FNV-1a 64 over seq, length
// and bytes, in sequence order), so a receiver can prove it delivered the same content.
#include <netinet/in.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "feed/batch_receiver.hpp"
#include "feed/line_faults.hpp"
#include "feed/market_generator.hpp"
#include "feed/moldudp64.hpp"
#include "feed/udp_socket.hpp"

namespace tickinfer::feed {

struct ExchangeConfig {
  Session session = Session::from("TICKINF001");
  GeneratorConfig market;
  std::uint64_t messages = 100'000;     // at most 2^26: every message is kept for re-requests
  double rate = 50'000;                  // messages per second (wall clock)
  std::uint32_t max_per_packet = 4;      // messages per packet: uniform in [1, max]
  std::size_t max_packet_bytes = 1200;   // MTU-safe payload
  sockaddr_in line_a{};
  bool line_b_enabled = true;
  sockaddr_in line_b{};
  std::string multicast_interface;       // for multicast destinations
  LineFaults faults[2];
  std::string rerequest_bind = "127.0.0.1";
  std::uint16_t rerequest_port = 0;      // 0: ephemeral (see Exchange::rerequest_port)
  bool rerequest_silent = false;         // fault: never answer
  double rerequest_answer_fraction = 1.0;  // fault: answer only the first ceil(share) of each request
  std::int64_t linger_ns = 2'000'000'000;  // keep answering re-requests after the end
  std::int64_t end_of_session_interval_ns = 100'000'000;
  std::int64_t heartbeat_interval_ns = 1'000'000'000;  // a line quiet this long gets a heartbeat
  // Stamp every message's exchange timestamp with CLOCK_REALTIME when its packet is built (just
  // before it is sent) instead of the generator's synthetic clock, so a receiver on this host can
  // measure exchange send -> anything. The market itself is unchanged; the content hash is not
  // reproducible across runs then.
  bool wall_clock_timestamps = false;
  // Wait for the next packet's due time asleep instead of spinning the last 150 us: the
  // exchange leaves its core to the threads beside it (a bench with fewer cores than threads);
  // packets leave up to the timer slack late, stamped when they are built.
  bool sleep_pacing = false;
  // Another protocol's messages to publish instead of the generated market, each framed as a
  // 2-byte big-endian length then its bytes (a Nasdaq ITCH day file's layout): the same lines,
  // faults, re-requests and End of Session carry them. `messages` is then how many of them to send
  // (at most the number held); wall_clock_timestamps does not apply (the payload is opaque here).
  std::shared_ptr<const std::vector<std::uint8_t>> framed_messages;
};

struct ExchangeLineStats {
  std::uint64_t packets_sent = 0;  // datagrams, copies included
  std::uint64_t lost_messages = 0;
  std::uint64_t duplicate_packets = 0;
  std::uint64_t reordered_packets = 0;
};

struct ExchangeStats {
  std::uint64_t messages = 0;
  std::uint64_t packets = 0;  // distinct packets built
  ExchangeLineStats line[2];
  std::uint64_t both_lost_messages = 0;
  std::vector<std::uint64_t> both_lost;  // the sequences no line sent, ascending
  std::uint64_t content_hash = 0;
  std::uint64_t rerequests = 0;
  std::uint64_t rerequests_rejected = 0;  // malformed or another session
  std::uint64_t rerequests_ignored = 0;   // silent fault
  std::uint64_t messages_retransmitted = 0;
  std::uint64_t send_failures = 0;  // packets the kernel refused: counted lost, not sent
  std::uint64_t heartbeats = 0;  // per line sent
};

// FNV-1a 64 over (seq as 8 little-endian bytes, len as 2 little-endian bytes, bytes).
std::uint64_t fnv1a_message(std::uint64_t hash, std::uint64_t seq, const std::uint8_t* msg,
                            std::uint16_t len) noexcept;
inline constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ull;

class Exchange {
 public:
  // Opens its sockets; throws tickinfer::Error on a bad configuration or socket failure.
  explicit Exchange(const ExchangeConfig& config);
  std::uint16_t rerequest_port() const noexcept { return rerequest_.local_port(); }
  // Where lines A and B go (before run()); lets receivers bind ephemeral ports first.
  void set_destinations(const sockaddr_in& a, const sockaddr_in& b) noexcept {
    cfg_.line_a = a;
    cfg_.line_b = b;
  }

  // Publishes every message at the configured rate, then End of Session, then lingers answering
  // re-requests. Returns early (after End of Session) when *stop becomes true.
  void run(const std::atomic<bool>* stop = nullptr);
  const ExchangeStats& stats() const noexcept { return stats_; }

  // Writes the sent log (docs/feed.md): summary, both-lost runs, and every send in order.
  void write_sent_log(const std::string& path) const;

 private:
  struct Packet {
    std::uint64_t first;
    std::uint16_t count;
    std::uint32_t offset, size;  // in packet_bytes_
  };
  struct Send {
    std::uint8_t line;
    std::uint32_t packet;
  };
  void build_packet(std::uint32_t count);
  // The next message to publish into out (which holds kSlotBytes); returns its length.
  std::uint16_t next_message(std::uint8_t* out);
  void send_release(int line, const std::vector<LineInjector::Release>& rel);
  void serve_rerequests();
  void send_end_of_session();
  void send_heartbeats(std::int64_t now_ns);
  void account();

  ExchangeConfig cfg_;
  MarketGenerator gen_;
  UdpSocket out_;
  UdpSocket rerequest_;
  BatchReceiver rerequest_rx_{16, 64};         // re-requests are 20-byte datagrams
  std::vector<LineInjector::Release> release_;  // reused by run(); sized in the constructor
  LineInjector inj_[2];
  std::vector<std::uint8_t> msg_bytes_;      // every message, back to back
  std::vector<std::uint32_t> msg_offset_;    // msg_offset_[seq - 1]; size = messages + 1
  template <class T>
  static void prefault(std::vector<T>& v, std::size_t n);
  std::vector<std::uint8_t> packet_bytes_;
  std::vector<Packet> packets_;
  std::vector<Send> sends_;
  std::vector<std::uint8_t> sent_[2];        // per line: seq was sent (index seq)
  std::uint64_t max_end_[2] = {1, 1};
  std::uint64_t next_seq_ = 1;
  std::size_t framed_cursor_ = 0;            // next record in cfg_.framed_messages
  std::int64_t last_send_ns_[2] = {0, 0};
  ExchangeStats stats_;
};

}  // namespace tickinfer::feed
