// HTTP/2 frame header reading and the writers of the control frames (h2_frames.hpp).
#include "serving/h2/h2_frames.hpp"

namespace tickinfer::serving::h2 {

FrameHeader read_frame_header(const uint8_t* p) noexcept {
  FrameHeader h;
  h.length = (uint32_t{p[0]} << 16) | (uint32_t{p[1]} << 8) | p[2];
  h.type = static_cast<FrameType>(p[3]);
  h.flags = p[4];
  h.stream = ((uint32_t{p[5]} << 24) | (uint32_t{p[6]} << 16) | (uint32_t{p[7]} << 8) | p[8]) & 0x7fffffffu;
  return h;
}

void append_u32(std::string& out, uint32_t v) {
  const char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                     static_cast<char>(v)};
  out.append(b, 4);
}

void append_frame_header(std::string& out, uint32_t length, FrameType type, uint8_t flags, uint32_t stream) {
  const char b[5] = {static_cast<char>(length >> 16), static_cast<char>(length >> 8), static_cast<char>(length),
                     static_cast<char>(type), static_cast<char>(flags)};
  out.append(b, 5);
  append_u32(out, stream & 0x7fffffffu);
}

void append_settings(std::string& out, std::initializer_list<std::pair<Setting, uint32_t>> settings) {
  append_frame_header(out, static_cast<uint32_t>(6 * settings.size()), FrameType::Settings, 0, 0);
  for (const auto& [id, value] : settings) {
    const auto v = static_cast<uint16_t>(id);
    out += static_cast<char>(v >> 8);
    out += static_cast<char>(v);
    append_u32(out, value);
  }
}

void append_settings_ack(std::string& out) { append_frame_header(out, 0, FrameType::Settings, flag::kAck, 0); }

void append_ping_ack(std::string& out, const uint8_t opaque[8]) {
  append_frame_header(out, 8, FrameType::Ping, flag::kAck, 0);
  out.append(reinterpret_cast<const char*>(opaque), 8);
}

void append_window_update(std::string& out, uint32_t stream, uint32_t increment) {
  append_frame_header(out, 4, FrameType::WindowUpdate, 0, stream);
  append_u32(out, increment & 0x7fffffffu);
}

void append_rst_stream(std::string& out, uint32_t stream, ErrorCode code) {
  append_frame_header(out, 4, FrameType::RstStream, 0, stream);
  append_u32(out, static_cast<uint32_t>(code));
}

void append_goaway(std::string& out, uint32_t last_stream, ErrorCode code, std::string_view debug) {
  append_frame_header(out, static_cast<uint32_t>(8 + debug.size()), FrameType::Goaway, 0, 0);
  append_u32(out, last_stream & 0x7fffffffu);
  append_u32(out, static_cast<uint32_t>(code));
  out.append(debug);
}

}  // namespace tickinfer::serving::h2
