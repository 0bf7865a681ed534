// libFuzzer: random datagrams from several sessions on lines A and B (data, heartbeats, End of
// Session, far-future sequences, malformed datagrams) through the Arbiter and Sequencer, checked
// with __builtin_trap against a plain model of the session rules (docs/feed.md, "Sessions"):
//   * the session is S1 (its first packet opens the run); it changes only after its End of
//     Session, to a packet of another session at sequence 1; the session just left never returns;
//   * every message delivered is of the current session, carries its content, comes once and in
//     order; the delivered and lost sequences of each session are exactly the model's;
//   * every per-line counter (packets, messages, control, lost, duplicate, reordered, too late,
//     other session, far future, malformed) and the sequencer's other-session and stale counts
//     equal the model's.
// Gap triggers are off (Skip policy): a hole waits until the session changes or the run ends.
#include <cstddef>
#include <cstdint>
#include <set>
#include <vector>

#include "feed/arbiter.hpp"
#include "feed/moldudp64.hpp"

namespace {
using namespace tickinfer::feed;

constexpr int kSessions = 3;
const char* const kNames[kSessions] = {"S1", "S2", "S3"};

std::uint8_t content(int session, std::uint64_t seq) {
  return static_cast<std::uint8_t>(seq * 7 + static_cast<std::uint64_t>(session) * 101);
}

void check(bool ok) {
  if (!ok) __builtin_trap();
}

struct Delivery {
  std::uint64_t epoch, seq;
  bool lost;
  bool operator==(const Delivery& o) const { return epoch == o.epoch && seq == o.seq && lost == o.lost; }
};

struct Sink : SequencerSink {
  std::vector<Delivery> out;
  std::uint64_t epoch = 0;
  int session = -1;  // the current session's index
  void on_message(std::uint64_t seq, const std::uint8_t* m, std::uint16_t len, const RxMeta&,
                  std::int64_t) noexcept override {
    check(len == 1 && m[0] == content(session, seq));
    out.push_back({epoch, seq, false});
  }
  void on_lost(std::uint64_t first, std::uint64_t count, LossReason) noexcept override {
    for (std::uint64_t s = first; s < first + count; ++s) out.push_back({epoch, s, true});
  }
  void on_session_start(const Session& s) noexcept override {
    ++epoch;
    for (int i = 0; i < kSessions; ++i)
      if (s == Session::from(kNames[i])) session = i;
  }
};

// The model: one session at a time; per line, what it delivered in that session.
struct Line {
  LineStats stats;
  std::set<std::uint64_t> got;  // sequences this line delivered in the current session
  std::uint64_t high = 1;
};

struct Model {
  int current = 0, previous = -1;
  bool ended = false;
  std::uint64_t ended_next = 0, next = 1, highest = 0, epoch = 1;
  std::uint64_t other = 0, stale = 0;
  std::set<std::uint64_t> buffered;
  Line lines[2];
  std::vector<Delivery> out;

  void drain() {
    while (buffered.count(next)) {
      buffered.erase(next);
      out.push_back({epoch, next++, false});
    }
  }
  void flush() {  // deliver what waits, lose the holes up to highest
    for (; next <= highest; ++next) out.push_back({epoch, next, buffered.erase(next) == 0});
    buffered.clear();
  }
  void settle(std::uint64_t end) {
    for (Line& l : lines) {
      for (std::uint64_t s = 1; s < end; ++s)
        if (!l.got.count(s)) ++l.stats.lost_messages;
    }
  }
  void start(int session) {
    flush();
    settle(ended_next);
    previous = current;
    current = session;
    ended = false;
    ended_next = 0;
    next = 1;
    highest = 0;
    ++epoch;
    for (Line& l : lines) {
      l.got.clear();
      l.high = 1;
    }
  }
  // One packet of `session` on `line`: data [seq, seq + count) when count > 0, else control.
  void packet(int line, int session, std::uint64_t seq, std::uint16_t count, bool eos) {
    LineStats& ls = lines[line].stats;
    if (session != current) {
      if (session == previous) {
        stale += count ? count : 1;
        ++ls.other_session_packets;
        return;
      }
      if (!(ended && seq == 1)) {
        ++other;
        ++ls.other_session_packets;
        return;
      }
      start(session);
    }
    if (seq > next && seq - next >= (std::uint64_t{1} << 22)) {
      ++ls.far_future_packets;
      return;
    }
    if (count == 0) {
      ++ls.control_packets;
      if (seq > next && seq - 1 > highest) highest = seq - 1;
      if (eos && !ended) ended_next = seq;
      ended = ended || eos;
      return;
    }
    ++ls.packets;
    ls.messages += count;
    Line& l = lines[line];
    if (l.got.count(seq)) {
      ++ls.duplicate_packets;
    } else {
      if (seq < l.high) ++ls.reordered_packets;
      for (std::uint64_t s = seq; s < seq + count; ++s) l.got.insert(s);
      if (seq + count > l.high) l.high = seq + count;
    }
    for (std::uint64_t s = seq; s < seq + count; ++s) {
      if (s < next) continue;
      buffered.insert(s);
      if (s > highest) highest = s;
    }
    drain();
  }
};

struct Harness {
  Sink sink;
  Sequencer seq;
  Arbiter arb;
  Model model;
  std::int64_t now = 0;
  static SequencerConfig config() {
    SequencerConfig c;
    c.window = 1024;
    c.policy = GapPolicy::Skip;
    c.gap_timeout_ns = 0;
    c.gap_packet_threshold = 0;
    return c;
  }
  Harness() : seq(config(), sink), arb(seq, 1024) {}

