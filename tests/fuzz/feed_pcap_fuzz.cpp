// libFuzzer: arbitrary bytes as a whole capture file (through libpcap, via fmemopen, so both the
// pcap and the pcapng readers and our frame walker see hostile input), and the same bytes as one
// frame of each link type. Invariant: a datagram handed out lies inside the frame it came from.
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "feed/pcap_reader.hpp"
#include "tickinfer/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tickinfer::feed;
  for (int link : {kLinkEthernet, kLinkLinuxSll, kLinkLinuxSll2, kLinkRaw, kLinkNull}) {
    Datagram d;
    if (udp_datagram(link, data, size, {}, d) == FrameVerdict::Datagram) {
      if (d.data < data || d.data + d.len > data + size) __builtin_trap();
    }
  }
  if (size == 0) return 0;
  std::FILE* f = fmemopen(const_cast<std::uint8_t*>(data), size, "rb");
  if (f == nullptr) return 0;
  try {
    PcapReader reader(f, {}, "fuzz input");
    CapturedDatagram d;
    std::uint64_t n = 0;
    while (reader.next(d) && n < 100000) {
      volatile std::uint8_t x = 0;
      for (std::size_t i = 0; i < d.datagram.len; ++i) x = x ^ d.datagram.data[i];
      ++n;
    }
    const PcapStats& s = reader.stats();
    if (s.datagrams + s.filtered_out + s.not_ipv4 + s.not_udp + s.fragments + s.truncated + s.malformed !=
        s.frames) {
      __builtin_trap();  // every frame is accounted for exactly once
    }
  } catch (const tickinfer::Error&) {
  }
  return 0;
}
