#pragma once
// A minimal blocking gRPC-over-HTTP/2 client for the load generators (tickinfer loadgen,
// bench/grpc_load): one TCP connection, one
// unary call at a time, the request as prebuilt bytes. It speaks only what a unary call needs
// (preface, SETTINGS and their ACK, PING ACK, WINDOW_UPDATE to keep the server's window open,
// HEADERS/CONTINUATION decoded with the server's HPACK decoder, DATA) and checks grpc-status.
// Its point: measure the server without grpc++'s client, which costs about 90 us of CPU per call
// on the machine of docs/performance.md.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace tickinfer::serving::hpack {
class Decoder;
}

namespace tickinfer::serving {

class GrpcH2Client {
 public:
  // Connects to host:port (an IPv4 address; default 127.0.0.1); throws std::runtime_error on failure.
  GrpcH2Client(int port, std::string authority, const std::string& host = "127.0.0.1");
  ~GrpcH2Client();
  // One unary call of `path` with the serialized request; returns true if grpc-status was 0 and
  // a message came back (its bytes in `response`).
  bool call(std::string_view path, std::string_view request, std::string& response);

 private:
  bool read_more();
  int fd_ = -1;
  uint32_t next_stream_ = 1;
  std::string authority_;
  std::string in_, out_;
  uint64_t received_data_ = 0;  // DATA bytes since the last connection WINDOW_UPDATE
  std::unique_ptr<hpack::Decoder> decoder_;
};

}  // namespace tickinfer::serving
