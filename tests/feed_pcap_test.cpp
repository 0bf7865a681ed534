// Captures: frames built byte by byte (Ethernet with stacked VLAN tags, Linux cooked SLL/SLL2,
// raw IPv4, BSD loopback) through udp_datagram(), every verdict and the filter; then whole pcap
// files written with libpcap's own dumper (µs and ns) read back through PcapReader, with every
// frame accounted for in PcapStats.
#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "feed/pcap_reader.hpp"
#include "tickinfer/error.hpp"
#include "support/source_paths.hpp"

namespace tickinfer::feed {
namespace {

using Bytes = std::vector<std::uint8_t>;

void put16(Bytes& b, std::uint16_t v) { b.push_back(v >> 8); b.push_back(v & 0xFF); }
void put32(Bytes& b, std::uint32_t v) { put16(b, v >> 16); put16(b, v & 0xFFFF); }

// IPv4 + UDP carrying payload, from src to dst.
Bytes ip_udp(std::uint32_t src, std::uint32_t dst, std::uint16_t sport, std::uint16_t dport,
             const Bytes& payload, std::uint8_t proto = 17, std::uint16_t frag = 0) {
  Bytes b;
  b.push_back(0x45);
  b.push_back(0);
  put16(b, static_cast<std::uint16_t>(20 + 8 + payload.size()));
  put16(b, 0x1234);  // identification
  put16(b, frag);
  b.push_back(64);
  b.push_back(proto);
  put16(b, 0);  // checksum: not checked by readers of captures
  put32(b, src);
  put32(b, dst);
  put16(b, sport);
  put16(b, dport);
  put16(b, static_cast<std::uint16_t>(8 + payload.size()));
  put16(b, 0);
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

Bytes ethernet(const Bytes& ip, std::vector<std::uint16_t> tags = {}, std::uint16_t type = 0x0800) {
  Bytes b = {0x01, 0x00, 0x5e, 0x36, 0x0c, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
  for (std::uint16_t tpid : tags) {
    put16(b, tpid);
    put16(b, 0x0064);  // TCI: VLAN 100
  }
  put16(b, type);
  b.insert(b.end(), ip.begin(), ip.end());
  while (b.size() < 60) b.push_back(0);  // Ethernet minimum frame: padding after the datagram
  return b;
}

const Bytes kPayload = {'M', 'O', 'L', 'D', 1, 2, 3};
constexpr std::uint32_t kSrc = 0x0A000001, kGroup = 0xE9360C01;  // 10.0.0.1 -> 233.54.12.1

TEST(PcapFrames, EthernetWithStackedVlanTagsAndPadding) {
  for (auto tags : std::vector<std::vector<std::uint16_t>>{{}, {0x8100}, {0x88A8, 0x8100}, {0x9100}}) {
    Bytes f = ethernet(ip_udp(kSrc, kGroup, 5000, 26400, kPayload), tags);
    Datagram d;
    ASSERT_EQ(udp_datagram(kLinkEthernet, f.data(), f.size(), {}, d), FrameVerdict::Datagram);
    ASSERT_EQ(d.len, kPayload.size());  // bounded by the UDP length, not the padded frame
    EXPECT_EQ(Bytes(d.data, d.data + d.len), kPayload);
    EXPECT_EQ(d.src_addr, kSrc);
    EXPECT_EQ(d.dst_addr, kGroup);
    EXPECT_EQ(d.src_port, 5000);
    EXPECT_EQ(d.dst_port, 26400);
  }
}

TEST(PcapFrames, OtherLinkTypes) {
  const Bytes ip = ip_udp(kSrc, kGroup, 1, 2, kPayload);
  Bytes sll(16, 0);
  sll[14] = 0x08;
  sll.insert(sll.end(), ip.begin(), ip.end());
  Bytes sll2 = {0x08, 0x00};
  sll2.resize(20, 0);
  sll2.insert(sll2.end(), ip.begin(), ip.end());
  Bytes null_le = {2, 0, 0, 0};
  null_le.insert(null_le.end(), ip.begin(), ip.end());
  Bytes null_be = {0, 0, 0, 2};
  null_be.insert(null_be.end(), ip.begin(), ip.end());
  Datagram d;
  EXPECT_EQ(udp_datagram(kLinkLinuxSll, sll.data(), sll.size(), {}, d), FrameVerdict::Datagram);
  EXPECT_EQ(udp_datagram(kLinkLinuxSll2, sll2.data(), sll2.size(), {}, d), FrameVerdict::Datagram);
  EXPECT_EQ(udp_datagram(kLinkRaw, ip.data(), ip.size(), {}, d), FrameVerdict::Datagram);
  EXPECT_EQ(udp_datagram(kLinkIpv4, ip.data(), ip.size(), {}, d), FrameVerdict::Datagram);
  EXPECT_EQ(udp_datagram(kLinkNull, null_le.data(), null_le.size(), {}, d), FrameVerdict::Datagram);
  EXPECT_EQ(udp_datagram(kLinkNull, null_be.data(), null_be.size(), {}, d), FrameVerdict::Datagram);
  EXPECT_EQ(Bytes(d.data, d.data + d.len), kPayload);
  EXPECT_FALSE(link_type_supported(105));  // 802.11
}

TEST(PcapFrames, EveryVerdict) {
  Datagram d;
  Bytes arp = ethernet(Bytes(28, 0), {}, 0x0806);
  EXPECT_EQ(udp_datagram(kLinkEthernet, arp.data(), arp.size(), {}, d), FrameVerdict::NotIpv4);
  Bytes v6 = ethernet(Bytes(40, 0), {0x8100}, 0x86DD);
  EXPECT_EQ(udp_datagram(kLinkEthernet, v6.data(), v6.size(), {}, d), FrameVerdict::NotIpv4);
  Bytes igmp = ethernet(ip_udp(kSrc, kGroup, 1, 2, kPayload, 2));
  EXPECT_EQ(udp_datagram(kLinkEthernet, igmp.data(), igmp.size(), {}, d), FrameVerdict::NotUdp);
  Bytes more = ethernet(ip_udp(kSrc, kGroup, 1, 2, kPayload, 17, 0x2000));
  EXPECT_EQ(udp_datagram(kLinkEthernet, more.data(), more.size(), {}, d), FrameVerdict::Fragment);
  Bytes later = ethernet(ip_udp(kSrc, kGroup, 1, 2, kPayload, 17, 0x0010));
  EXPECT_EQ(udp_datagram(kLinkEthernet, later.data(), later.size(), {}, d), FrameVerdict::Fragment);
  Bytes df = ethernet(ip_udp(kSrc, kGroup, 1, 2, kPayload, 17, 0x4000));  // DF alone is fine
  EXPECT_EQ(udp_datagram(kLinkEthernet, df.data(), df.size(), {}, d), FrameVerdict::Datagram);
  Bytes ok = ethernet(ip_udp(kSrc, kGroup, 1, 2, Bytes(100, 7)));
  EXPECT_EQ(udp_datagram(kLinkEthernet, ok.data(), ok.size() - 1, {}, d), FrameVerdict::Truncated);
  EXPECT_EQ(udp_datagram(kLinkEthernet, ok.data(), 13, {}, d), FrameVerdict::Truncated);
  Bytes bad_ihl = ok;
  bad_ihl[14] = 0x44;
  EXPECT_EQ(udp_datagram(kLinkEthernet, bad_ihl.data(), bad_ihl.size(), {}, d), FrameVerdict::Malformed);
  Bytes bad_udp = ok;
  bad_udp[14 + 20 + 4] = 0;
  bad_udp[14 + 20 + 5] = 7;  // UDP length 7 < 8
  EXPECT_EQ(udp_datagram(kLinkEthernet, bad_udp.data(), bad_udp.size(), {}, d), FrameVerdict::Malformed);
  Bytes long_udp = ok;
  long_udp[14 + 20 + 4] = 0x10;  // UDP length beyond the IPv4 total length
  EXPECT_EQ(udp_datagram(kLinkEthernet, long_udp.data(), long_udp.size(), {}, d), FrameVerdict::Malformed);
}

TEST(PcapFrames, FilterOnGroupPortAndSource) {
  Bytes f = ethernet(ip_udp(kSrc, kGroup, 5000, 26400, kPayload));
  Datagram d;
  EXPECT_EQ(udp_datagram(kLinkEthernet, f.data(), f.size(), UdpFilter{kGroup, 26400, kSrc}, d), FrameVerdict::Datagram);
  EXPECT_EQ(udp_datagram(kLinkEthernet, f.data(), f.size(), UdpFilter{kGroup + 1, 0, 0}, d), FrameVerdict::Filtered);
  EXPECT_EQ(udp_datagram(kLinkEthernet, f.data(), f.size(), UdpFilter{0, 26401, 0}, d), FrameVerdict::Filtered);
  EXPECT_EQ(udp_datagram(kLinkEthernet, f.data(), f.size(), UdpFilter{0, 0, kSrc + 1}, d), FrameVerdict::Filtered);
}

std::string temp_path(const char* name) {
  return ::testing::TempDir() + "tickinfer_pcap_" + std::to_string(getpid()) + "_" + name;
}

// Writes frames with libpcap's dumper: an independent writer of the format we read.
void write_pcap(const std::string& path, const std::vector<Bytes>& frames, bool nano) {
  pcap_t* dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535,
                                                      nano ? PCAP_TSTAMP_PRECISION_NANO : PCAP_TSTAMP_PRECISION_MICRO);
  pcap_dumper_t* dump = pcap_dump_open(dead, path.c_str());
  ASSERT_NE(dump, nullptr);
  for (std::size_t i = 0; i < frames.size(); ++i) {
    pcap_pkthdr h{};
    h.ts.tv_sec = 1577716200 + static_cast<long>(i);
    h.ts.tv_usec = nano ? 123456789 : 123456;
    h.caplen = h.len = static_cast<bpf_u_int32>(frames[i].size());
    pcap_dump(reinterpret_cast<u_char*>(dump), &h, frames[i].data());
  }
  pcap_dump_close(dump);
  pcap_close(dead);
}

TEST(PcapReader, ReadsLibpcapFilesAndAccountsForEveryFrame) {
  std::vector<Bytes> frames = {
      ethernet(ip_udp(kSrc, kGroup, 5000, 26400, {1})),
      ethernet(Bytes(28, 0), {}, 0x0806),                               // ARP
      ethernet(ip_udp(kSrc, kGroup, 5000, 26401, {2})),                 // another port
      ethernet(ip_udp(kSrc, kGroup, 5000, 26400, {3}, 17, 0x2000)),     // fragment
      ethernet(ip_udp(kSrc, kGroup, 5000, 26400, {4}), {0x8100}),       // tagged
      ethernet(ip_udp(kSrc, kGroup, 5000, 26400, {5}, 6)),              // TCP
  };
  for (bool nano : {false, true}) {
    const std::string path = temp_path(nano ? "ns.pcap" : "us.pcap");
    write_pcap(path, frames, nano);
    std::uint8_t head[4];
    std::FILE* f = std::fopen(path.c_str(), "rb");
    ASSERT_EQ(std::fread(head, 1, 4, f), 4u);
    std::fclose(f);
    EXPECT_TRUE(looks_like_capture(head, 4));
    PcapReader r(path, UdpFilter{kGroup, 26400, 0});
    CapturedDatagram d;
    std::vector<std::uint8_t> got;
    std::vector<std::int64_t> stamps;
    while (r.next(d)) {
      got.push_back(d.datagram.data[0]);
      stamps.push_back(d.capture_ns);
    }
    EXPECT_EQ(got, (std::vector<std::uint8_t>{1, 4}));
    EXPECT_EQ(stamps[0], 1577716200LL * 1'000'000'000 + (nano ? 123456789 : 123456000));
    EXPECT_EQ(r.stats().frames, 6u);
    EXPECT_EQ(r.stats().datagrams, 2u);
    EXPECT_EQ(r.stats().not_ipv4, 1u);
    EXPECT_EQ(r.stats().filtered_out, 1u);
    EXPECT_EQ(r.stats().fragments, 1u);
    EXPECT_EQ(r.stats().not_udp, 1u);
    EXPECT_EQ(r.stats().truncated + r.stats().malformed, 0u);
    EXPECT_TRUE(r.error().empty());
    std::remove(path.c_str());
  }
}

TEST(PcapReader, RefusesWhatIsNotACapture) {
  const std::string path = temp_path("text.pcap");
  std::FILE* f = std::fopen(path.c_str(), "wb");
  std::fputs("this is not a capture\n", f);
  std::fclose(f);
  try {
    PcapReader r(path, {});
    FAIL() << "a text file was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_THROW(PcapReader(temp_path("missing.pcap"), {}), Error);
  const std::uint8_t text[4] = {'t', 'h', 'i', 's'};
  EXPECT_FALSE(looks_like_capture(text, 4));
  std::remove(path.c_str());
}

TEST(PcapReader, TruncatedFileDeliversWhatCameBeforeAndSaysSo) {
  const std::string path = temp_path("cut.pcap");
  write_pcap(path, {ethernet(ip_udp(kSrc, kGroup, 1, 2, {9})), ethernet(ip_udp(kSrc, kGroup, 1, 2, {8}))}, false);
  std::FILE* f = std::fopen(path.c_str(), "rb+");
  std::fseek(f, 0, SEEK_END);
  const long size = std::ftell(f);
  std::fclose(f);
  ASSERT_EQ(truncate(path.c_str(), size - 10), 0);
  PcapReader r(path, {});
  CapturedDatagram d;
  int n = 0;
  while (r.next(d)) ++n;
  EXPECT_EQ(n, 1);
  EXPECT_FALSE(r.error().empty());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tickinfer::feed

namespace tickinfer::feed {
namespace {

// Found by feed_pcap_fuzz: a pcapng time stamp past 2262 overflowed int64 ns. Such a datagram is
// still handed out, with the last good time, and counted.
TEST(PcapReader, TimeStampsBeyondInt64NanosecondsAreCountedNotOverflowed) {
  PcapReader r(std::string(::tickinfer::test::source_dir()) + "/tests/fixtures/pcap/timestamp_beyond_2262.pcapng", {});
  CapturedDatagram d;
  std::uint64_t n = 0;
  while (r.next(d)) {
    EXPECT_GE(d.capture_ns, 0);
    ++n;
  }
  EXPECT_EQ(n, r.stats().datagrams);
  EXPECT_GT(r.stats().bad_timestamps, 0u);
  EXPECT_LE(r.stats().bad_timestamps, r.stats().datagrams);
}

}  // namespace
}  // namespace tickinfer::feed
