#include "feed/exchange.hpp"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <random>

#include "feed/batch_receiver.hpp"
#include "feed/messages.hpp"
#include "stats/clock.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::feed {

namespace {
void sleep_ns(std::int64_t ns) {
  timespec ts{ns / 1'000'000'000, ns % 1'000'000'000};
  nanosleep(&ts, nullptr);
}
ReceiverConfig rerequest_config(const ExchangeConfig& c) {
  ReceiverConfig r;
  r.bind_address = c.rerequest_bind;
  r.port = c.rerequest_port;
  r.rcvbuf_bytes = 1 << 20;
  r.kernel_timestamps = false;
  return r;
}
}  // namespace

std::uint64_t fnv1a_message(std::uint64_t h, std::uint64_t seq, const std::uint8_t* msg,
                            std::uint16_t len) noexcept {
  auto mix = [&h](std::uint8_t b) { h = (h ^ b) * 0x100000001b3ull; };
  for (int i = 0; i < 8; ++i) mix(static_cast<std::uint8_t>(seq >> (8 * i)));
  mix(static_cast<std::uint8_t>(len));
  mix(static_cast<std::uint8_t>(len >> 8));
  for (std::uint16_t i = 0; i < len; ++i) mix(msg[i]);
  return h;
}

namespace {
// The largest message a slot must hold: tickinfer's own, or any of a framed protocol's (ITCH 5.0's
// longest is 50 bytes; longer records are refused when the exchange is built).
constexpr std::size_t kSlotBytes = 64;

std::uint64_t count_framed(const std::vector<std::uint8_t>& b) {
  std::uint64_t n = 0;
  std::size_t at = 0;
  while (at + 2 <= b.size()) {
    const std::size_t len = (std::size_t{b[at]} << 8) | b[at + 1];
    if (len == 0 || len > kSlotBytes || at + 2 + len > b.size()) {
      throw Error("exchange: framed message " + std::to_string(n + 1) + " at byte " + std::to_string(at) +
                  " has length " + std::to_string(len) + " (1 to 64 bytes, inside the buffer)");
    }
    at += 2 + len;
    ++n;
  }
  if (at != b.size()) throw Error("exchange: framed messages end in a partial length prefix");
  return n;
}
}  // namespace

Exchange::Exchange(const ExchangeConfig& config)
    : cfg_(config),
      gen_(config.market),
      out_(UdpSocket::sender(config.multicast_interface)),
      rerequest_(UdpSocket::receiver(rerequest_config(config))),
      inj_{LineInjector(config.faults[0], config.market.seed * 0x9E3779B97F4A7C15ull + 0xA),
           LineInjector(config.faults[1], config.market.seed * 0x9E3779B97F4A7C15ull + 0xB)} {
  if (cfg_.framed_messages) {
    cfg_.messages = std::min(cfg_.messages, count_framed(*cfg_.framed_messages));
    cfg_.wall_clock_timestamps = false;
  }
  if (cfg_.messages == 0) throw Error("exchange: message count must be > 0");
  // Every message is kept (about 40 bytes each with its offset) to answer re-requests.
  if (cfg_.messages > (1ull << 26)) throw Error("exchange: at most 67108864 messages per run (all are kept for re-requests)");
  if (!(cfg_.rate > 0)) throw Error("exchange: rate must be > 0 messages/s");
  if (cfg_.max_per_packet == 0 || cfg_.max_per_packet > 64) throw Error("exchange: messages per packet must be in [1, 64]");
  const std::size_t slot = cfg_.framed_messages ? kSlotBytes : kMaxMessageBytes;
  if (cfg_.max_packet_bytes < kHeaderBytes + (2 + slot) * cfg_.max_per_packet ||
      cfg_.max_packet_bytes > kMaxDatagramBytes) {
    throw Error("exchange: packet size " + std::to_string(cfg_.max_packet_bytes) +
                " cannot hold max_per_packet messages");
  }
  if (!(cfg_.rerequest_answer_fraction >= 0 && cfg_.rerequest_answer_fraction <= 1)) {
    throw Error("exchange: re-request answer fraction must be in [0, 1]");
  }
  cfg_.faults[0].validate("A");
  cfg_.faults[1].validate("B");
  // Everything the send loop appends to is sized and its pages touched here: a vector growing
  // mid-run copies megabytes, and a page faulting in between a packet's timestamp and its send
  // shows up as wire latency; either stall makes the exchange send its backlog as a burst.
  prefault(msg_offset_, cfg_.messages + 1);
  msg_offset_.push_back(0);
  prefault(msg_bytes_, cfg_.messages * slot);
  prefault(packet_bytes_, cfg_.messages * (slot + 2 + kHeaderBytes));
  prefault(packets_, cfg_.messages);
  prefault(sends_, 2 * cfg_.messages + 64);  // both lines, one copy each (duplication faults may grow it)
  for (auto& s : sent_) s.assign(cfg_.messages + 1, 0);
  release_.reserve(4096);  // a line's release (held packets let go at once: reordering, bursts)
  stats_.content_hash = kFnvOffset;
}

