// libFuzzer: arbitrary datagrams through the MoldUDP64 parser, the message decoder, the
// re-request parser and a sequencer. Invariants are checked with __builtin_trap (a crash the
// fuzzer reports): an accepted packet's blocks exactly tile its payload and never leave it.
#include <cstddef>
#include <cstdint>

#include "feed/messages.hpp"
#include "feed/moldudp64.hpp"
#include "feed/sequencer.hpp"

namespace {
struct NullSink : tickinfer::feed::SequencerSink {
  void on_message(std::uint64_t, const std::uint8_t* m, std::uint16_t len, const tickinfer::feed::RxMeta&,
                  std::int64_t) noexcept override {
    volatile std::uint8_t sink = 0;
    for (std::uint16_t i = 0; i < len; ++i) sink = sink ^ m[i];
  }
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tickinfer::feed;
  static NullSink sink;
  static Sequencer seq([] {
    SequencerConfig c;
    c.window = 64;
    c.far_future_limit = 1 << 20;
    return c;
  }(), sink);
  static std::int64_t now = 0;
  PacketView v;
  const ParseStatus st = parse_packet(data, size, v, 64, 1500);
  if (st == ParseStatus::Ok) {
    if (v.blocks < data || v.blocks + v.blocks_len > data + size) __builtin_trap();
    MessageCursor c(v);
    const std::uint8_t* m;
    std::uint16_t len;
    std::size_t n = 0, bytes = 0;
    while (c.next(m, len)) {
      if (m < data || m + len > data + size || len > 64) __builtin_trap();
      {
        tickinfer::md::Event e;
        (void)decode_message(m, len, e);
      }
      ++n;
      bytes += 2u + len;
    }
    if (n != v.count || bytes != v.blocks_len) __builtin_trap();
    seq.on_packet(v, RxMeta{now, 0}, now);
    now += 1000;
    seq.poll(now);
  }
  Session s;
  std::uint64_t first;
  std::uint16_t count;
  (void)parse_request(data, size, s, first, count);
  return 0;
}
