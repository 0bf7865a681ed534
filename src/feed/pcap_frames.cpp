#include "feed/pcap_frames.hpp"

#include <cstring>

#include "feed/byte_order.hpp"

namespace tickinfer::feed {
namespace {

constexpr std::uint16_t kEtherIpv4 = 0x0800;
constexpr std::uint16_t kEther8021Q = 0x8100;
constexpr std::uint16_t kEther8021AD = 0x88A8;
constexpr std::uint16_t kEtherQinQ = 0x9100;
constexpr std::size_t kEthernetBytes = 14;
constexpr std::size_t kVlanTagBytes = 4;
constexpr std::size_t kSllBytes = 16;
constexpr std::size_t kSll2Bytes = 20;
constexpr std::size_t kUdpBytes = 8;
constexpr std::uint8_t kProtoUdp = 17;

bool is_vlan_tag(std::uint16_t ether_type) noexcept {
  return ether_type == kEther8021Q || ether_type == kEther8021AD || ether_type == kEtherQinQ;
}

// Finds where the IPv4 header starts, or returns a verdict other than Datagram.
FrameVerdict network_offset(int link_type, const std::uint8_t* f, std::size_t caplen,
                            std::size_t& offset) noexcept {
  switch (link_type) {
    case kLinkEthernet: {
      if (caplen < kEthernetBytes) return FrameVerdict::Truncated;
      std::size_t at = 12;  // after the two MAC addresses
      std::uint16_t type = load_be16(f + at);
      while (is_vlan_tag(type)) {  // tags stack (QinQ); each adds TCI + the next EtherType
        at += kVlanTagBytes;
        if (caplen < at + 2) return FrameVerdict::Truncated;
        type = load_be16(f + at);
      }
      if (type != kEtherIpv4) return FrameVerdict::NotIpv4;
      offset = at + 2;
      return FrameVerdict::Datagram;
    }
    case kLinkLinuxSll:
      if (caplen < kSllBytes) return FrameVerdict::Truncated;
      if (load_be16(f + 14) != kEtherIpv4) return FrameVerdict::NotIpv4;
      offset = kSllBytes;
      return FrameVerdict::Datagram;
    case kLinkLinuxSll2:
      if (caplen < kSll2Bytes) return FrameVerdict::Truncated;
      if (load_be16(f) != kEtherIpv4) return FrameVerdict::NotIpv4;
      offset = kSll2Bytes;
      return FrameVerdict::Datagram;
    case kLinkRaw:
    case kLinkIpv4:
      offset = 0;
      return FrameVerdict::Datagram;
    case kLinkNull: {
      // The address family is in the writing host's byte order: accept 2 (AF_INET) either way.
      if (caplen < 4) return FrameVerdict::Truncated;
      std::uint32_t family;
      std::memcpy(&family, f, 4);
      if (family != 2 && family != 0x02000000u) return FrameVerdict::NotIpv4;
      offset = 4;
      return FrameVerdict::Datagram;
    }
    default:
      return FrameVerdict::Malformed;
  }
}

}  // namespace

bool link_type_supported(int link_type) noexcept {
  switch (link_type) {
    case kLinkNull:
    case kLinkEthernet:
    case kLinkRaw:
    case kLinkLinuxSll:
    case kLinkIpv4:
    case kLinkLinuxSll2:
      return true;
    default:
      return false;
  }
}

const char* to_string(FrameVerdict v) noexcept {
  switch (v) {
    case FrameVerdict::Datagram: return "datagram";
    case FrameVerdict::Truncated: return "truncated";
    case FrameVerdict::NotIpv4: return "not IPv4";
    case FrameVerdict::NotUdp: return "not UDP";
    case FrameVerdict::Fragment: return "IPv4 fragment";
    case FrameVerdict::Malformed: return "malformed";
    case FrameVerdict::Filtered: return "filtered out";
  }
  return "?";
}

FrameVerdict udp_datagram(int link_type, const std::uint8_t* frame, std::size_t caplen,
                          const UdpFilter& filter, Datagram& out) noexcept {
  std::size_t ip = 0;
  FrameVerdict v = network_offset(link_type, frame, caplen, ip);
  if (v != FrameVerdict::Datagram) return v;
  if (caplen < ip + 20) return FrameVerdict::Truncated;
  const std::uint8_t* h = frame + ip;
  if ((h[0] >> 4) != 4) return FrameVerdict::NotIpv4;  // raw links can carry IPv6 too
  const std::size_t ihl = static_cast<std::size_t>(h[0] & 0x0F) * 4;
  const std::size_t total = load_be16(h + 2);
  if (ihl < 20 || total < ihl) return FrameVerdict::Malformed;
  if (caplen < ip + total) return FrameVerdict::Truncated;  // snaplen cut the datagram
  const std::uint16_t frag = load_be16(h + 6);
  if ((frag & 0x2000) != 0 || (frag & 0x1FFF) != 0) return FrameVerdict::Fragment;
  if (h[9] != kProtoUdp) return FrameVerdict::NotUdp;
  if (total < ihl + kUdpBytes) return FrameVerdict::Malformed;
  const std::uint8_t* u = h + ihl;
  const std::size_t udp_len = load_be16(u + 4);
  if (udp_len < kUdpBytes || udp_len > total - ihl) return FrameVerdict::Malformed;
  out.src_addr = load_be32(h + 12);
  out.dst_addr = load_be32(h + 16);
  out.src_port = load_be16(u);
  out.dst_port = load_be16(u + 2);
  if ((filter.dst_addr != 0 && filter.dst_addr != out.dst_addr) ||
      (filter.dst_port != 0 && filter.dst_port != out.dst_port) ||
      (filter.src_addr != 0 && filter.src_addr != out.src_addr)) {
    return FrameVerdict::Filtered;
  }
  out.data = u + kUdpBytes;
  out.len = udp_len - kUdpBytes;
  return FrameVerdict::Datagram;
}

}  // namespace tickinfer::feed
