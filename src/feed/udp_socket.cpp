#include "feed/udp_socket.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tickinfer/error.hpp"

namespace tickinfer::feed {

namespace {
[[noreturn]] void fail(const std::string& what) {
  throw Error(what + ": " + std::strerror(errno));
}
}  // namespace

sockaddr_in make_address(const std::string& host, std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  const std::string h = host == "localhost" ? "127.0.0.1" : host;
  if (inet_pton(AF_INET, h.c_str(), &a.sin_addr) != 1) {
    throw Error("address '" + host + "': not a dotted IPv4 address");
  }
  return a;
}

std::string to_string(const sockaddr_in& addr) {
  char buf[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &addr.sin_addr, buf, sizeof buf);
  return std::string(buf) + ":" + std::to_string(ntohs(addr.sin_port));
}

UdpSocket::UdpSocket(UdpSocket&& o) noexcept
    : fd_(o.fd_), port_(o.port_), rcvbuf_(o.rcvbuf_), warning_(std::move(o.warning_)) {
  o.fd_ = -1;
}

UdpSocket& UdpSocket::operator=(UdpSocket&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    port_ = o.port_;
    rcvbuf_ = o.rcvbuf_;
    warning_ = std::move(o.warning_);
    o.fd_ = -1;
  }
  return *this;
}

UdpSocket::~UdpSocket() {
  if (fd_ >= 0) ::close(fd_);
}

UdpSocket UdpSocket::receiver(const ReceiverConfig& c) {
  const std::string where = "udp receiver " + (c.group.empty() ? c.bind_address : c.group) + ":" +
                            std::to_string(c.port);
  if (!c.group.empty() && !IN_MULTICAST(ntohl(make_address(c.group, 0).sin_addr.s_addr))) {
    throw Error(where + ": " + c.group + " is not a multicast group (224.0.0.0/4)");
  }
  UdpSocket s;
  s.fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s.fd_ < 0) fail(where + ": socket");
  const int one = 1;
  if (!c.group.empty()) {  // several listeners of one group on a host need the port shared
    if (::setsockopt(s.fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) fail(where + ": SO_REUSEADDR");
  }
  // Receive buffer: SO_RCVBUFFORCE ignores net.core.rmem_max but needs CAP_NET_ADMIN; fall back.
  if (c.rcvbuf_bytes > 0) {
    if (::setsockopt(s.fd_, SOL_SOCKET, SO_RCVBUFFORCE, &c.rcvbuf_bytes, sizeof c.rcvbuf_bytes) != 0) {
      ::setsockopt(s.fd_, SOL_SOCKET, SO_RCVBUF, &c.rcvbuf_bytes, sizeof c.rcvbuf_bytes);
    }
  }
  socklen_t optlen = sizeof s.rcvbuf_;
  ::getsockopt(s.fd_, SOL_SOCKET, SO_RCVBUF, &s.rcvbuf_, &optlen);
  if (c.rcvbuf_bytes > 0 && s.rcvbuf_ < c.rcvbuf_bytes) {
    s.warning_ = where + ": receive buffer capped at " + std::to_string(s.rcvbuf_ / 2) +
                 " bytes (asked " + std::to_string(c.rcvbuf_bytes) +
                 "); raise net.core.rmem_max or run with CAP_NET_ADMIN, or bursts will be dropped";
  }
  if (c.kernel_timestamps &&
      ::setsockopt(s.fd_, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) != 0) {
    fail(where + ": SO_TIMESTAMPNS");
  }
  if (::setsockopt(s.fd_, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof one) != 0) fail(where + ": SO_RXQ_OVFL");
  sockaddr_in local = make_address(c.group.empty() ? c.bind_address : "0.0.0.0", c.port);
  if (!c.group.empty()) local.sin_addr = make_address(c.group, 0).sin_addr;  // only the group's traffic
  if (::bind(s.fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) fail(where + ": bind");
  if (!c.group.empty()) {
    ip_mreq m{};
    m.imr_multiaddr = make_address(c.group, 0).sin_addr;
    m.imr_interface = make_address(c.interface, 0).sin_addr;
    if (::setsockopt(s.fd_, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof m) != 0) fail(where + ": IP_ADD_MEMBERSHIP");
  }
  sockaddr_in bound{};
  socklen_t blen = sizeof bound;
  ::getsockname(s.fd_, reinterpret_cast<sockaddr*>(&bound), &blen);
  s.port_ = ntohs(bound.sin_port);
  return s;
}

UdpSocket UdpSocket::sender(const std::string& multicast_interface) {
  UdpSocket s;
  s.fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s.fd_ < 0) fail("udp sender: socket");
  const unsigned char ttl = 1, loop = 1;
  ::setsockopt(s.fd_, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof ttl);
  ::setsockopt(s.fd_, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof loop);
  if (!multicast_interface.empty()) {
    in_addr itf = make_address(multicast_interface, 0).sin_addr;
    if (::setsockopt(s.fd_, IPPROTO_IP, IP_MULTICAST_IF, &itf, sizeof itf) != 0) {
      fail("udp sender: IP_MULTICAST_IF " + multicast_interface);
    }
  }
  const int sndbuf = 4 << 20;
  if (::setsockopt(s.fd_, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof sndbuf) != 0) {
    ::setsockopt(s.fd_, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
  }
  sockaddr_in any = make_address("0.0.0.0", 0);
  if (::bind(s.fd_, reinterpret_cast<sockaddr*>(&any), sizeof any) != 0) fail("udp sender: bind");
  sockaddr_in bound{};
  socklen_t blen = sizeof bound;
  ::getsockname(s.fd_, reinterpret_cast<sockaddr*>(&bound), &blen);
  s.port_ = ntohs(bound.sin_port);
  return s;
}

bool UdpSocket::send_to(const std::uint8_t* data, std::size_t len, const sockaddr_in& to) const noexcept {
  const ssize_t n = ::sendto(fd_, data, len, 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
  return n == static_cast<ssize_t>(len);
}

}  // namespace tickinfer::feed
