// The HTTP/2 + gRPC connection state machine (grpc_h2_connection.hpp).
#include "serving/h2/grpc_h2_connection.hpp"

#include <algorithm>
#include <cstring>

#include "serving/h2/hpack.hpp"
#include "serving/http1/http_server.hpp"  // monotonic_ns

namespace tickinfer::serving {

using h2::ErrorCode;
using h2::FrameHeader;
using h2::FrameType;
namespace flag = h2::flag;

namespace {

// HPACK static-table indices the responses use (RFC 7541 Appendix A).
constexpr size_t kStatus200 = 8;
constexpr size_t kContentTypeName = 31;
constexpr uint32_t kConnWindowTarget = 16u << 20;  // the connection receive window we keep

// grpc-timeout: up to 8 digits and a unit (H, M, S, m, u, n); -1 when malformed.
int64_t parse_grpc_timeout(std::string_view v) {
  if (v.size() < 2 || v.size() > 9) return -1;
  int64_t n = 0;
  for (size_t i = 0; i + 1 < v.size(); ++i) {
    if (v[i] < '0' || v[i] > '9') return -1;
    n = n * 10 + (v[i] - '0');
  }
  switch (v.back()) {
    case 'H': return n * 3600 * 1000000000LL;
    case 'M': return n * 60 * 1000000000LL;
    case 'S': return n * 1000000000LL;
    case 'm': return n * 1000000LL;
    case 'u': return n * 1000LL;
    case 'n': return n;
    default: return -1;
  }
}

// grpc-message is percent-encoded (the gRPC HTTP/2 protocol): bytes outside 0x20-0x7e and '%'.
void append_percent_encoded(std::string& out, std::string_view s) {
  static const char kHex[] = "0123456789ABCDEF";
  for (unsigned char c : s) {
    if (c >= 0x20 && c <= 0x7e && c != '%') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
}

// Appends one length-prefixed message to the stream's pending DATA.
void append_message(std::string& pending, const std::string& body) {
  pending += '\0';
  h2::append_u32(pending, static_cast<uint32_t>(body.size()));
  pending += body;
}

}  // namespace

struct GrpcH2Connection::Stream {
  std::string path, content_type, method;
  int64_t timeout_ns = -1;
  uint64_t received_ns = 0;
  bool remote_closed = false;   // END_STREAM received
  bool local_closed = false;    // END_STREAM sent (or queued in `pending`)
  std::string body;             // the length-prefixed request message as it arrives
  int64_t recv_window = 0;      // what this stream may still send us
  int64_t send_window = 0;      // what we may still send on it
  std::string pending_data;     // response DATA payload waiting for window
  std::string pending_trailers; // the trailer HEADERS frame, sent after pending_data
  bool streaming = false;       // an open server-streaming call (keep_open)
  std::string request;          // its request message, for refresh_open_streams()
  std::string last_sent;        // its last message
};

GrpcH2Connection::GrpcH2Connection(const GrpcH2Limits& limits, Handler handler)
    : limits_(limits),
      handler_(std::move(handler)),
      decoder_(std::make_unique<hpack::Decoder>(4096, limits.max_header_list_bytes)) {
  // Our settings first (a server's preface), then a larger connection window than the default.
  h2::append_settings(out_, {{h2::Setting::MaxConcurrentStreams, limits_.max_concurrent_streams},
                             {h2::Setting::InitialWindowSize, stream_recv_initial_},
                             {h2::Setting::MaxHeaderListSize, static_cast<uint32_t>(limits_.max_header_list_bytes)}});
  h2::append_window_update(out_, 0, kConnWindowTarget - h2::kDefaultWindow);
  conn_recv_window_ = kConnWindowTarget;
}

GrpcH2Connection::~GrpcH2Connection() = default;

bool GrpcH2Connection::fail(ErrorCode code, const std::string& why) {
  if (error_.empty()) error_ = why;
  h2::append_goaway(out_, last_stream_, code, why.substr(0, 200));
  going_away_ = true;
  return false;
}

void GrpcH2Connection::goaway() {
  if (going_away_) return;
  h2::append_goaway(out_, last_stream_, ErrorCode::NoError, "server shutting down");
  going_away_ = true;
}

bool GrpcH2Connection::receive(const uint8_t* data, size_t size) {
  if (!error_.empty()) return false;
  in_.append(reinterpret_cast<const char*>(data), size);
  size_t pos = 0;
  if (!preface_seen_) {
    const size_t n = std::min(in_.size(), h2::kClientPreface.size());
    if (std::string_view(in_).substr(0, n) != h2::kClientPreface.substr(0, n)) {
      error_ = "not an HTTP/2 client preface (this port speaks gRPC over HTTP/2)";
      return false;
    }
    if (in_.size() < h2::kClientPreface.size()) return true;
    pos = h2::kClientPreface.size();
    preface_seen_ = true;
  }
  bool ok = true;
  while (ok && in_.size() - pos >= h2::kFrameHeaderBytes) {
    const auto* p = reinterpret_cast<const uint8_t*>(in_.data() + pos);
    const FrameHeader h = h2::read_frame_header(p);
    // We never raise SETTINGS_MAX_FRAME_SIZE above the default.
    if (h.length > h2::kDefaultMaxFrame) {
      ok = fail(ErrorCode::FrameSizeError, "frame of " + std::to_string(h.length) + " bytes exceeds 16384");
      break;
    }
    if (in_.size() - pos - h2::kFrameHeaderBytes < h.length) break;
    ok = on_frame(h, p + h2::kFrameHeaderBytes);
    pos += h2::kFrameHeaderBytes + h.length;
  }
  in_.erase(0, pos);
  return ok;
}

bool GrpcH2Connection::on_frame(const FrameHeader& h, const uint8_t* payload) {
  // Between HEADERS without END_HEADERS and its last CONTINUATION nothing else may come.
  if (block_stream_ != 0 && (h.type != FrameType::Continuation || h.stream != block_stream_)) {
    return fail(ErrorCode::ProtocolError, "expected CONTINUATION of the header block on stream " +
                                              std::to_string(block_stream_));
  }
  switch (h.type) {
    case FrameType::Data: return on_data(h, payload);
    case FrameType::Headers: return on_headers(h, payload);
    case FrameType::Continuation:
      if (block_stream_ == 0) return fail(ErrorCode::ProtocolError, "CONTINUATION without HEADERS");
      block_.append(reinterpret_cast<const char*>(payload), h.length);
      if (block_.size() > limits_.max_header_list_bytes * 2) {
        return fail(ErrorCode::EnhanceYourCalm, "header block larger than the advertised limit");
      }
      return (h.flags & flag::kEndHeaders) ? on_header_block_complete() : true;
    case FrameType::Priority:
      if (h.stream == 0) return fail(ErrorCode::ProtocolError, "PRIORITY on stream 0");
      if (h.length != 5) return fail(ErrorCode::FrameSizeError, "PRIORITY frame length is not 5");
      return true;
    case FrameType::RstStream:
      if (h.stream == 0) return fail(ErrorCode::ProtocolError, "RST_STREAM on stream 0");
      if (h.length != 4) return fail(ErrorCode::FrameSizeError, "RST_STREAM frame length is not 4");
      if (h.stream > last_stream_) return fail(ErrorCode::ProtocolError, "RST_STREAM on an idle stream");
      streams_.erase(h.stream);
      return true;
    case FrameType::Settings: return on_settings(h, payload);
    case FrameType::PushPromise: return fail(ErrorCode::ProtocolError, "a client sent PUSH_PROMISE");
    case FrameType::Ping:
      if (h.stream != 0) return fail(ErrorCode::ProtocolError, "PING on a stream");
      if (h.length != 8) return fail(ErrorCode::FrameSizeError, "PING frame length is not 8");
      if (!(h.flags & flag::kAck)) h2::append_ping_ack(out_, payload);
      return true;
    case FrameType::Goaway:
      if (h.stream != 0) return fail(ErrorCode::ProtocolError, "GOAWAY on a stream");
      if (h.length < 8) return fail(ErrorCode::FrameSizeError, "GOAWAY frame shorter than 8 bytes");
      going_away_ = true;  // the client starts nothing new; calls in progress still finish
      return true;
    case FrameType::WindowUpdate: return on_window_update(h, payload);
    default: return true;  // unknown frame types are ignored (RFC 9113 section 4.1)
  }
}

bool GrpcH2Connection::on_settings(const FrameHeader& h, const uint8_t* p) {
  if (h.stream != 0) return fail(ErrorCode::ProtocolError, "SETTINGS on a stream");
  if (h.flags & flag::kAck) {
    if (h.length != 0) return fail(ErrorCode::FrameSizeError, "SETTINGS ACK with a payload");
    return true;
  }
  if (h.length % 6 != 0) return fail(ErrorCode::FrameSizeError, "SETTINGS length is not a multiple of 6");
  for (uint32_t i = 0; i < h.length; i += 6) {
    const uint16_t id = static_cast<uint16_t>((p[i] << 8) | p[i + 1]);
    const uint32_t v = (uint32_t{p[i + 2]} << 24) | (uint32_t{p[i + 3]} << 16) | (uint32_t{p[i + 4]} << 8) | p[i + 5];
    switch (static_cast<h2::Setting>(id)) {
      case h2::Setting::EnablePush:
        if (v > 1) return fail(ErrorCode::ProtocolError, "SETTINGS_ENABLE_PUSH is not 0 or 1");
        break;
      case h2::Setting::InitialWindowSize: {
        if (v > h2::kMaxWindow) return fail(ErrorCode::FlowControlError, "SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1");
        const int64_t delta = int64_t{v} - int64_t{peer_initial_window_};
        peer_initial_window_ = v;
        for (auto& [id2, s] : streams_) {
          s->send_window += delta;
          if (s->send_window > h2::kMaxWindow) return fail(ErrorCode::FlowControlError, "stream window above 2^31-1");
        }
        break;
      }
      case h2::Setting::MaxFrameSize:
        if (v < h2::kDefaultMaxFrame || v > 0xffffff) {
          return fail(ErrorCode::ProtocolError, "SETTINGS_MAX_FRAME_SIZE outside 16384..16777215");
        }
        peer_max_frame_ = v;
        break;
      default: break;  // header table size (our encoder uses no dynamic table), limits, unknown ids
    }
  }
  h2::append_settings_ack(out_);
  flush_all();  // a larger initial window may release waiting responses
  return true;
}

bool GrpcH2Connection::on_window_update(const FrameHeader& h, const uint8_t* p) {
  if (h.length != 4) return fail(ErrorCode::FrameSizeError, "WINDOW_UPDATE frame length is not 4");
  const uint32_t inc = ((uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3]) & 0x7fffffffu;
  if (h.stream == 0) {
    if (inc == 0) return fail(ErrorCode::ProtocolError, "WINDOW_UPDATE of 0 on the connection");
    conn_send_window_ += inc;
    if (conn_send_window_ > h2::kMaxWindow) return fail(ErrorCode::FlowControlError, "connection window above 2^31-1");
    flush_all();
    return true;
  }
  const auto it = streams_.find(h.stream);
  if (it == streams_.end()) {
    if (h.stream > last_stream_) return fail(ErrorCode::ProtocolError, "WINDOW_UPDATE on an idle stream");
    return true;  // a stream we closed: allowed, ignored
  }
  Stream& s = *it->second;
  if (inc == 0) {
    h2::append_rst_stream(out_, h.stream, ErrorCode::ProtocolError);
    streams_.erase(it);
    return true;
  }
  s.send_window += inc;
  if (s.send_window > h2::kMaxWindow) {
    h2::append_rst_stream(out_, h.stream, ErrorCode::FlowControlError);
    streams_.erase(it);
    return true;
  }
  flush_stream(h.stream, s);
  close_stream_if_done(h.stream);
  return true;
}

bool GrpcH2Connection::on_headers(const FrameHeader& h, const uint8_t* p) {
  if (h.stream == 0) return fail(ErrorCode::ProtocolError, "HEADERS on stream 0");
  size_t off = 0, len = h.length;
  uint8_t pad = 0;
  if (h.flags & flag::kPadded) {
    if (len < 1) return fail(ErrorCode::FrameSizeError, "padded HEADERS without a pad length");
    pad = p[0];
    off = 1;
  }
  if (h.flags & flag::kPriority) off += 5;
  if (off + pad > len) return fail(ErrorCode::ProtocolError, "HEADERS padding exceeds the frame");
  const auto it = streams_.find(h.stream);
  if (it != streams_.end()) {
    // Trailers from the client (gRPC clients send none): must end the stream; contents ignored.
    if (!(h.flags & flag::kEndStream)) return fail(ErrorCode::ProtocolError, "second HEADERS without END_STREAM");
  } else {
    if ((h.stream & 1) == 0) return fail(ErrorCode::ProtocolError, "a client opened an even stream id");
    if (h.stream <= last_stream_) return fail(ErrorCode::StreamClosed, "HEADERS on a closed stream");
    last_stream_ = h.stream;
  }
  block_stream_ = h.stream;
  block_end_stream_ = (h.flags & flag::kEndStream) != 0;
  block_.assign(reinterpret_cast<const char*>(p) + off, len - off - pad);
  return (h.flags & flag::kEndHeaders) ? on_header_block_complete() : true;
}

bool GrpcH2Connection::on_header_block_complete() {
  const uint32_t id = block_stream_;
  block_stream_ = 0;
  thread_local std::vector<hpack::Header> headers;
  headers.clear();
  std::string why;
  if (!decoder_->decode(reinterpret_cast<const uint8_t*>(block_.data()), block_.size(), headers, why)) {
    return fail(ErrorCode::CompressionError, "header block: " + why);
  }
  auto it = streams_.find(id);
  if (it != streams_.end()) {  // trailers (END_STREAM checked in on_headers)
    it->second->remote_closed = true;
    finish_call(id, *it->second);
    return true;
  }
  if (going_away_) {  // after GOAWAY nothing new starts
    h2::append_rst_stream(out_, id, ErrorCode::RefusedStream);
    return true;
  }
  if (streams_.size() >= limits_.max_concurrent_streams) {
    h2::append_rst_stream(out_, id, ErrorCode::RefusedStream);
    return true;
  }
  auto s = std::make_unique<Stream>();
  s->recv_window = stream_recv_initial_;
  s->send_window = peer_initial_window_;
  for (const hpack::Header& hd : headers) {
    if (hd.name == ":path") s->path = hd.value;
    else if (hd.name == ":method") s->method = hd.value;
    else if (hd.name == "content-type") s->content_type = hd.value;
    else if (hd.name == "grpc-timeout") s->timeout_ns = parse_grpc_timeout(hd.value);
  }
  s->received_ns = monotonic_ns();
  s->remote_closed = block_end_stream_;
  Stream& ref = *s;
  streams_.emplace(id, std::move(s));
  if (ref.method != "POST") {
    reply_http_error(id, ref, 405);
  } else if (ref.content_type.rfind("application/grpc", 0) != 0) {
    reply_http_error(id, ref, 415);
  } else if (ref.remote_closed) {
    finish_call(id, ref);  // no message at all: answered by finish_call as malformed
  }
  close_stream_if_done(id);
  return true;
}

bool GrpcH2Connection::on_data(const FrameHeader& h, const uint8_t* p) {
  if (h.stream == 0) return fail(ErrorCode::ProtocolError, "DATA on stream 0");
  // Flow control counts the whole payload, padding included, whatever happens to the stream.
  conn_recv_window_ -= h.length;
  if (conn_recv_window_ < 0) return fail(ErrorCode::FlowControlError, "DATA beyond the connection window");
  if (conn_recv_window_ < kConnWindowTarget / 2) {
    h2::append_window_update(out_, 0, static_cast<uint32_t>(kConnWindowTarget - conn_recv_window_));
    conn_recv_window_ = kConnWindowTarget;
  }
  size_t off = 0, len = h.length;
  uint8_t pad = 0;
  if (h.flags & flag::kPadded) {
    if (len < 1) return fail(ErrorCode::FrameSizeError, "padded DATA without a pad length");
    pad = p[0];
    off = 1;
  }
  if (off + pad > len) return fail(ErrorCode::ProtocolError, "DATA padding exceeds the frame");
  const auto it = streams_.find(h.stream);
  if (it == streams_.end()) {
    if (h.stream > last_stream_) return fail(ErrorCode::ProtocolError, "DATA on an idle stream");
    return true;  // a stream already answered and closed (or reset): ignored
  }
  Stream& s = *it->second;
  if (s.remote_closed) {
    h2::append_rst_stream(out_, h.stream, ErrorCode::StreamClosed);
    streams_.erase(it);
    return true;
  }
  s.recv_window -= h.length;
  if (s.recv_window < 0) {
    h2::append_rst_stream(out_, h.stream, ErrorCode::FlowControlError);
    streams_.erase(it);
    return true;
  }
  s.body.append(reinterpret_cast<const char*>(p) + off, len - off - pad);
  if (s.body.size() > limits_.max_message_bytes + 5) {
    // Answered at once, and the rest of the upload stopped (RST_STREAM NO_ERROR after a
    // complete response, as RFC 9113 section 8.1 allows).
    GrpcReply r;
    r.code = 8;  // RESOURCE_EXHAUSTED
    r.error_message = "request message larger than this server's limit of " +
                      std::to_string(limits_.max_message_bytes) + " bytes";
    reply(h.stream, s, r);
    h2::append_rst_stream(out_, h.stream, ErrorCode::NoError);
    streams_.erase(it);
    return true;
  }
  if (h.flags & flag::kEndStream) {
    s.remote_closed = true;
    finish_call(h.stream, s);
  } else if (s.recv_window < static_cast<int64_t>(stream_recv_initial_ / 2)) {
    h2::append_window_update(out_, h.stream, static_cast<uint32_t>(stream_recv_initial_ - s.recv_window));
    s.recv_window = stream_recv_initial_;
  }
  close_stream_if_done(h.stream);
  return true;
}

void GrpcH2Connection::finish_call(uint32_t id, Stream& s) {
  if (s.local_closed) return;
  GrpcReply& r = reply_scratch_;
  r.code = 0;
  r.error_message.clear();
  r.body.clear();
  r.keep_open = false;
  const std::string& b = s.body;
  if (b.size() < 5) {
    r.code = 13;  // INTERNAL, as gRPC servers answer a request without a whole message
    r.error_message = "request without a complete length-prefixed message";
  } else {
    const uint32_t n = (uint32_t{static_cast<uint8_t>(b[1])} << 24) | (uint32_t{static_cast<uint8_t>(b[2])} << 16) |
                       (uint32_t{static_cast<uint8_t>(b[3])} << 8) | static_cast<uint8_t>(b[4]);
    if (b[0] != 0) {
      r.code = 12;  // UNIMPLEMENTED
      r.error_message = "compressed request messages are not supported (send grpc-encoding identity)";
    } else if (b.size() != 5 + size_t{n}) {
      r.code = 13;
      r.error_message = b.size() < 5 + size_t{n} ? "request message shorter than its length prefix"
                                                 : "more than one request message on a unary call";
    } else {
      GrpcCall call;
      call.stream = id;
      call.path = s.path;
      call.message = std::string_view(b).substr(5);
      call.timeout_ns = s.timeout_ns;
      call.received_ns = s.received_ns;
      handler_(call, r);
    }
  }
  reply(id, s, r);
}

void GrpcH2Connection::reply(uint32_t id, Stream& s, const GrpcReply& r) {
  thread_local std::string block;
  block.clear();
  hpack::encode_indexed(block, kStatus200);
  hpack::encode_literal_without_indexing(block, kContentTypeName, "application/grpc");
  if (r.code == 0 && r.keep_open) {  // a stream that stays open: headers and the first message
    h2::append_frame_header(out_, static_cast<uint32_t>(block.size()), FrameType::Headers, flag::kEndHeaders, id);
    out_ += block;
    s.streaming = true;
    s.request.assign(s.body, 5, std::string::npos);
    s.last_sent = r.body;
    append_message(s.pending_data, r.body);
    flush_stream(id, s);
    return;
  }
  if (r.code == 0) {
    h2::append_frame_header(out_, static_cast<uint32_t>(block.size()), FrameType::Headers, flag::kEndHeaders, id);
    out_ += block;
    // The message, length-prefixed, then the trailers; both wait for window if they must.
    s.pending_data.clear();
    append_message(s.pending_data, r.body);
    block.clear();
    hpack::encode_literal_without_indexing(block, "grpc-status", "0");
  } else {
    hpack::encode_literal_without_indexing(block, "grpc-status", std::to_string(r.code));
    thread_local std::string msg;
    msg.clear();
    append_percent_encoded(msg, std::string_view(r.error_message).substr(0, 1024));
    hpack::encode_literal_without_indexing(block, "grpc-message", msg);
  }
  s.pending_trailers.clear();
  h2::append_frame_header(s.pending_trailers, static_cast<uint32_t>(block.size()), FrameType::Headers,
                          flag::kEndHeaders | flag::kEndStream, id);
  s.pending_trailers += block;
  s.local_closed = true;
  flush_stream(id, s);
}

void GrpcH2Connection::reply_http_error(uint32_t id, Stream& s, int http_status) {
  thread_local std::string block;
  block.clear();
  hpack::encode_literal_without_indexing(block, 8, std::to_string(http_status));  // :status
  h2::append_frame_header(out_, static_cast<uint32_t>(block.size()), FrameType::Headers,
                          flag::kEndHeaders | flag::kEndStream, id);
  out_ += block;
  s.local_closed = true;
  if (!s.remote_closed) h2::append_rst_stream(out_, id, ErrorCode::NoError);  // stop its upload
  s.remote_closed = true;
}

// Sends as much of the stream's pending DATA as both windows and the peer's frame size allow,
// then its trailers once no DATA is left.
void GrpcH2Connection::flush_stream(uint32_t id, Stream& s) {
  size_t sent = 0;
  const size_t total = s.pending_data.size();
  while (sent < total) {
    const int64_t window = std::min(conn_send_window_, s.send_window);
    if (window <= 0) break;
    const size_t n = std::min({total - sent, static_cast<size_t>(window), static_cast<size_t>(peer_max_frame_)});
    h2::append_frame_header(out_, static_cast<uint32_t>(n), FrameType::Data, 0, id);
    out_.append(s.pending_data, sent, n);
    sent += n;
    conn_send_window_ -= static_cast<int64_t>(n);
    s.send_window -= static_cast<int64_t>(n);
  }
  s.pending_data.erase(0, sent);
  if (s.pending_data.empty() && !s.pending_trailers.empty()) {
    out_ += s.pending_trailers;
    s.pending_trailers.clear();
  }
}

void GrpcH2Connection::refresh_open_streams() {
  for (auto& [id, sp] : streams_) {
    Stream& s = *sp;
    if (!s.streaming) continue;
    GrpcReply& r = reply_scratch_;
    r.code = 0;
    r.error_message.clear();
    r.body.clear();
    r.keep_open = false;
    GrpcCall call;
    call.stream = id;
    call.path = s.path;
    call.message = s.request;
    call.timeout_ns = -1;  // a streaming call's deadline is the client's to enforce
    handler_(call, r);
    if (r.code != 0 || r.body == s.last_sent) continue;
    s.last_sent = r.body;
    append_message(s.pending_data, r.body);
    flush_stream(id, s);
  }
}

void GrpcH2Connection::flush_all() {
  for (auto it = streams_.begin(); it != streams_.end();) {
    flush_stream(it->first, *it->second);
    const uint32_t id = it->first;
    ++it;
    close_stream_if_done(id);
  }
}

// A stream is forgotten once both sides ended it and nothing of ours waits to be sent.
void GrpcH2Connection::close_stream_if_done(uint32_t id) {
  const auto it = streams_.find(id);
  if (it == streams_.end()) return;
  const Stream& s = *it->second;
  if (s.remote_closed && s.local_closed && s.pending_data.empty() && s.pending_trailers.empty()) streams_.erase(it);
}

}  // namespace tickinfer::serving
