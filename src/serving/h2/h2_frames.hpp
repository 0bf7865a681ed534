#pragma once
// HTTP/2 framing (RFC 9113 section 4 and 6): the 9-byte frame header, frame types, flags,
// settings identifiers and error codes, and writers for the frames a server sends. Reading is in
// grpc_h2_connection.cpp, which checks every length against the negotiated limits.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tickinfer::serving::h2 {

inline constexpr std::string_view kClientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
inline constexpr size_t kFrameHeaderBytes = 9;
inline constexpr uint32_t kDefaultWindow = 65535;
inline constexpr uint32_t kDefaultMaxFrame = 16384;
inline constexpr uint32_t kMaxWindow = 0x7fffffff;

enum class FrameType : uint8_t {
  Data = 0x0,
  Headers = 0x1,
  Priority = 0x2,
  RstStream = 0x3,
  Settings = 0x4,
  PushPromise = 0x5,
  Ping = 0x6,
  Goaway = 0x7,
  WindowUpdate = 0x8,
  Continuation = 0x9,
};

namespace flag {
inline constexpr uint8_t kEndStream = 0x1;
inline constexpr uint8_t kAck = 0x1;
inline constexpr uint8_t kEndHeaders = 0x4;
inline constexpr uint8_t kPadded = 0x8;
inline constexpr uint8_t kPriority = 0x20;
}  // namespace flag

enum class Setting : uint16_t {
  HeaderTableSize = 0x1,
  EnablePush = 0x2,
  MaxConcurrentStreams = 0x3,
  InitialWindowSize = 0x4,
  MaxFrameSize = 0x5,
  MaxHeaderListSize = 0x6,
};

enum class ErrorCode : uint32_t {
  NoError = 0x0,
  ProtocolError = 0x1,
  InternalError = 0x2,
  FlowControlError = 0x3,
  StreamClosed = 0x5,
  FrameSizeError = 0x6,
  RefusedStream = 0x7,
  Cancel = 0x8,
  CompressionError = 0x9,
  EnhanceYourCalm = 0xb,
};

struct FrameHeader {
  uint32_t length = 0;
  FrameType type = FrameType::Data;
  uint8_t flags = 0;
  uint32_t stream = 0;
};

// Reads a frame header from 9 bytes (the reserved bit of the stream id is ignored, as the RFC says).
FrameHeader read_frame_header(const uint8_t* p) noexcept;
void append_frame_header(std::string& out, uint32_t length, FrameType type, uint8_t flags, uint32_t stream);
void append_u32(std::string& out, uint32_t v);

void append_settings(std::string& out, std::initializer_list<std::pair<Setting, uint32_t>> settings);
void append_settings_ack(std::string& out);
void append_ping_ack(std::string& out, const uint8_t opaque[8]);
void append_window_update(std::string& out, uint32_t stream, uint32_t increment);
void append_rst_stream(std::string& out, uint32_t stream, ErrorCode code);
void append_goaway(std::string& out, uint32_t last_stream, ErrorCode code, std::string_view debug);

}  // namespace tickinfer::serving::h2
