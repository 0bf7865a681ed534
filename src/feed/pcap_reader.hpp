#pragma once
// pcap and pcapng captures (what a desk's capture appliance or tcpdump writes), read through
// libpcap, which knows both formats, both byte orders, µs and ns time stamps and pcapng's
// multiple interfaces. Each frame goes through udp_datagram() (pcap_frames.hpp); the reader
// hands out the UDP payloads that pass the filter, in file order, with their capture time.
// Every frame is accounted for in PcapStats, so nothing is dropped without a count.
#include <cstdint>
#include <cstdio>
#include <string>

#include "feed/pcap_frames.hpp"

typedef struct pcap pcap_t;

namespace tickinfer::feed {

struct PcapStats {
  std::uint64_t frames = 0;          // records read from the file
  std::uint64_t datagrams = 0;       // UDP datagrams that passed the filter (handed out)
  std::uint64_t filtered_out = 0;    // valid UDP datagrams for another address, port or source
  std::uint64_t not_ipv4 = 0;        // frames of another network protocol (ARP, IPv6, ...)
  std::uint64_t not_udp = 0;         // IPv4 frames of another transport (IGMP, TCP, ...)
  std::uint64_t fragments = 0;       // IPv4 fragments, skipped (MoldUDP64 senders never fragment)
  std::uint64_t truncated = 0;       // frames cut short by the capture's snaplen
  std::uint64_t malformed = 0;       // impossible IPv4/UDP header values
  std::uint64_t bad_timestamps = 0;  // datagrams handed out whose time stamp does not fit int64 ns
                                     // (before 1970 or after 2262); they carry the last good time
};

struct CapturedDatagram {
  Datagram datagram;          // points into the reader's current frame
  std::int64_t capture_ns = 0;  // capture time stamp, ns since the Unix epoch (not exchange time)
};

// True if the first bytes are a classic pcap (either byte order, µs or ns) or a pcapng file.
bool looks_like_capture(const std::uint8_t* head, std::size_t n) noexcept;

class PcapReader {
 public:
  // Throws tickinfer::Error naming the path for a missing file, a file libpcap cannot read as a
  // capture, or a link type this module does not decode.
  PcapReader(const std::string& path, const UdpFilter& filter);
  // Reads from an open FILE (which the reader then owns and closes): fmemopen for the fuzzer.
  PcapReader(std::FILE* file, const UdpFilter& filter, const std::string& name);
  ~PcapReader();
  PcapReader(const PcapReader&) = delete;
  PcapReader& operator=(const PcapReader&) = delete;

  // The next datagram that passes the filter; false at the end of the file. Valid until the next
  // call. A read error ends the stream with error() set; everything before it was delivered.
  bool next(CapturedDatagram& out);

  const PcapStats& stats() const noexcept { return stats_; }
  int link_type() const noexcept { return link_type_; }
  const std::string& error() const noexcept { return error_; }

 private:
  void open_checked(pcap_t* handle, const std::string& name, const char* errbuf);
  std::int64_t capture_ns(std::int64_t sec, std::int64_t frac_ns) noexcept;

  pcap_t* handle_ = nullptr;
  UdpFilter filter_;
  int link_type_ = 0;
  PcapStats stats_;
  std::int64_t last_capture_ns_ = 0;
  std::string error_;
};

}  // namespace tickinfer::feed
