// The HTTP/2 gRPC connection state machine (serving/h2/grpc_h2_connection.hpp) driven with frames
// built byte by byte: a unary call's response frames and trailers, errors as trailers-only
// responses, flow control holding a response until the client opens its window, PING and
// SETTINGS acknowledgements, and the protocol violations that must close the connection with a
// GOAWAY naming the problem. (The official Python gRPC client against the running server is
// tests/python/serving_grpc_client_test.py.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "serving/h2/grpc_h2_connection.hpp"
#include "serving/h2/h2_frames.hpp"
#include "serving/h2/hpack.hpp"

namespace {

using namespace tickinfer::serving;
namespace flag = h2::flag;
using h2::FrameType;

struct Frame {
  h2::FrameHeader h;
  std::string payload;
};

// Splits a server's output into frames (the server never sends a partial frame).
std::vector<Frame> frames_of(const std::string& out) {
  std::vector<Frame> f;
  size_t pos = 0;
  while (pos + h2::kFrameHeaderBytes <= out.size()) {
    Frame fr;
    fr.h = h2::read_frame_header(reinterpret_cast<const uint8_t*>(out.data() + pos));
    fr.payload = out.substr(pos + h2::kFrameHeaderBytes, fr.h.length);
    pos += h2::kFrameHeaderBytes + fr.h.length;
    f.push_back(fr);
  }
  EXPECT_EQ(pos, out.size()) << "trailing partial frame";
  return f;
}

std::string request_headers(uint32_t stream, const std::string& path, const std::string& content_type = "application/grpc",
                            uint8_t extra_flags = 0) {
  std::string block, out;
  hpack::encode_indexed(block, 3);  // :method POST
  hpack::encode_indexed(block, 6);  // :scheme http
  hpack::encode_literal_without_indexing(block, 4, path);
  hpack::encode_literal_without_indexing(block, 1, "localhost");
  hpack::encode_literal_without_indexing(block, 31, content_type);
  hpack::encode_literal_without_indexing(block, "te", "trailers", true);
  h2::append_frame_header(out, static_cast<uint32_t>(block.size()), FrameType::Headers, flag::kEndHeaders | extra_flags,
                          stream);
  return out + block;
}

std::string message_data(uint32_t stream, const std::string& msg, bool end = true, uint8_t compressed = 0) {
  std::string out;
  h2::append_frame_header(out, static_cast<uint32_t>(5 + msg.size()), FrameType::Data, end ? flag::kEndStream : 0, stream);
  out += static_cast<char>(compressed);
  h2::append_u32(out, static_cast<uint32_t>(msg.size()));
  return out + msg;
}

std::vector<hpack::Header> decode(hpack::Decoder& d, const std::string& block) {
  std::vector<hpack::Header> h;
  std::string why;
  EXPECT_TRUE(d.decode(reinterpret_cast<const uint8_t*>(block.data()), block.size(), h, why)) << why;
  return h;
}

std::string header(const std::vector<hpack::Header>& hs, const std::string& name) {
  for (const auto& h : hs) {
    if (h.name == name) return h.value;
  }
  return "<absent>";
}

// An echo service: "/t.S/Echo" answers the request bytes reversed; "/t.S/Fail" fails with 3.
struct Harness {
  std::vector<GrpcCall> calls;
  std::vector<std::string> messages;
  GrpcH2Connection conn;
  hpack::Decoder decoder;
  Harness(GrpcH2Limits limits = {})
      : conn(limits, [this](const GrpcCall& c, GrpcReply& r) {
          calls.push_back(c);
          messages.emplace_back(c.message);
          if (c.path == "/t.S/Fail") {
            r.code = 3;
            r.error_message = "bad argument: 100% wrong\n";
          } else {
            r.body.assign(c.message.rbegin(), c.message.rend());
          }
        }) {}
  bool feed(const std::string& bytes) {
    return conn.receive(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::vector<Frame> take() {
    auto f = frames_of(conn.output());
    conn.output().clear();
    return f;
  }
  bool start(const std::string& client_settings = "") {
    std::string s(h2::kClientPreface);
    if (client_settings.empty()) {
      h2::append_settings(s, {});
    } else {
      s += client_settings;
    }
    return feed(s);
  }
};

TEST(GrpcH2Connection, UnaryCallGetsHeadersMessageAndTrailers) {
  Harness t;
  ASSERT_TRUE(t.start());
  auto f = t.take();
  // Server preface SETTINGS, its connection WINDOW_UPDATE, then the ACK of ours.
  ASSERT_GE(f.size(), 3u);
  EXPECT_EQ(f[0].h.type, FrameType::Settings);
  EXPECT_EQ(f.back().h.type, FrameType::Settings);
  EXPECT_EQ(f.back().h.flags, flag::kAck);

  ASSERT_TRUE(t.feed(request_headers(1, "/t.S/Echo") + message_data(1, "abc")));
  ASSERT_EQ(t.calls.size(), 1u);
  EXPECT_EQ(t.messages[0], "abc");
  EXPECT_EQ(t.calls[0].path, "/t.S/Echo");
  f = t.take();
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].h.type, FrameType::Headers);
  EXPECT_EQ(f[0].h.stream, 1u);
  const auto h = decode(t.decoder, f[0].payload);
  EXPECT_EQ(header(h, ":status"), "200");
  EXPECT_EQ(header(h, "content-type"), "application/grpc");
  EXPECT_EQ(f[1].h.type, FrameType::Data);
  EXPECT_EQ(f[1].payload, std::string("\0\0\0\0\3cba", 8));
  EXPECT_EQ(f[2].h.type, FrameType::Headers);
  EXPECT_EQ(f[2].h.flags, flag::kEndHeaders | flag::kEndStream);
  EXPECT_EQ(header(decode(t.decoder, f[2].payload), "grpc-status"), "0");
  EXPECT_EQ(t.conn.open_streams(), 0u);