template <class T>
void Exchange::prefault(std::vector<T>& v, std::size_t n) {
  v.resize(n);  // value-initialises: every page is written once, now
  v.clear();    // keeps the capacity
}

void Exchange::build_packet(std::uint32_t count) {
  std::uint8_t buf[kMaxDatagramBytes];
  PacketBuilder b(buf, cfg_.max_packet_bytes);
  b.start(cfg_.session, next_seq_);
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint8_t m[kSlotBytes];
    const std::uint16_t len = next_message(m);
    b.add(m, len);
    msg_bytes_.insert(msg_bytes_.end(), m, m + len);
    msg_offset_.push_back(static_cast<std::uint32_t>(msg_bytes_.size()));
    stats_.content_hash = fnv1a_message(stats_.content_hash, next_seq_ + i, m, len);
  }
  const std::size_t size = b.finish();
  packets_.push_back(Packet{next_seq_, static_cast<std::uint16_t>(count),
                            static_cast<std::uint32_t>(packet_bytes_.size()), static_cast<std::uint32_t>(size)});
  packet_bytes_.insert(packet_bytes_.end(), buf, buf + size);
  next_seq_ += count;
  stats_.messages += count;
  ++stats_.packets;
}

std::uint16_t Exchange::next_message(std::uint8_t* out) {
  if (cfg_.framed_messages) {  // counted and checked in the constructor
    const std::uint8_t* rec = cfg_.framed_messages->data() + framed_cursor_;
    const auto len = static_cast<std::uint16_t>((rec[0] << 8) | rec[1]);
    std::memcpy(out, rec + 2, len);
    framed_cursor_ += 2u + len;
    return len;
  }
  md::Event e = gen_.next();
  if (cfg_.wall_clock_timestamps) {
    const std::int64_t now = stats::realtime_ns();
    if (e.kind == md::Event::Kind::Quote) e.quote.exchange_ts_ns = now;
    else e.trade.exchange_ts_ns = now;
  }
  return static_cast<std::uint16_t>(encode_event(e, out));
}

void Exchange::send_release(int line, const std::vector<LineInjector::Release>& rel) {
  const sockaddr_in& to = line == 0 ? cfg_.line_a : cfg_.line_b;
  for (const auto& r : rel) {
    const Packet& p = packets_[r.packet];
    for (int c = 0; c < r.copies; ++c) {
      last_send_ns_[line] = stats::monotonic_ns();
      if (!out_.send_to(packet_bytes_.data() + p.offset, p.size, to)) {
        // Not on the wire (ENOBUFS under memory pressure): lost on this line, as a fault would
        // lose it, so both_lost stays the truth of what no line carried.
        ++stats_.send_failures;
        continue;
      }
      sends_.push_back(Send{static_cast<std::uint8_t>(line), static_cast<std::uint32_t>(r.packet)});
      ExchangeLineStats& ls = stats_.line[line];
      ++ls.packets_sent;
      // The receiver's definitions (arbiter.hpp), applied to the real send order.
      if (sent_[line][p.first]) {
        ++ls.duplicate_packets;
        continue;
      }
      if (p.first < max_end_[line]) ++ls.reordered_packets;
      for (std::uint64_t s = p.first; s < p.first + p.count; ++s) sent_[line][s] = 1;
      if (p.first + p.count > max_end_[line]) max_end_[line] = p.first + p.count;
    }
  }
}

