// libFuzzer: the A/B arbiter and sequencer driven by fuzz bytes as a script of events (packets on
// either line with any sequence and count, heartbeats, end of session, session switches, clock
// steps, abandoned ranges, flushes). After every step the target checks, with __builtin_trap:
//   * within a session, delivered sequences strictly increase and each carries its own content;
//   * every sequence below next_expected() was delivered or reported lost exactly once
//     (delivered + lost == next_expected - 1 for the session);
//   * never more messages buffered than the window.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "feed/arbiter.hpp"
#include "feed/moldudp64.hpp"

namespace {
using namespace tickinfer::feed;

struct CheckingSink : SequencerSink {
  std::uint64_t last = 0, delivered = 0, lost = 0;
  void on_message(std::uint64_t seq, const std::uint8_t* m, std::uint16_t len, const RxMeta&,
                  std::int64_t) noexcept override {
    if (seq <= last) __builtin_trap();
    if (len != 1 || m[0] != static_cast<std::uint8_t>(seq)) __builtin_trap();
    last = seq;
    ++delivered;
  }
  void on_lost(std::uint64_t first, std::uint64_t count, LossReason) noexcept override {
    if (first <= last || count == 0) __builtin_trap();
    last = first + count - 1;
    lost += count;
  }
  void on_session_start(const Session&) noexcept override { last = delivered = lost = 0; }
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  CheckingSink sink;
  SequencerConfig c;
  c.window = 32;
  c.far_future_limit = 4096;
  c.policy = (data[0] & 1) ? GapPolicy::Recover : GapPolicy::Skip;
  c.gap_timeout_ns = 100;
  c.gap_packet_threshold = (data[0] >> 1) & 7;
  Sequencer seq(c, sink);
  Arbiter arb(seq, 64);
  const char* sessions[] = {"S1", "S2", "S3"};
  int session = 0;
  std::int64_t now = 0;
  std::vector<std::uint8_t> buf(kHeaderBytes + 8 * 3);
  for (std::size_t i = 1; i + 2 < size; i += 3) {
    const std::uint8_t op = data[i], a = data[i + 1], b = data[i + 2];
    const std::uint64_t base = seq.next_expected();
    switch (op % 8) {
      case 0: case 1: case 2: case 3: {  // a data packet around N on line op%2 (or recovery)
        const std::int64_t sd = static_cast<std::int64_t>(base) + static_cast<std::int8_t>(a);
        const std::uint64_t s = sd > 0 ? static_cast<std::uint64_t>(sd) : 1;
        const std::uint16_t n = 1 + (b % 8);
        PacketBuilder pb(buf.data(), buf.size());
        pb.start(Session::from(sessions[session]), s);
        for (std::uint16_t k = 0; k < n; ++k) {
          const std::uint8_t m = static_cast<std::uint8_t>(s + k);
          pb.add(&m, 1);
        }
        const std::size_t len = pb.finish();
        PacketView v;
        if (parse_packet(buf.data(), len, v, 64) != ParseStatus::Ok) __builtin_trap();
        arb.on_packet(op % 3, v, now, now);
        break;
      }
      case 4: {  // heartbeat / end of session, possibly far ahead
        encode_control(buf.data(), Session::from(sessions[session]), base + a * (b & 1 ? 64 : 1), b & 2);
        PacketView v;
        if (parse_packet(buf.data(), kHeaderBytes, v) != ParseStatus::Ok) __builtin_trap();
        arb.on_packet(0, v, now, now);
        break;
      }
      case 5:
        now += a * 10;
        seq.poll(now);
        break;
      case 6:
        seq.abandon(base + (a % 16), base + (a % 16) + 1 + b % 32, now);
        break;
      case 7:
        if (a & 1) session = (session + 1) % 3;
        else seq.flush(now, LossReason::Skipped);
        break;
    }
    if (seq.has_session() && sink.delivered + sink.lost != seq.next_expected() - 1) __builtin_trap();
    if (seq.buffered() > c.window) __builtin_trap();
  }
  return 0;
}
