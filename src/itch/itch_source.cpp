#include "itch/itch_source.hpp"

#include <cstdio>

#include "feed/moldudp64.hpp"
#include "feed/sequencer.hpp"
#include "itch/day_file.hpp"
#include "itch/itch_messages.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::itch {
namespace {

// The sequencer's sink: every MoldUDP64 block is one ITCH message.
class BlockForwarder : public feed::SequencerSink {
 public:
  BlockForwarder(ItchSink& sink, SourceStats& stats) : sink_(sink), stats_(stats) {}
  void on_message(std::uint64_t seq, const std::uint8_t* msg, std::uint16_t len, const feed::RxMeta&,
                  std::int64_t) noexcept override {
    ++stats_.records;
    sink_.on_record(seq, msg, len);
  }
  void on_lost(std::uint64_t first, std::uint64_t count, feed::LossReason) noexcept override {
    stats_.lost += count;
    sink_.on_lost(first, count);
  }

 private:
  ItchSink& sink_;
  SourceStats& stats_;
};

void read_day_file(const std::string& path, ItchSink& sink, SourceStats& stats) {
  DayFileReader reader(path);
  while (reader.read([&](const DayRecord& r) { sink.on_record(r.seq, r.msg, r.len); }) > 0) {
  }
  stats.records = reader.records();
  stats.ended_by_zero_length = reader.ended_by_zero_length();
  stats.error = reader.error();
}

void read_capture(const std::string& path, const SourceOptions& options, ItchSink& sink,
                  SourceStats& stats) {
  feed::PcapReader pcap(path, options.filter);
  feed::SequencerConfig cfg;
  cfg.window = options.reorder_window;
  cfg.max_message_bytes = static_cast<std::uint16_t>(kMaxMessageBytes);
  cfg.policy = feed::GapPolicy::Skip;  // a file cannot answer re-requests
  cfg.gap_timeout_ns = 0;              // capture time is not our clock: judge holes by packets
  cfg.gap_packet_threshold = options.gap_packets;
  cfg.join_at_first_seen = options.join_at_first_seen;
  if (!options.session.empty()) {
    cfg.session = feed::Session::from(options.session);
    cfg.pin_session = true;
  }
  BlockForwarder forwarder(sink, stats);
  feed::Sequencer sequencer(cfg, forwarder);
  feed::CapturedDatagram d;
  std::int64_t last_ns = 0;
  while (pcap.next(d)) {
    feed::PacketView packet;
    // Blocks longer than the longest ITCH message are not ITCH: the packet is refused whole.
    if (feed::parse_packet(d.datagram.data, d.datagram.len, packet, kMaxMessageBytes) !=
        feed::ParseStatus::Ok) {
      ++stats.bad_packets;
      continue;
    }
    last_ns = d.capture_ns;
    sequencer.on_packet(packet, feed::RxMeta{d.capture_ns, 0}, d.capture_ns);
  }
  sequencer.flush(last_ns, feed::LossReason::Unrecoverable);
  stats.pcap = pcap.stats();
  stats.sequencer = sequencer.stats();
  stats.error = pcap.error();
}

}  // namespace

const char* to_string(SourceKind kind) noexcept {
  switch (kind) {
    case SourceKind::DayFile: return "day file";
    case SourceKind::GzipDayFile: return "gzip day file";
    case SourceKind::Capture: return "capture";
  }
  return "?";
}

SourceKind detect_source(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) throw Error("cannot open market-data source '" + path + "'");
  std::uint8_t head[4] = {0, 0, 0, 0};
  std::size_t n = std::fread(head, 1, sizeof head, f);
  std::fclose(f);
  if (n == 0) throw Error("market-data source '" + path + "' is empty");
  if (feed::looks_like_capture(head, n)) return SourceKind::Capture;
  if (n >= 2 && head[0] == 0x1F && head[1] == 0x8B) return SourceKind::GzipDayFile;
  return SourceKind::DayFile;  // DayFileReader checks that the first record is ITCH
}

SourceKind check_source(const std::string& path) {
  const SourceKind kind = detect_source(path);
  if (kind == SourceKind::Capture) {
    feed::PcapReader probe(path, {});
  } else {
    DayFileReader probe(path);
  }
  return kind;
}

SourceStats read_itch_source(const std::string& path, const SourceOptions& options, ItchSink& sink) {
  SourceStats stats;
  stats.kind = detect_source(path);
  if (stats.kind == SourceKind::Capture) {
    read_capture(path, options, sink, stats);
  } else {
    read_day_file(path, sink, stats);
  }
  sink.on_end();
  return stats;
}

std::vector<std::uint8_t> load_day_records(const std::string& path, std::uint64_t max_records) {
  std::vector<std::uint8_t> out;
  if (check_source(path) == SourceKind::Capture) {  // sequenced: every message once, in order
    struct Framer final : ItchSink {
      std::vector<std::uint8_t>& out;
      std::uint64_t max, n = 0;
      Framer(std::vector<std::uint8_t>& o, std::uint64_t m) : out(o), max(m) {}
      void on_record(std::uint64_t, const std::uint8_t* msg, std::uint16_t len) noexcept override {
        if (n++ >= max) return;
        out.push_back(static_cast<std::uint8_t>(len >> 8));
        out.push_back(static_cast<std::uint8_t>(len));
        out.insert(out.end(), msg, msg + len);
      }
    } framer(out, max_records);
    const SourceStats st = read_itch_source(path, SourceOptions{}, framer);
    if (!st.error.empty()) throw Error(st.error);
    if (st.lost > 0)
      throw Error("capture '" + path + "': " + std::to_string(st.lost) +
                  " messages are missing from it; a replay would publish a day with holes");
    return out;
  }
  DayFileReader reader(path);
  std::uint64_t n = 0;
  while (n < max_records && reader.read([&](const DayRecord& r) {
           out.push_back(static_cast<std::uint8_t>(r.len >> 8));
           out.push_back(static_cast<std::uint8_t>(r.len));
           out.insert(out.end(), r.msg, r.msg + r.len);
           ++n;
         }, max_records - n) > 0) {
  }
  if (!reader.error().empty()) throw Error(reader.error());
  return out;
}

}  // namespace tickinfer::itch
