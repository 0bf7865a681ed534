#pragma once
// Where ITCH messages come from, as one stream in sequence order whatever the file: a Nasdaq day
// file (raw or gzip; DayFileReader) or a pcap/pcapng capture of MoldUDP64 packets (PcapReader,
// then the same Sequencer the live feed uses, so duplicated, reordered and A/B copies of a
// datagram come out once, in order, and holes are reported lost). The kind is decided by the
// file's first bytes, never by its name: Nasdaq's own "pcap" day files are BinaryFILE.
//
// The sequence number of a record is its MoldUDP64 sequence in a capture and its 1-based position
// in a day file, which are the same numbers for the same day (docs/itch.md).
#include <cstdint>
#include <string>
#include <vector>

#include "feed/pcap_reader.hpp"
#include "tickinfer/feed_stats.hpp"

namespace tickinfer::itch {

enum class SourceKind : std::uint8_t { DayFile, GzipDayFile, Capture };
const char* to_string(SourceKind kind) noexcept;

// Reads the first bytes of path. Throws tickinfer::Error for a missing or empty file.
SourceKind detect_source(const std::string& path);
// detect_source, then opens the file as what it claims to be (a day file's first record must be
// ITCH; a capture must be readable by libpcap with a known link type): a caller can refuse a bad
// source before it creates any output. Throws tickinfer::Error saying what is wrong.
SourceKind check_source(const std::string& path);

struct SourceOptions {
  feed::UdpFilter filter;       // captures: which datagrams carry the feed (0 = any)
  std::string session;          // captures: pin this MoldUDP64 session ("" = the first confirmed)
  bool join_at_first_seen = false;  // captures that start mid-day: start at the first sequence seen
  std::uint32_t reorder_window = 1 << 14;  // captures: messages held while a hole is open
  std::uint32_t gap_packets = 256;  // captures: a hole still open after this many packets is lost
};

class ItchSink {
 public:
  virtual ~ItchSink() = default;
  // One ITCH message (one MoldUDP64 block or one day-file record), in sequence order, once.
  virtual void on_record(std::uint64_t seq, const std::uint8_t* msg, std::uint16_t len) noexcept = 0;
  // [first, first + count) will never come (a capture's hole that never filled).
  virtual void on_lost(std::uint64_t first, std::uint64_t count) noexcept {}
  // The source has nothing more (read_itch_source calls it last, also after an error): a sink
  // that holds messages back hands them on.
  virtual void on_end() noexcept {}
};

struct SourceStats {
  SourceKind kind = SourceKind::DayFile;
  std::uint64_t records = 0;           // messages handed to on_record
  std::uint64_t lost = 0;              // messages reported to on_lost
  bool ended_by_zero_length = false;   // day files: a zero-length record ended the session
  feed::PcapStats pcap;                // captures: frames and what became of them
  feed::SequencerStats sequencer;      // captures: duplicates, reordering, holes
  std::uint64_t bad_packets = 0;       // captures: datagrams that are not valid MoldUDP64
  std::string error;                   // a truncated tail or corrupt data; "" if the file was whole
};

// Reads the whole source into sink. Throws tickinfer::Error if the file is not a day file or a
// capture; a file that breaks off part-way returns what came before with SourceStats::error set.
SourceStats read_itch_source(const std::string& path, const SourceOptions& options, ItchSink& sink);

// The first max_records records of a day file (raw or gzip) or of a capture (sequenced: each
// message once, in order) into memory, framed as in a day file (2-byte big-endian length, then
// the message): what the synthetic exchange replays (`tickinfer feed serve --itch`, `tickinfer
// run --source`). Throws tickinfer::Error for a file that is neither, that breaks off, or a
// capture with holes.
std::vector<std::uint8_t> load_day_records(const std::string& path, std::uint64_t max_records);

}  // namespace tickinfer::itch