  void send(int line, int session, std::uint64_t s, std::uint16_t count, bool eos) {
    std::uint8_t buf[kHeaderBytes + 4 * 3];
    std::size_t len = kHeaderBytes;
    if (count == 0) {
      encode_control(buf, Session::from(kNames[session]), s, eos);
    } else {
      PacketBuilder pb(buf, sizeof buf);
      pb.start(Session::from(kNames[session]), s);
      for (std::uint16_t i = 0; i < count; ++i) {
        const std::uint8_t m = content(session, s + i);
        pb.add(&m, 1);
      }
      len = pb.finish();
    }
    PacketView v;
    check(parse_packet(buf, len, v, 64) == ParseStatus::Ok);
    model.packet(line, session, s, count, eos);
    ++now;
    arb.on_packet(line, v, now, now);
  }
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Harness h;
  h.send(0, 0, 1, 1, false);  // S1 opens the run at sequence 1: it is the session
  for (std::size_t i = 0; i + 3 < size; i += 4) {
    const std::uint8_t op = data[i], a = data[i + 1], b = data[i + 2], c = data[i + 3];
    const int line = op & 1;
    if (c == 0xFF) {  // a datagram that failed parse_packet
      ++h.model.lines[line].stats.malformed_packets;
      h.arb.on_malformed(line);
      continue;
    }
    const int session = ((op >> 1) & 3) % kSessions;
    const int kind = (op >> 3) & 3;  // 0, 1: data; 2: heartbeat; 3: End of Session
    std::uint64_t s = 1 + a % 200;
    if ((op & 0x60) == 0x60) s += 10'000'000 + c;  // far future
    if (kind < 2) {
      h.send(line, session, s, static_cast<std::uint16_t>(1 + b % 4), false);
    } else {
      h.send(line, session, b & 0x80 ? 1 : s, 0, kind == 3);
    }
  }
  h.model.flush();
  h.seq.flush(h.now, LossReason::Skipped);
  const std::uint64_t end = h.model.next;  // one past the highest sequence known to exist
  h.model.settle(end);
  h.arb.finish(end);

  // Sink and model both number sessions from 1, so each delivery is checked with its session.
  check(h.sink.out == h.model.out);
  check(h.seq.stats().wrong_session_packets == h.model.other);
  check(h.seq.stats().stale == h.model.stale);
  check(h.seq.stats().sessions == h.model.epoch);
  for (int l = 0; l < 2; ++l) {
    const LineStats& got = h.arb.line(l);
    const LineStats& want = h.model.lines[l].stats;
    check(got.packets == want.packets);
    check(got.messages == want.messages);
    check(got.control_packets == want.control_packets);
    check(got.lost_messages == want.lost_messages);
    check(got.duplicate_packets == want.duplicate_packets);
    check(got.reordered_packets == want.reordered_packets);
    check(got.too_late_packets == 0);
    check(got.other_session_packets == want.other_session_packets);
    check(got.far_future_packets == want.far_future_packets);
    check(got.malformed_packets == want.malformed_packets);
  }
  return 0;
}
