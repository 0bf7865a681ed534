#include "feed/pcap_reader.hpp"

#include <pcap/pcap.h>

#include <cstring>

#include "tickinfer/error.hpp"

namespace tickinfer::feed {

bool looks_like_capture(const std::uint8_t* head, std::size_t n) noexcept {
  if (n < 4) return false;
  std::uint32_t be = (std::uint32_t{head[0]} << 24) | (std::uint32_t{head[1]} << 16) |
                     (std::uint32_t{head[2]} << 8) | head[3];
  return be == 0xA1B2C3D4u || be == 0xD4C3B2A1u ||  // pcap, µs, either byte order
         be == 0xA1B23C4Du || be == 0x4D3CB2A1u ||  // pcap, ns
         be == 0x0A0D0D0Au;                         // pcapng section header block
}

PcapReader::PcapReader(const std::string& path, const UdpFilter& filter) : filter_(filter) {
  char errbuf[PCAP_ERRBUF_SIZE] = {0};
  // Nanosecond precision: libpcap scales µs captures up, so capture_ns means one thing.
  pcap_t* h = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, errbuf);
  open_checked(h, path, errbuf);
}

PcapReader::PcapReader(std::FILE* file, const UdpFilter& filter, const std::string& name)
    : filter_(filter) {
  char errbuf[PCAP_ERRBUF_SIZE] = {0};
  pcap_t* h = pcap_fopen_offline_with_tstamp_precision(file, PCAP_TSTAMP_PRECISION_NANO, errbuf);
  if (h == nullptr) std::fclose(file);  // on success libpcap owns it and closes it in pcap_close
  open_checked(h, name, errbuf);
}

void PcapReader::open_checked(pcap_t* handle, const std::string& name, const char* errbuf) {
  if (handle == nullptr) {
    throw Error("cannot read '" + name + "' as a pcap or pcapng capture: " + errbuf);
  }
  handle_ = handle;
  link_type_ = pcap_datalink(handle_);
  if (!link_type_supported(link_type_)) {
    pcap_close(handle_);
    handle_ = nullptr;
    throw Error("capture '" + name + "' has link type " + std::to_string(link_type_) +
                "; readable link types: Ethernet (1), Linux cooked (113, 276), raw IPv4 (101, 228), "
                "BSD loopback (0)");
  }
}

// A pcapng time stamp is 64 bits of any resolution: one past 2262 does not fit in int64 ns. Such a
// frame keeps the last good time (captures are read for their order, not their clock) and is
// counted.
std::int64_t PcapReader::capture_ns(std::int64_t sec, std::int64_t frac_ns) noexcept {
  std::int64_t ns;
  if (sec < 0 || frac_ns < 0 || __builtin_mul_overflow(sec, std::int64_t{1'000'000'000}, &ns) ||
      __builtin_add_overflow(ns, frac_ns, &ns)) {
    ++stats_.bad_timestamps;
    return last_capture_ns_;
  }
  last_capture_ns_ = ns;
  return ns;
}

PcapReader::~PcapReader() {
  if (handle_ != nullptr) pcap_close(handle_);
}

bool PcapReader::next(CapturedDatagram& out) {
  if (handle_ == nullptr) return false;
  for (;;) {
    pcap_pkthdr* hdr = nullptr;
    const u_char* data = nullptr;
    int rc = pcap_next_ex(handle_, &hdr, &data);
    if (rc == PCAP_ERROR_BREAK) return false;  // end of file
    if (rc != 1) {
      error_ = pcap_geterr(handle_);
      return false;
    }
    ++stats_.frames;
    FrameVerdict v = udp_datagram(link_type_, data, hdr->caplen, filter_, out.datagram);
    switch (v) {
      case FrameVerdict::Datagram:
        ++stats_.datagrams;
        out.capture_ns = capture_ns(hdr->ts.tv_sec, hdr->ts.tv_usec);
        return true;
      case FrameVerdict::Filtered: ++stats_.filtered_out; break;
      case FrameVerdict::NotIpv4: ++stats_.not_ipv4; break;
      case FrameVerdict::NotUdp: ++stats_.not_udp; break;
      case FrameVerdict::Fragment: ++stats_.fragments; break;
      case FrameVerdict::Truncated: ++stats_.truncated; break;
      case FrameVerdict::Malformed: ++stats_.malformed; break;
    }
  }
}

}  // namespace tickinfer::feed