  // A second call on the same connection, its message split over two DATA frames.
  const std::string whole = message_data(3, "hello");
  std::string part1, part2;
  h2::append_frame_header(part1, 3, FrameType::Data, 0, 3);
  part1 += whole.substr(9, 3);
  h2::append_frame_header(part2, static_cast<uint32_t>(whole.size() - 12), FrameType::Data, flag::kEndStream, 3);
  part2 += whole.substr(12);
  ASSERT_TRUE(t.feed(request_headers(3, "/t.S/Echo") + part1));
  EXPECT_EQ(t.calls.size(), 1u);
  // Byte by byte: the connection must reassemble frames from any split.
  for (char c : part2) ASSERT_TRUE(t.feed(std::string(1, c)));
  ASSERT_EQ(t.calls.size(), 2u);
  EXPECT_EQ(t.messages[1], "hello");
}

TEST(GrpcH2Connection, GrpcTimeoutReachesTheHandler) {
  Harness t;
  ASSERT_TRUE(t.start());
  t.take();
  std::string block, frame;
  hpack::encode_indexed(block, 3);
  hpack::encode_indexed(block, 6);
  hpack::encode_literal_without_indexing(block, 4, "/t.S/Echo");
  hpack::encode_literal_without_indexing(block, 31, "application/grpc");
  hpack::encode_literal_without_indexing(block, "grpc-timeout", "250m");
  h2::append_frame_header(frame, static_cast<uint32_t>(block.size()), FrameType::Headers, flag::kEndHeaders, 1);
  ASSERT_TRUE(t.feed(frame + block + message_data(1, "q")));
  ASSERT_EQ(t.calls.size(), 1u);
  EXPECT_EQ(t.calls[0].timeout_ns, 250000000);
  EXPECT_GT(t.calls[0].received_ns, 0u);
}

TEST(GrpcH2Connection, ErrorsAreTrailersOnlyWithPercentEncodedMessage) {
  Harness t;
  ASSERT_TRUE(t.start());
  t.take();
  ASSERT_TRUE(t.feed(request_headers(1, "/t.S/Fail") + message_data(1, "x")));
  const auto f = t.take();
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].h.flags, flag::kEndHeaders | flag::kEndStream);
  const auto h = decode(t.decoder, f[0].payload);
  EXPECT_EQ(header(h, ":status"), "200");
  EXPECT_EQ(header(h, "grpc-status"), "3");
  EXPECT_EQ(header(h, "grpc-message"), "bad argument: 100%25 wrong%0A");
}

