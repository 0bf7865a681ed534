// Binding the servers' listening sockets (listen_socket.hpp).
#include "serving/listen_socket.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tickinfer/error.hpp"

namespace tickinfer::serving {

ListenSocket listen_tcp(const std::string& bind_address, int port, const std::string& what) {
  const std::string where = bind_address + ":" + std::to_string(port);
  sockaddr_in6 a6{};
  sockaddr_in a4{};
  sockaddr* addr = nullptr;
  socklen_t len = 0;
  int family = AF_INET;
  if (inet_pton(AF_INET, bind_address.c_str(), &a4.sin_addr) == 1) {
    a4.sin_family = AF_INET;
    a4.sin_port = htons(static_cast<uint16_t>(port));
    addr = reinterpret_cast<sockaddr*>(&a4);
    len = sizeof a4;
  } else if (inet_pton(AF_INET6, bind_address.c_str(), &a6.sin6_addr) == 1) {
    family = AF_INET6;
    a6.sin6_family = AF_INET6;
    a6.sin6_port = htons(static_cast<uint16_t>(port));
    addr = reinterpret_cast<sockaddr*>(&a6);
    len = sizeof a6;
  } else {
    throw Error("bind address '" + bind_address + "' is not a numeric IPv4 or IPv6 address");
  }
  const int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw Error("socket() for " + where + ": " + std::strerror(errno));
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, addr, len) != 0) {
    const std::string e = std::strerror(errno);
    close(fd);
    throw Error("cannot bind " + what + " " + where + ": " + e);
  }
  if (listen(fd, 1024) != 0) {
    const std::string e = std::strerror(errno);
    close(fd);
    throw Error("cannot listen on " + where + ": " + e);
  }
  sockaddr_storage bound{};
  socklen_t blen = sizeof bound;
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &blen);
  ListenSocket ls;
  ls.fd = fd;
  ls.port = family == AF_INET ? ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port)
                              : ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  return ls;
}

}  // namespace tickinfer::serving
