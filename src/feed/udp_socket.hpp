#pragma once
// IPv4 UDP sockets for the feed: receivers (unicast or multicast, non-blocking, large receive
// buffer, kernel receive timestamps, kernel drop counter) and senders. Setup throws
// tickinfer::Error naming the address and the failing call; send/receive never throw.
#include <netinet/in.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace tickinfer::feed {

// host: dotted IPv4 or "localhost". Throws tickinfer::Error if it does not parse.
sockaddr_in make_address(const std::string& host, std::uint16_t port);
std::string to_string(const sockaddr_in& addr);

struct ReceiverConfig {
  std::string bind_address = "0.0.0.0";  // unicast: the local address; multicast: usually 0.0.0.0
  std::uint16_t port = 0;                // 0: the kernel picks one (see UdpSocket::local_port)
  std::string group;                     // multicast group to join; empty = unicast
  std::string interface = "0.0.0.0";     // local interface address for the multicast join
  int rcvbuf_bytes = 8 << 20;            // asked of the kernel (SO_RCVBUFFORCE, then SO_RCVBUF)
  bool kernel_timestamps = true;         // SO_TIMESTAMPNS
};

class UdpSocket {
 public:
  UdpSocket() = default;
  // Bound, non-blocking receiver with SO_RXQ_OVFL on (drop counter in every datagram's cmsg).
  static UdpSocket receiver(const ReceiverConfig& config);
  // Unbound (ephemeral port) non-blocking sender; multicast TTL 1 and loopback on, so a group
  // can be received on the same host.
  static UdpSocket sender(const std::string& multicast_interface = "");
  UdpSocket(UdpSocket&& o) noexcept;
  UdpSocket& operator=(UdpSocket&& o) noexcept;
  UdpSocket(const UdpSocket&) = delete;
  UdpSocket& operator=(const UdpSocket&) = delete;
  ~UdpSocket();

  int fd() const noexcept { return fd_; }
  std::uint16_t local_port() const noexcept { return port_; }
  // What the kernel granted (getsockopt SO_RCVBUF; the kernel doubles the request for its own
  // bookkeeping, so this is about twice the usable payload bytes).
  int rcvbuf_bytes() const noexcept { return rcvbuf_; }
  // Non-empty when the kernel capped the receive buffer below the request.
  const std::string& warning() const noexcept { return warning_; }

  // One datagram; false if the kernel refused it (buffer full, unreachable): the caller counts it.
  bool send_to(const std::uint8_t* data, std::size_t len, const sockaddr_in& to) const noexcept;

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
  int rcvbuf_ = 0;
  std::string warning_;
};

}  // namespace tickinfer::feed