TEST(GrpcH2Connection, MalformedCallsGetGrpcErrorsNotTheHandler) {
  Harness t;
  ASSERT_TRUE(t.start());
  t.take();
  // Compressed message: UNIMPLEMENTED. Truncated length prefix: INTERNAL. Wrong content type: 415.
  ASSERT_TRUE(t.feed(request_headers(1, "/t.S/Echo") + message_data(1, "abc", true, 1)));
  std::string short_msg;
  h2::append_frame_header(short_msg, 5, FrameType::Data, flag::kEndStream, 3);
  short_msg += std::string("\0\0\0\0\x09", 5);
  ASSERT_TRUE(t.feed(request_headers(3, "/t.S/Echo") + short_msg));
  ASSERT_TRUE(t.feed(request_headers(5, "/t.S/Echo", "application/json") + message_data(5, "abc")));
  EXPECT_TRUE(t.calls.empty());
  std::vector<std::string> statuses;
  for (const auto& fr : t.take()) {
    if (fr.h.type != FrameType::Headers) continue;
    const auto h = decode(t.decoder, fr.payload);
    statuses.push_back(header(h, ":status") + "/" + header(h, "grpc-status"));
  }
  EXPECT_EQ(statuses, (std::vector<std::string>{"200/12", "200/13", "415/<absent>"}));
}

TEST(GrpcH2Connection, ResponseWaitsForTheClientsWindow) {
  Harness t;
  std::string settings;
  h2::append_settings(settings, {{h2::Setting::InitialWindowSize, 4}});
  ASSERT_TRUE(t.start(settings));
  t.take();
  ASSERT_TRUE(t.feed(request_headers(1, "/t.S/Echo") + message_data(1, "abcdefgh")));
  auto f = t.take();
  // HEADERS, then only 4 bytes of the 13-byte DATA; no trailers yet.
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[1].h.type, FrameType::Data);
  EXPECT_EQ(f[1].h.length, 4u);
  std::string wu;
  h2::append_window_update(wu, 1, 100);
  ASSERT_TRUE(t.feed(wu));
  f = t.take();
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].h.type, FrameType::Data);
  EXPECT_EQ(f[0].h.length, 9u);
  EXPECT_EQ(f[1].h.flags, flag::kEndHeaders | flag::kEndStream);
  EXPECT_EQ(t.conn.open_streams(), 0u);
}

TEST(GrpcH2Connection, PingIsAcknowledgedAndOversizedMessagesRefused) {
  GrpcH2Limits limits;
  limits.max_message_bytes = 10;
  Harness t(limits);
  ASSERT_TRUE(t.start());
  t.take();
  std::string ping;
  h2::append_frame_header(ping, 8, FrameType::Ping, 0, 0);
  ping += "12345678";
  ASSERT_TRUE(t.feed(ping));
  auto f = t.take();
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].h.flags, flag::kAck);
  EXPECT_EQ(f[0].payload, "12345678");
  ASSERT_TRUE(t.feed(request_headers(1, "/t.S/Echo") + message_data(1, std::string(50, 'x'), false)));
  f = t.take();
  ASSERT_EQ(f.size(), 2u);  // RESOURCE_EXHAUSTED trailers-only, then RST_STREAM(NO_ERROR)
  EXPECT_EQ(header(decode(t.decoder, f[0].payload), "grpc-status"), "8");
  EXPECT_EQ(f[1].h.type, FrameType::RstStream);
  EXPECT_TRUE(t.calls.empty());
  // More DATA for that stream is ignored, not an error.
  ASSERT_TRUE(t.feed(message_data(1, "more")));
}