void Exchange::serve_rerequests() {
  BatchReceiver& rx = rerequest_rx_;
  for (;;) {
    const int n = rx.receive(rerequest_.fd());
    if (n == 0) return;
    for (int i = 0; i < n; ++i) {
      ++stats_.rerequests;
      Session s;
      std::uint64_t first;
      std::uint16_t count;
      if (rx.truncated(i) || parse_request(rx.data(i), rx.length(i), s, first, count) != ParseStatus::Ok ||
          s != cfg_.session) {
        ++stats_.rerequests_rejected;
        continue;
      }
      if (cfg_.rerequest_silent) {
        ++stats_.rerequests_ignored;
        continue;
      }
      const std::uint64_t published = next_seq_ - 1;
      if (first > published) continue;  // nothing to answer yet
      std::uint64_t want = std::min<std::uint64_t>(count, published - first + 1);
      if (cfg_.rerequest_answer_fraction < 1.0) {
        want = static_cast<std::uint64_t>(std::ceil(static_cast<double>(want) * cfg_.rerequest_answer_fraction));
      }
      std::uint8_t buf[kMaxDatagramBytes];
      PacketBuilder b(buf, cfg_.max_packet_bytes);
      std::uint64_t seq = first;
      while (seq < first + want) {
        b.start(cfg_.session, seq);
        while (seq < first + want) {
          const std::uint32_t off = msg_offset_[seq - 1];
          const auto len = static_cast<std::uint16_t>(msg_offset_[seq] - off);
          if (!b.add(msg_bytes_.data() + off, len)) break;
          ++seq;
        }
        const std::size_t size = b.finish();
        if (!rerequest_.send_to(buf, size, rx.source(i))) ++stats_.send_failures;
        stats_.messages_retransmitted += b.count();
      }
    }
  }
}

void Exchange::send_end_of_session() {
  std::uint8_t buf[kHeaderBytes];
  encode_control(buf, cfg_.session, next_seq_, true);
  out_.send_to(buf, sizeof buf, cfg_.line_a);
  if (cfg_.line_b_enabled) out_.send_to(buf, sizeof buf, cfg_.line_b);
}

void Exchange::send_heartbeats(std::int64_t now_ns) {
  std::uint8_t buf[kHeaderBytes];
  encode_control(buf, cfg_.session, next_seq_, false);
  for (int l = 0; l < (cfg_.line_b_enabled ? 2 : 1); ++l) {
    if (now_ns - last_send_ns_[l] < cfg_.heartbeat_interval_ns) continue;
    out_.send_to(buf, sizeof buf, l == 0 ? cfg_.line_a : cfg_.line_b);
    last_send_ns_[l] = now_ns;
    ++stats_.heartbeats;
  }
}

void Exchange::account() {
  const int lines = cfg_.line_b_enabled ? 2 : 1;
  stats_.both_lost.clear();
  for (int l = 0; l < 2; ++l) stats_.line[l].lost_messages = 0;
  for (std::uint64_t s = 1; s < next_seq_; ++s) {
    bool any = false;
    for (int l = 0; l < lines; ++l) {
      if (sent_[l][s]) any = true;
      else ++stats_.line[l].lost_messages;
    }
    if (!any) stats_.both_lost.push_back(s);
  }
  stats_.both_lost_messages = stats_.both_lost.size();
}

