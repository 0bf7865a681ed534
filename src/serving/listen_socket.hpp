#pragma once
// A non-blocking TCP listening socket on a numeric IPv4 or IPv6 address (port 0: an ephemeral
// one), shared by the REST and the gRPC servers.
#include <string>

namespace tickinfer::serving {

struct ListenSocket {
  int fd = -1;
  int port = 0;  // the bound port
};

// Throws tickinfer::Error naming `what` (e.g. "the REST port") and the address on failure.
ListenSocket listen_tcp(const std::string& bind_address, int port, const std::string& what);

}  // namespace tickinfer::serving
