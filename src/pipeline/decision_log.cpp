#include "pipeline/decision_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>

#include "stats/crc32.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::pipeline {
namespace {

constexpr char kFileMagic[8] = {'T', 'K', 'D', 'L', 'O', 'G', '0', '1'};
constexpr std::uint8_t kTypeModel = 1;
constexpr std::uint8_t kTypeDecision = 2;
constexpr std::uint32_t kMaxPayload = 16u << 20;  // a decision with 4M input floats is not sane

struct Out {
  std::uint8_t* p;
  template <typename T>
  void put(T v) noexcept {
    std::uint64_t u = 0;
    std::memcpy(&u, &v, sizeof(T));
    for (std::size_t i = 0; i < sizeof(T); ++i) *p++ = static_cast<std::uint8_t>(u >> (8 * i));
  }
  void bytes(const void* b, std::size_t n) noexcept {
    std::memcpy(p, b, n);
    p += n;
  }
};

struct In {
  const std::uint8_t* p;
  const std::uint8_t* end;
  bool ok = true;
  template <typename T>
  T get() noexcept {
    if (static_cast<std::size_t>(end - p) < sizeof(T)) {
      ok = false;
      return T{};
    }
    std::uint64_t u = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) u |= static_cast<std::uint64_t>(p[i]) << (8 * i);
    p += sizeof(T);
    T v;
    std::memcpy(&v, &u, sizeof(T));
    return v;
  }
  std::string str() {
    const auto n = get<std::uint16_t>();
    if (!ok || static_cast<std::size_t>(end - p) < n) {
      ok = false;
      return {};
    }
    std::string s(reinterpret_cast<const char*>(p), n);
    p += n;
    return s;
  }
};

bool write_all(int fd, const std::uint8_t* p, std::size_t n) noexcept {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

// Fixed part of a decision payload, before scores and inputs.
constexpr std::size_t kDecisionFixed = 1 + 1 + 1 + 2 + 4 + 8 + 8 + 8 + 8 + 4 + 8 + 4;

}  // namespace

DecisionLogWriter::DecisionLogWriter(const std::string& path, FlushPolicy policy, std::int64_t interval_ns,
                                     bool fsync, std::size_t buffer_bytes, bool writer_thread, bool join)
    : path_(path), policy_(policy), interval_ns_(interval_ns), fsync_(fsync),
      background_(writer_thread && policy != FlushPolicy::Record) {
  // O_APPEND: every write(2) lands at the end of the file, so several writers of one run (one per
  // compute agent) add whole buffers of records and never overwrite each other's.
  fd_ = join ? ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC)
             : ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error("decision log '" + path + "': cannot " + (join ? "open" : "create") + ": " + std::strerror(errno));
  buf_.assign(buffer_bytes, 0);
  scratch_.assign(buffer_bytes, 0);
  if (!join) {
    if (!write_all(fd_, reinterpret_cast<const std::uint8_t*>(kFileMagic), 8))
      throw Error("decision log '" + path + "': write failed: " + std::strerror(errno));
    bytes_written_ = 8;
  }
  if (background_) {
    spare_.assign(buffer_bytes, 0);
    writer_ = std::thread([this] { writer_loop(); });
  }
}

DecisionLogWriter::~DecisionLogWriter() {
  flush();
  if (background_) {
    while (pending_.load(std::memory_order_acquire)) std::this_thread::sleep_for(std::chrono::microseconds(50));
    stop_.store(true);
    writer_.join();
  }
  if (fd_ >= 0) ::close(fd_);
}

void DecisionLogWriter::write_out(const std::uint8_t* data, std::size_t n) noexcept {
  if (write_all(fd_, data, n)) {
    bytes_written_.fetch_add(n, std::memory_order_relaxed);
    if (fsync_) ::fdatasync(fd_);
  } else {
    last_errno_.store(errno, std::memory_order_relaxed);
    write_errors_.fetch_add(1, std::memory_order_relaxed);
  }
}

