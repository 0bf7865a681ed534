// The load generators' HTTP/2 gRPC client (grpc_h2_client.hpp).
#include "serving/h2/grpc_h2_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "serving/h2/h2_frames.hpp"
#include "serving/h2/hpack.hpp"

namespace tickinfer::serving {

namespace {
constexpr uint32_t kWindow = 1u << 30;  // what we let the server send before a WINDOW_UPDATE
}

GrpcH2Client::GrpcH2Client(int port, std::string authority, const std::string& host)
    : authority_(std::move(authority)), decoder_(std::make_unique<hpack::Decoder>()) {
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1) {
    if (fd_ >= 0) close(fd_);
    throw std::runtime_error("'" + host + "' is not an IPv4 address");
  }
  if (fd_ < 0 || connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    throw std::runtime_error(std::string("connect: ") + std::strerror(errno));
  }
  const int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  out_.assign(h2::kClientPreface);
  h2::append_settings(out_, {{h2::Setting::EnablePush, 0}, {h2::Setting::InitialWindowSize, kWindow}});
  h2::append_window_update(out_, 0, kWindow - h2::kDefaultWindow);
}

GrpcH2Client::~GrpcH2Client() {
  if (fd_ >= 0) close(fd_);
}

bool GrpcH2Client::read_more() {
  char buf[16384];
  const ssize_t n = recv(fd_, buf, sizeof buf, 0);
  if (n <= 0) return false;
  in_.append(buf, static_cast<size_t>(n));
  return true;
}

bool GrpcH2Client::call(std::string_view path, std::string_view request, std::string& response) {
  const uint32_t id = next_stream_;
  next_stream_ += 2;
  // HEADERS: :method POST (static 3), :scheme http (static 6), :path, :authority,
  // content-type application/grpc, te: trailers; literals without indexing, no Huffman.
  thread_local std::string block;
  block.clear();
  hpack::encode_indexed(block, 3);
  hpack::encode_indexed(block, 6);
  hpack::encode_literal_without_indexing(block, 4, path);
  hpack::encode_literal_without_indexing(block, 1, authority_);
  hpack::encode_literal_without_indexing(block, 31, "application/grpc");
  hpack::encode_literal_without_indexing(block, "te", "trailers");
  h2::append_frame_header(out_, static_cast<uint32_t>(block.size()), h2::FrameType::Headers, h2::flag::kEndHeaders, id);
  out_ += block;
  h2::append_frame_header(out_, static_cast<uint32_t>(5 + request.size()), h2::FrameType::Data, h2::flag::kEndStream, id);
  out_ += '\0';
  h2::append_u32(out_, static_cast<uint32_t>(request.size()));
  out_ += request;
  if (send(fd_, out_.data(), out_.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(out_.size())) return false;
  out_.clear();

  response.clear();
  bool got_message = false, status_ok = false;
  std::string message;
  thread_local std::vector<hpack::Header> headers;
  std::string header_block;
  for (;;) {
    while (in_.size() < h2::kFrameHeaderBytes) {
      if (!read_more()) return false;
    }
    const h2::FrameHeader h = h2::read_frame_header(reinterpret_cast<const uint8_t*>(in_.data()));
    while (in_.size() < h2::kFrameHeaderBytes + h.length) {
      if (!read_more()) return false;
    }
    const std::string_view payload(in_.data() + h2::kFrameHeaderBytes, h.length);
    bool done = false;
    switch (h.type) {
      case h2::FrameType::Settings:
        if (!(h.flags & h2::flag::kAck)) h2::append_settings_ack(out_);
        break;
      case h2::FrameType::Ping:
        if (!(h.flags & h2::flag::kAck)) h2::append_ping_ack(out_, reinterpret_cast<const uint8_t*>(payload.data()));
        break;
      case h2::FrameType::Data:
        received_data_ += h.length;
        if (h.stream == id) message.append(payload);
        break;
      case h2::FrameType::Headers:
      case h2::FrameType::Continuation: {
        header_block.append(payload);  // the server sends neither padding nor priority
        if (!(h.flags & h2::flag::kEndHeaders)) break;
        headers.clear();
        std::string why;
        if (!decoder_->decode(reinterpret_cast<const uint8_t*>(header_block.data()), header_block.size(), headers, why)) {
          return false;
        }
        header_block.clear();
        for (const auto& hd : headers) {
          if (hd.name == "grpc-status") status_ok = hd.value == "0";
        }
        // END_STREAM comes on the HEADERS frame (trailers) for a gRPC response.
        if (h.stream == id && (h.flags & h2::flag::kEndStream)) done = true;
        break;
      }
      case h2::FrameType::Goaway:
      case h2::FrameType::RstStream:
        if (h.type == h2::FrameType::Goaway || h.stream == id) return false;
        break;
      default: break;
    }
    in_.erase(0, h2::kFrameHeaderBytes + h.length);
    if (done) break;
  }
  if (received_data_ > kWindow / 2) {  // sent with the next request
    h2::append_window_update(out_, 0, static_cast<uint32_t>(received_data_));
    received_data_ = 0;
  }
  if (message.size() >= 5) {
    response.assign(message, 5, std::string::npos);
    got_message = true;
  }
  return status_ok && got_message;
}

}  // namespace tickinfer::serving