void Exchange::run(const std::atomic<bool>* stop) {
  const int lines = cfg_.line_b_enabled ? 2 : 1;
  std::mt19937_64 sizes(cfg_.market.seed ^ 0x5EEDull);
  std::vector<LineInjector::Release>& rel = release_;
  const double ns_per_msg = 1e9 / cfg_.rate;
  const std::int64_t t0 = stats::monotonic_ns();
  last_send_ns_[0] = last_send_ns_[1] = t0;
  std::uint64_t generated = 0;
  while (generated < cfg_.messages) {
    if (stop && stop->load(std::memory_order_relaxed)) break;
    const std::int64_t now = stats::monotonic_ns();
    const auto due = t0 + static_cast<std::int64_t>(static_cast<double>(generated) * ns_per_msg);
    if (now >= due) {
      const auto count = static_cast<std::uint32_t>(
          std::min<std::uint64_t>(1 + sizes() % cfg_.max_per_packet, cfg_.messages - generated));
      build_packet(count);
      generated += count;
      // Behind schedule the loop never idles: still answer re-requests every 32 packets.
      if ((packets_.size() & 31) == 0) serve_rerequests();
      for (int l = 0; l < lines; ++l) {
        rel.clear();
        inj_[l].offer(packets_.size() - 1, now, rel);
        send_release(l, rel);
      }
      continue;
    }
    for (int l = 0; l < lines; ++l) {
      rel.clear();
      inj_[l].poll(now, rel);
      send_release(l, rel);
    }
    serve_rerequests();
    send_heartbeats(now);
    if (cfg_.sleep_pacing) sleep_ns(due - now);
    else if (due - now > 150'000) sleep_ns(50'000);
  }
  for (int l = 0; l < lines; ++l) {  // nothing stays held at the end of the stream
    rel.clear();
    inj_[l].flush(rel);
    send_release(l, rel);
  }
  account();
  send_end_of_session();
  const std::int64_t end = stats::monotonic_ns() + cfg_.linger_ns;
  std::int64_t next_eos = stats::monotonic_ns() + cfg_.end_of_session_interval_ns;
  while (stats::monotonic_ns() < end) {
    if (stop && stop->load(std::memory_order_relaxed)) break;
    serve_rerequests();
    if (stats::monotonic_ns() >= next_eos) {
      send_end_of_session();
      next_eos += cfg_.end_of_session_interval_ns;
    }
    sleep_ns(100'000);
  }
}

void Exchange::write_sent_log(const std::string& path) const {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw Error("sent log '" + path + "': cannot create");
  std::fprintf(f, "# tickinfer feed sent log v1\n");
  std::fprintf(f, "session %s\nmessages %llu\npackets %llu\ncontent_hash %016llx\n",
               cfg_.session.str().c_str(), static_cast<unsigned long long>(stats_.messages),
               static_cast<unsigned long long>(stats_.packets),
               static_cast<unsigned long long>(stats_.content_hash));
  const char* names = "AB";
  for (int l = 0; l < (cfg_.line_b_enabled ? 2 : 1); ++l) {
    const ExchangeLineStats& s = stats_.line[l];
    std::fprintf(f, "line %c packets_sent=%llu lost_messages=%llu duplicate_packets=%llu reordered_packets=%llu\n",
                 names[l], static_cast<unsigned long long>(s.packets_sent),
                 static_cast<unsigned long long>(s.lost_messages),
                 static_cast<unsigned long long>(s.duplicate_packets),
                 static_cast<unsigned long long>(s.reordered_packets));
  }
  std::fprintf(f, "both_lost_messages %llu\n", static_cast<unsigned long long>(stats_.both_lost_messages));
  for (std::size_t i = 0; i < stats_.both_lost.size();) {
    std::size_t j = i + 1;
    while (j < stats_.both_lost.size() && stats_.both_lost[j] == stats_.both_lost[j - 1] + 1) ++j;
    std::fprintf(f, "both_lost %llu %zu\n", static_cast<unsigned long long>(stats_.both_lost[i]), j - i);
    i = j;
  }
  for (const Send& s : sends_) {
    const Packet& p = packets_[s.packet];
    std::fprintf(f, "send %c %llu %u\n", names[s.line], static_cast<unsigned long long>(p.first), p.count);
  }
  if (std::fclose(f) != 0) throw Error("sent log '" + path + "': write failed");
}

}  // namespace tickinfer::feed
