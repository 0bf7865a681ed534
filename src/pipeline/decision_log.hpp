#pragma once
// The decision log: an append-only file of checksummed records, one per signal, from which every
// decision can be explained and re-run (tickinfer replay). Byte layout: docs/pipeline.md
// ("Decision log").
//
//   file   = "TKDLOG01" record*
//   record = u32 payload_bytes, u32 crc32(payload), payload        (little-endian)
//   payload: u8 type (1 = model declaration, 2 = decision), then the type's fields.
//
// Writer: records are appended to a buffer allocated once (no allocation, no syscall per record
// unless the flush policy is Record); the buffer is written with write(2) by the flush policy
// (maybe_flush), so a crash (kill -9) loses at most what was not yet written. Records are whole
// inside a write, so a torn record can only come from the disk/OS (power loss) or a partial write;
// the reader detects it by length and CRC and stops there, reporting how many bytes it skipped.
//
// Errors: the writer's constructor throws tickinfer::Error (cannot create); after that write
// failures are counted (write_errors, with the errno of the latest in last_write_errno), never
// thrown: the Pipeline reports them (run report, end-of-run summary, status line, metrics).
// read_decision_log throws tickinfer::Error for an unreadable file or a bad file header; a bad or
// torn record ends the read and is reported in DecisionLogContents (the records before it are kept).
#include <atomic>
#include <cstdint>
#include <thread>
#include <string>
#include <vector>

#include "pipeline/config.hpp"
#include "pipeline/signal_format.hpp"

namespace tickinfer::pipeline {

struct LoggedModel {
  std::uint16_t index = 0;
  std::uint32_t version = 0;
  std::uint32_t input_size = 0;  // floats per model run
  std::uint8_t trigger = 0;      // ModelTrigger
  double center = 0, threshold = 0;
  std::string name, path;
};

struct DecisionRecord {
  std::uint16_t model = 0;         // LoggedModel::index
  std::uint32_t instrument = 0;
  std::int64_t wall_ns = 0;        // signal sent, CLOCK_REALTIME
  std::uint64_t tick_seq = 0;
  std::uint64_t signal_seq = 0;
  std::int64_t exchange_ts_ns = 0;
  std::uint32_t latency_ns = 0;    // kernel receive -> signal sent
  std::int8_t decision = 0;
  std::uint8_t score_count = 0;
  float scores[kMaxScores] = {};
  std::uint64_t input_fingerprint = 0;  // fingerprint() of the exact input floats
  std::vector<float> inputs;            // empty when only the fingerprint was logged
};

class DecisionLogWriter {
 public:
  // writer_thread (Interval / Exit policies): the write(2) calls run on a writer thread of their
  // own, so the thread that appends never makes the syscall. Two buffers: the appending thread
  // fills one while the writer writes the other; a flush that finds the writer still busy keeps
  // appending, and only a full buffer waits for it (counted in writer_waits). The writer polls
  // every 200 us, so a handed-off buffer reaches the file within about that.
  // join: add to the log another writer of the same run created (its file header and model
  // declarations are there): each compute agent has its own writer, all append to one file.
  DecisionLogWriter(const std::string& path, FlushPolicy policy, std::int64_t interval_ns, bool fsync,
                    std::size_t buffer_bytes, bool writer_thread = false, bool join = false);
  ~DecisionLogWriter();  // flushes
  DecisionLogWriter(const DecisionLogWriter&) = delete;
  DecisionLogWriter& operator=(const DecisionLogWriter&) = delete;

  void declare(const LoggedModel& m);  // set-up time (allocates); written through at once
  // Hot path. inputs may be nullptr (fingerprint only). now_ns: the caller's clock for the flush
  // interval (the pipeline's: its agents' clock). Under Record the record is written before returning.
  void append(const DecisionRecord& r, const float* inputs, std::uint32_t input_count, std::int64_t now_ns) noexcept;
  // Interval policy: writes the buffer when it is older than the interval (or half full).
  void maybe_flush(std::int64_t now_ns) noexcept;
  void flush() noexcept;

  std::uint64_t records() const noexcept { return records_; }
  std::uint64_t bytes_written() const noexcept { return bytes_written_.load(); }
  std::uint64_t flushes() const noexcept { return flushes_; }
  std::uint64_t write_errors() const noexcept { return write_errors_.load(); }  // any thread
  int last_write_errno() const noexcept { return last_errno_.load(std::memory_order_relaxed); }  // 0: none
  std::uint64_t dropped() const noexcept { return dropped_; }  // a record larger than the buffer
  std::uint64_t writer_waits() const noexcept { return writer_waits_; }

 private:
  void put_record(const std::uint8_t* payload, std::uint32_t n) noexcept;
  void write_out(const std::uint8_t* data, std::size_t n) noexcept;
  bool hand_off(bool wait) noexcept;  // background: give the active buffer to the writer
  void writer_loop() noexcept;
  int fd_ = -1;
  std::string path_;
  FlushPolicy policy_;
  std::int64_t interval_ns_;
  bool fsync_;
  std::vector<std::uint8_t> buf_;
  std::size_t used_ = 0;
  std::int64_t oldest_ns_ = 0;  // when the first unwritten record was appended
  std::vector<std::uint8_t> scratch_;
  std::uint64_t records_ = 0, flushes_ = 0, dropped_ = 0, writer_waits_ = 0;
  std::atomic<std::uint64_t> bytes_written_{0}, write_errors_{0};
  std::atomic<int> last_errno_{0};
  // Background writer.
  bool background_ = false;
  std::vector<std::uint8_t> spare_;      // the buffer the writer owns while pending_
  std::size_t pending_len_ = 0;
  std::atomic<bool> pending_{false};
  std::atomic<bool> stop_{false};
  std::thread writer_;
};

struct DecisionLogContents {
  std::vector<LoggedModel> models;
  std::vector<DecisionRecord> decisions;
  std::uint64_t valid_bytes = 0;      // file bytes up to the end of the last good record
  std::uint64_t file_bytes = 0;
  bool torn_tail = false;             // bytes after the last good record (truncated or corrupt)
  std::string tail_problem;           // what was wrong there
};

DecisionLogContents read_decision_log(const std::string& path);
// The same over bytes in memory (tests, fuzzing); `name` for messages.
DecisionLogContents parse_decision_log(const std::uint8_t* data, std::size_t len, const std::string& name);

}  // namespace tickinfer::pipeline