void DecisionLogWriter::writer_loop() noexcept {
  for (;;) {
    if (pending_.load(std::memory_order_acquire)) {
      write_out(spare_.data(), pending_len_);
      pending_.store(false, std::memory_order_release);
      continue;
    }
    if (stop_.load(std::memory_order_acquire)) return;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

bool DecisionLogWriter::hand_off(bool wait) noexcept {
  if (pending_.load(std::memory_order_acquire)) {
    if (!wait) return false;
    ++writer_waits_;
    while (pending_.load(std::memory_order_acquire)) {
    }
  }
  buf_.swap(spare_);  // swaps the vectors' storage pointers: no allocation
  pending_len_ = used_;
  pending_.store(true, std::memory_order_release);
  used_ = 0;
  return true;
}

void DecisionLogWriter::put_record(const std::uint8_t* payload, std::uint32_t n) noexcept {
  if (8 + static_cast<std::size_t>(n) > buf_.size()) {
    ++dropped_;
    return;
  }
  if (used_ + 8 + n > buf_.size()) {
    if (background_) hand_off(true);
    else flush();
  }
  Out o{buf_.data() + used_};
  o.put<std::uint32_t>(n);
  o.put<std::uint32_t>(stats::crc32(payload, n));
  o.bytes(payload, n);
  used_ += 8 + n;
  ++records_;
}

void DecisionLogWriter::declare(const LoggedModel& m) {
  std::vector<std::uint8_t> p(64 + m.name.size() + m.path.size());
  Out o{p.data()};
  o.put<std::uint8_t>(kTypeModel);
  o.put<std::uint16_t>(m.index);
  o.put<std::uint32_t>(m.version);
  o.put<std::uint32_t>(m.input_size);
  o.put<std::uint8_t>(m.trigger);
  o.put<double>(m.center);
  o.put<double>(m.threshold);
  o.put<std::uint16_t>(static_cast<std::uint16_t>(m.name.size()));
  o.bytes(m.name.data(), m.name.size());
  o.put<std::uint16_t>(static_cast<std::uint16_t>(m.path.size()));
  o.bytes(m.path.data(), m.path.size());
  put_record(p.data(), static_cast<std::uint32_t>(o.p - p.data()));
  flush();
}

void DecisionLogWriter::append(const DecisionRecord& r, const float* inputs, std::uint32_t input_count,
                               std::int64_t now_ns) noexcept {
  const std::uint32_t n_in = inputs ? input_count : 0;
  const std::size_t n = kDecisionFixed + 4 * static_cast<std::size_t>(r.score_count) + 4 * static_cast<std::size_t>(n_in);
  if (n > scratch_.size()) {
    ++dropped_;
    return;
  }
  Out o{scratch_.data()};
  o.put<std::uint8_t>(kTypeDecision);
  o.put<std::int8_t>(r.decision);
  o.put<std::uint8_t>(r.score_count);
  o.put<std::uint16_t>(r.model);
  o.put<std::uint32_t>(r.instrument);
  o.put<std::int64_t>(r.wall_ns);
  o.put<std::uint64_t>(r.tick_seq);
  o.put<std::uint64_t>(r.signal_seq);
  o.put<std::int64_t>(r.exchange_ts_ns);
  o.put<std::uint32_t>(r.latency_ns);
  o.put<std::uint64_t>(r.input_fingerprint);
  o.put<std::uint32_t>(n_in);
  for (int i = 0; i < r.score_count; ++i) o.put<float>(r.scores[i]);
  for (std::uint32_t i = 0; i < n_in; ++i) o.put<float>(inputs[i]);
  if (used_ == 0) oldest_ns_ = now_ns;
  put_record(scratch_.data(), static_cast<std::uint32_t>(n));
  if (policy_ == FlushPolicy::Record) flush();
}

void DecisionLogWriter::maybe_flush(std::int64_t now_ns) noexcept {
  if (used_ == 0 || policy_ != FlushPolicy::Interval) return;
  if (now_ns - oldest_ns_ >= interval_ns_ || used_ * 2 >= buf_.size()) {
    if (background_) {
      if (hand_off(false)) ++flushes_;  // writer busy: keep appending, try again next time
    } else {
      flush();
    }
  }
}

void DecisionLogWriter::flush() noexcept {
  if (used_ == 0 || fd_ < 0) return;
  ++flushes_;
  if (background_) {
    hand_off(true);
    return;
  }
  write_out(buf_.data(), used_);
  used_ = 0;
}

DecisionLogContents parse_decision_log(const std::uint8_t* data, std::size_t len, const std::string& name) {
  DecisionLogContents c;
  c.file_bytes = len;
  if (len < 8 || std::memcmp(data, kFileMagic, 8) != 0)
    throw Error("decision log '" + name + "': not a tickinfer decision log (bad file header)");
  std::size_t pos = 8;
  c.valid_bytes = 8;
  while (pos < len) {
    auto torn = [&](const std::string& why) {
      c.torn_tail = true;
      c.tail_problem = why + " at byte " + std::to_string(pos) + " (" + std::to_string(len - pos) +
                       " bytes skipped)";
    };
    if (len - pos < 8) { torn("truncated record header"); break; }
    In h{data + pos, data + len};
    const auto n = h.get<std::uint32_t>();
    const auto crc = h.get<std::uint32_t>();
    if (n == 0 || n > kMaxPayload) { torn("implausible record length " + std::to_string(n)); break; }
    if (len - pos - 8 < n) { torn("truncated record"); break; }
    const std::uint8_t* p = data + pos + 8;
    if (stats::crc32(p, n) != crc) { torn("checksum mismatch"); break; }
    In in{p, p + n};
    const auto type = in.get<std::uint8_t>();
    if (type == kTypeModel) {
      LoggedModel m;
      m.index = in.get<std::uint16_t>();
      m.version = in.get<std::uint32_t>();
      m.input_size = in.get<std::uint32_t>();
      m.trigger = in.get<std::uint8_t>();
      m.center = in.get<double>();
      m.threshold = in.get<double>();
      m.name = in.str();
      m.path = in.str();
      if (!in.ok) { torn("malformed model record"); break; }
      c.models.push_back(std::move(m));
    } else if (type == kTypeDecision) {
      DecisionRecord r;
      r.decision = in.get<std::int8_t>();
      r.score_count = in.get<std::uint8_t>();
      r.model = in.get<std::uint16_t>();
      r.instrument = in.get<std::uint32_t>();
      r.wall_ns = in.get<std::int64_t>();
      r.tick_seq = in.get<std::uint64_t>();
      r.signal_seq = in.get<std::uint64_t>();
      r.exchange_ts_ns = in.get<std::int64_t>();
      r.latency_ns = in.get<std::uint32_t>();
      r.input_fingerprint = in.get<std::uint64_t>();
      const auto n_in = in.get<std::uint32_t>();
      if (!in.ok || r.score_count > kMaxScores ||
          static_cast<std::size_t>(in.end - in.p) != 4 * (static_cast<std::size_t>(r.score_count) + n_in)) {
        torn("malformed decision record");
        break;
      }
      for (int i = 0; i < r.score_count; ++i) r.scores[i] = in.get<float>();
      r.inputs.resize(n_in);
      for (std::uint32_t i = 0; i < n_in; ++i) r.inputs[i] = in.get<float>();
      c.decisions.push_back(std::move(r));
    } else {
      torn("unknown record type " + std::to_string(type));
      break;
    }
    pos += 8 + n;
    c.valid_bytes = pos;
  }
  return c;
}

DecisionLogContents read_decision_log(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("decision log '" + path + "': cannot open");
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return parse_decision_log(bytes.data(), bytes.size(), path);
}

}  // namespace tickinfer::pipeline