TEST(GrpcH2Connection, StreamingCallStaysOpenAndSendsOnlyChanges) {
  std::string status = "A";
  GrpcH2Connection conn({}, [&](const GrpcCall& c, GrpcReply& r) {
    r.body = status + std::string(c.message);
    r.keep_open = true;
  });
  hpack::Decoder decoder;
  std::string in(h2::kClientPreface);
  h2::append_settings(in, {});
  in += request_headers(1, "/t.S/Watch") + message_data(1, "x");
  ASSERT_TRUE(conn.receive(reinterpret_cast<const uint8_t*>(in.data()), in.size()));
  auto take = [&] {
    auto f = frames_of(conn.output());
    conn.output().clear();
    return f;
  };
  auto f = take();
  ASSERT_GE(f.size(), 2u);
  EXPECT_EQ(f[f.size() - 2].h.type, FrameType::Headers);
  EXPECT_EQ(f.back().h.type, FrameType::Data);
  EXPECT_EQ(f.back().h.flags & flag::kEndStream, 0);
  EXPECT_EQ(f.back().payload, std::string("\0\0\0\0\2Ax", 7));
  EXPECT_EQ(conn.open_streams(), 1u);
  conn.refresh_open_streams();  // unchanged: nothing sent
  EXPECT_TRUE(conn.output().empty());
  status = "B";
  conn.refresh_open_streams();
  f = take();
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].payload, std::string("\0\0\0\0\2Bx", 7));
  // The client cancels: the stream is gone and nothing more is sent.
  std::string rst;
  h2::append_rst_stream(rst, 1, h2::ErrorCode::Cancel);
  ASSERT_TRUE(conn.receive(reinterpret_cast<const uint8_t*>(rst.data()), rst.size()));
  EXPECT_EQ(conn.open_streams(), 0u);
  status = "C";
  conn.refresh_open_streams();
  EXPECT_TRUE(conn.output().empty());
}

TEST(GrpcH2Connection, ProtocolViolationsCloseWithGoaway) {
  struct Case {
    const char* name;
    std::string bytes;
  };
  std::vector<Case> cases;
  {
    std::string b;
    h2::append_frame_header(b, 20000, FrameType::Data, 0, 1);
    cases.push_back({"frame larger than 16384", b + std::string(20000, 'x')});
  }
  {
    std::string b;
    h2::append_frame_header(b, 5, FrameType::Data, 0, 7);
    cases.push_back({"DATA on an idle stream", b + "hello"});
  }
  cases.push_back({"even stream id", request_headers(2, "/t.S/Echo")});
  {
    std::string b;
    h2::append_frame_header(b, 1, FrameType::Continuation, flag::kEndHeaders, 1);
    cases.push_back({"CONTINUATION without HEADERS", b + "x"});
  }
  {
    std::string b = request_headers(1, "/t.S/Echo");
    b[4] = 0;  // HEADERS without END_HEADERS...
    h2::append_frame_header(b, 0, FrameType::Data, 0, 1);  // ...followed by something else
    cases.push_back({"frame inside a header block", b});
  }
  {
    std::string b;
    h2::append_frame_header(b, 3, FrameType::Headers, flag::kEndHeaders, 1);
    cases.push_back({"bad HPACK", b + std::string("\x80\x80\x80", 3)});
  }
  {
    std::string b;
    h2::append_frame_header(b, 7, FrameType::Settings, 0, 0);
    cases.push_back({"SETTINGS length", b + "1234567"});
  }
  {
    std::string b;
    h2::append_window_update(b, 0, 0x7fffffff);
    h2::append_window_update(b, 0, 0x7fffffff);
    cases.push_back({"window overflow", b});
  }
  {
    std::string b;
    h2::append_frame_header(b, 4, FrameType::PushPromise, flag::kEndHeaders, 1);
    cases.push_back({"PUSH_PROMISE from a client", b + std::string("\0\0\0\2", 4)});
  }
  for (const Case& c : cases) {
    Harness t;
    ASSERT_TRUE(t.start());
    t.take();
    EXPECT_FALSE(t.feed(c.bytes)) << c.name;
    const auto f = t.take();
    ASSERT_FALSE(f.empty()) << c.name;
    EXPECT_EQ(f.back().h.type, FrameType::Goaway) << c.name;
    EXPECT_FALSE(t.conn.error().empty()) << c.name;
    EXPECT_TRUE(t.calls.empty()) << c.name;
  }
  // Not HTTP/2 at all (an HTTP/1.1 request to the gRPC port).
  Harness t;
  EXPECT_FALSE(t.feed("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_NE(t.conn.error().find("preface"), std::string::npos);
}

}  // namespace
