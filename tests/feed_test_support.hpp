#pragma once
// Helpers shared by the feed tests: packet building and a sink that records what a Sequencer did.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "feed/moldudp64.hpp"
#include "feed/sequencer.hpp"

namespace tickinfer::feed::testing {

// A packet of `count` one-byte messages starting at seq; message seq carries byte (seq & 0xFF).
struct TestPacket {
  std::vector<std::uint8_t> bytes;
  PacketView view() const {
    PacketView v;
    parse_packet(bytes.data(), bytes.size(), v);
    return v;
  }
};

inline TestPacket make_packet(std::uint64_t seq, std::uint16_t count, const char* session = "S1") {
  TestPacket p;
  p.bytes.resize(kHeaderBytes + count * 3u);
  PacketBuilder b(p.bytes.data(), p.bytes.size());
  b.start(Session::from(session), seq);
  for (std::uint16_t i = 0; i < count; ++i) {
    const std::uint8_t m = static_cast<std::uint8_t>((seq + i) & 0xFF);
    b.add(&m, 1);
  }
  p.bytes.resize(b.finish());
  return p;
}

inline TestPacket make_control(std::uint64_t next, bool eos, const char* session = "S1") {
  TestPacket p;
  p.bytes.resize(kHeaderBytes);
  encode_control(p.bytes.data(), Session::from(session), next, eos);
  return p;
}

struct RecordingSink : SequencerSink {
  std::vector<std::uint64_t> delivered;
  std::vector<std::uint8_t> delivered_line;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> requested;  // (first, count)
  std::vector<std::pair<std::uint64_t, std::uint64_t>> lost;
  std::vector<LossReason> lost_reason;
  std::vector<std::string> sessions;
  bool content_ok = true;  // every message carried its own seq's low byte
  void on_message(std::uint64_t seq, const std::uint8_t* msg, std::uint16_t len, const RxMeta& meta,
                  std::int64_t) noexcept override {
    delivered.push_back(seq);
    delivered_line.push_back(meta.line);
    if (len != 1 || msg[0] != static_cast<std::uint8_t>(seq & 0xFF)) content_ok = false;
  }
  void on_gap_detected(std::uint64_t first, std::uint64_t count, std::int64_t) noexcept override {
    requested.emplace_back(first, count);
  }
  void on_lost(std::uint64_t first, std::uint64_t count, LossReason reason) noexcept override {
    lost.emplace_back(first, count);
    lost_reason.push_back(reason);
  }
  void on_session_start(const Session& s) noexcept override { sessions.push_back(s.str()); }
  std::uint64_t end_next = 0;  // the last End of Session's next sequence
  void on_end_of_session(const Session&, std::uint64_t next) noexcept override { end_next = next; }
  std::vector<std::uint64_t> lost_seqs() const {
    std::vector<std::uint64_t> out;
    for (auto [f, c] : lost)
      for (std::uint64_t s = f; s < f + c; ++s) out.push_back(s);
    return out;
  }
};

}  // namespace tickinfer::feed::testing
