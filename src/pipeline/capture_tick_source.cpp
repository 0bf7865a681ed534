#include "pipeline/capture_tick_source.hpp"

namespace tickinfer::pipeline {

std::unique_ptr<CaptureTickSource> CaptureTickSource::open(const std::string& path) {
  auto src = std::make_unique<CaptureTickSource>();
  const feed::CaptureContents cap = feed::read_capture(path);
  src->stats_ = feed::sequence_capture(cap, [&](const md::Event& ev, std::uint64_t seq, std::int64_t) {
    src->events_.push_back(ev);
    src->seqs_.push_back(static_cast<std::int64_t>(seq));
  });
  return src;
}

bool CaptureTickSource::next(features::SourceTick& out) {
  if (pos_ >= events_.size()) return false;
  out.event = events_[pos_];
  out.flaw = features::InvalidReason::None;  // the wire format cannot carry NaN or negative sizes
  out.line = seqs_[pos_];                    // position = the message's sequence number
  ++pos_;
  return true;
}

}  // namespace tickinfer::pipeline
