#pragma once
// From one captured link-layer frame to the UDP datagram inside it: Ethernet (with any number of
// stacked 802.1Q / 802.1ad / QinQ tags), Linux cooked captures (SLL, SLL2), raw IPv4 and BSD
// loopback; then IPv4 and UDP. Lengths are bounded by the IPv4 total length and the UDP length,
// never by the frame (Ethernet pads short frames and some captures keep the FCS). A pure function
// of the bytes, so the fuzzer drives it directly and the pcap reader only adds file handling.
#include <cstddef>
#include <cstdint>

namespace tickinfer::feed {

// Link types (LINKTYPE_* values of the pcap and pcapng formats) this module reads.
inline constexpr int kLinkNull = 0;
inline constexpr int kLinkEthernet = 1;
inline constexpr int kLinkRaw = 101;
inline constexpr int kLinkLinuxSll = 113;
inline constexpr int kLinkIpv4 = 228;
inline constexpr int kLinkLinuxSll2 = 276;
bool link_type_supported(int link_type) noexcept;

// Which datagrams to keep: 0 means "any".
struct UdpFilter {
  std::uint32_t dst_addr = 0;  // IPv4 destination, host order (e.g. the feed's multicast group)
  std::uint16_t dst_port = 0;
  std::uint32_t src_addr = 0;  // IPv4 source, host order (to keep one line of an A/B pair)
};

struct Datagram {
  const std::uint8_t* data = nullptr;  // the UDP payload, inside the frame
  std::size_t len = 0;
  std::uint32_t src_addr = 0, dst_addr = 0;  // host order
  std::uint16_t src_port = 0, dst_port = 0;
};

enum class FrameVerdict : std::uint8_t {
  Datagram,   // a UDP datagram that passed the filter
  Truncated,  // captured fewer bytes than the headers or the IPv4/UDP lengths need
  NotIpv4,    // ARP, IPv6, LLDP, ...: another network protocol
  NotUdp,     // IPv4 but not UDP (IGMP, TCP, ...)
  Fragment,   // an IPv4 fragment (MF set or offset non-zero): counted and skipped, not reassembled
  Malformed,  // impossible header values (IHL < 5, total length below the header, UDP length < 8)
  Filtered,   // a valid datagram for another address or port
};
const char* to_string(FrameVerdict v) noexcept;

// Reads only [frame, frame + caplen). Never throws.
FrameVerdict udp_datagram(int link_type, const std::uint8_t* frame, std::size_t caplen,
                          const UdpFilter& filter, Datagram& out) noexcept;

}  // namespace tickinfer::feed
