#pragma once
// One HTTP/2 connection (cleartext, prior knowledge: how gRPC clients speak to an insecure port)
// carrying gRPC unary calls, as a state machine without sockets: bytes in, bytes out, and a
// handler called for each complete call on the thread that feeds the bytes.
//
// What it implements of RFC 9113: the client preface, SETTINGS (both ways, acknowledged), PING,
// WINDOW_UPDATE and flow control in both directions (responses wait for window when a client
// keeps it small), HEADERS + CONTINUATION with HPACK (hpack.hpp), padding, PRIORITY (ignored),
// RST_STREAM, GOAWAY, stream-id and state rules, frame-size and concurrency limits. Of the gRPC
// HTTP/2 protocol: POST with content-type application/grpc*, one length-prefixed message per
// request (compressed messages are refused with UNIMPLEMENTED: the server advertises no
// grpc-accept-encoding), grpc-timeout parsed, response as HEADERS + DATA + trailers, errors as a
// trailers-only response with a percent-encoded grpc-message. Server push and streaming calls
// are not used; a protocol violation closes the connection with GOAWAY and the reason.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "serving/h2/h2_frames.hpp"

namespace tickinfer::serving {

namespace hpack {
class Decoder;
}

// A complete unary call.
struct GrpcCall {
  uint32_t stream = 0;
  std::string_view path;     // "/package.Service/Method"
  std::string_view message;  // the request message's bytes (uncompressed)
  int64_t timeout_ns = -1;   // grpc-timeout, -1 when absent
  uint64_t received_ns = 0;  // CLOCK_MONOTONIC when the call's headers arrived (the deadline's start)
};

// What the handler answers: code 0 sends `body` (a serialized message); otherwise the status
// with `error_message` and no message. keep_open (with code 0) makes a server-streaming call that
// stays open: its first message is sent, and refresh_open_streams() later runs the handler again
// on the same request and sends the new message when it differs (grpc.health.v1.Health/Watch).
struct GrpcReply {
  int code = 0;
  std::string error_message;
  std::string body;
  bool keep_open = false;
};

struct GrpcH2Limits {
  size_t max_message_bytes = 64u << 20;   // larger requests get RESOURCE_EXHAUSTED
  uint32_t max_concurrent_streams = 256;  // advertised; more are refused (REFUSED_STREAM)
  size_t max_header_list_bytes = 16384;   // advertised; larger header blocks close the connection
};

class GrpcH2Connection {
 public:
  using Handler = std::function<void(const GrpcCall& call, GrpcReply& reply)>;

  GrpcH2Connection(const GrpcH2Limits& limits, Handler handler);
  ~GrpcH2Connection();
  GrpcH2Connection(const GrpcH2Connection&) = delete;
  GrpcH2Connection& operator=(const GrpcH2Connection&) = delete;

  // Consumes received bytes, calling the handler for each call they complete. Returns false when
  // the connection is finished: send output() (a GOAWAY saying why, or nothing) and close.
  bool receive(const uint8_t* data, size_t size);
  // Bytes to send, appended to by receive(); the owner sends them and erases what went out.
  std::string& output() { return out_; }
  // Server shutdown: a GOAWAY that lets calls in progress finish.
  void goaway();
  // Re-runs the handler for every open streaming call and sends each changed message.
  void refresh_open_streams();
  size_t open_streams() const { return streams_.size(); }
  // Why the connection was closed (empty while it is fine).
  const std::string& error() const { return error_; }

 private:
  struct Stream;
  bool fail(h2::ErrorCode code, const std::string& why);
  bool on_frame(const h2::FrameHeader& h, const uint8_t* payload);
  bool on_headers(const h2::FrameHeader& h, const uint8_t* payload);
  bool on_header_block_complete();
  bool on_data(const h2::FrameHeader& h, const uint8_t* payload);
  bool on_settings(const h2::FrameHeader& h, const uint8_t* payload);
  bool on_window_update(const h2::FrameHeader& h, const uint8_t* payload);
  void finish_call(uint32_t id, Stream& s);
  void reply(uint32_t id, Stream& s, const GrpcReply& r);
  void reply_http_error(uint32_t id, Stream& s, int http_status);
  void flush_stream(uint32_t id, Stream& s);
  void flush_all();
  void close_stream_if_done(uint32_t id);

  GrpcH2Limits limits_;
  Handler handler_;
  std::unique_ptr<hpack::Decoder> decoder_;
  std::string in_;       // received bytes not yet consumed
  std::string out_;
  std::string error_;
  bool preface_seen_ = false;
  bool going_away_ = false;
  std::map<uint32_t, std::unique_ptr<Stream>> streams_;
  uint32_t last_stream_ = 0;  // highest client stream id opened

  // Header block in progress (HEADERS without END_HEADERS, then CONTINUATION frames).
  uint32_t block_stream_ = 0;
  bool block_end_stream_ = false;
  std::string block_;

  // Flow control. Receiving: what we advertised minus what arrived; replenished at half.
  int64_t conn_recv_window_ = h2::kDefaultWindow;
  uint32_t stream_recv_initial_ = 1u << 20;  // our SETTINGS_INITIAL_WINDOW_SIZE
  // Sending: the peer's windows.
  int64_t conn_send_window_ = h2::kDefaultWindow;
  uint32_t peer_initial_window_ = h2::kDefaultWindow;
  uint32_t peer_max_frame_ = h2::kDefaultMaxFrame;
  GrpcReply reply_scratch_;  // reused for every call (capacity kept)
};

}  // namespace tickinfer::serving
