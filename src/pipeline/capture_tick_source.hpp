#pragma once
// A capture file (`tickinfer feed record`) as a tick source for `tickinfer features`: the recorded
// A/B datagrams are sequenced and arbitrated offline (feed/capture_events.hpp), so research sees
// exactly the ordered, de-duplicated stream the live feed delivered.
#include <memory>
#include <string>
#include <vector>

#include "features/tick_source.hpp"
#include "feed/capture_events.hpp"

namespace tickinfer::pipeline {

class CaptureTickSource final : public features::TickSource {
 public:
  // Reads and sequences the whole file. Throws tickinfer::Error if it is not a capture file;
  // damage inside it is counted in stats(), never thrown.
  static std::unique_ptr<CaptureTickSource> open(const std::string& path);
  bool next(features::SourceTick& out) override;
  const feed::CaptureSequenceStats& stats() const noexcept { return stats_; }

 private:
  std::vector<md::Event> events_;
  std::vector<std::int64_t> seqs_;
  std::size_t pos_ = 0;
  feed::CaptureSequenceStats stats_;
};

}  // namespace tickinfer::pipeline
