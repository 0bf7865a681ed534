// libFuzzer: the HTTP/2 gRPC connection (serving/h2/grpc_h2_connection.hpp) on arbitrary bytes
// after a valid client preface, fed in pieces whose sizes the input chooses. Nothing may crash
// or read out of bounds, a finished connection must say why, and every call handed to the
// handler must carry views inside memory the connection owns (checked by reading them).
#include <cstddef>
#include <cstdint>
#include <string>

#include "serving/h2/grpc_h2_connection.hpp"
#include "serving/h2/h2_frames.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tickinfer::serving;
  GrpcH2Limits limits;
  limits.max_message_bytes = 4096;
  limits.max_header_list_bytes = 2048;
  size_t checksum = 0;
  GrpcH2Connection conn(limits, [&](const GrpcCall& call, GrpcReply& reply) {
    for (char c : call.path) checksum += static_cast<unsigned char>(c);
    for (char c : call.message) checksum += static_cast<unsigned char>(c);
    reply.code = call.message.size() % 3 == 0 ? 0 : 5;
    reply.error_message = "not found";
    reply.body.assign(call.message.substr(0, 64));
  });
  const std::string preface(h2::kClientPreface);
  if (!conn.receive(reinterpret_cast<const uint8_t*>(preface.data()), preface.size())) __builtin_trap();
  size_t pos = 0;
  while (pos < size) {
    const size_t n = 1 + data[pos] % 97;  // piece size from the input itself
    const size_t take = n < size - pos ? n : size - pos;
    if (!conn.receive(data + pos, take)) {
      if (conn.error().empty()) __builtin_trap();
      break;
    }
    conn.output().clear();
    pos += take;
  }
  return checksum == 1 ? 1 : 0;
}
