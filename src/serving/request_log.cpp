#include "serving/request_log.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>

#include "serving/json_writer.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::serving {

uint64_t fnv1a64(std::string_view bytes) noexcept {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

RequestLog::RequestLog(const std::string& path, double sample_rate, size_t workers) {
  if (!(sample_rate > 0 && sample_rate <= 1)) {
    throw Error("request log sample rate must be in (0, 1], got " + std::to_string(sample_rate));
  }
  every_ = static_cast<uint64_t>(std::llround(1.0 / sample_rate));
  if (every_ == 0) every_ = 1;
  file_ = std::fopen(path.c_str(), "a");
  if (!file_) throw Error("cannot open request log '" + path + "': " + std::strerror(errno));
  for (size_t i = 0; i < (workers ? workers : 1); ++i) rings_.push_back(std::make_unique<Ring>());
  line_.reserve(1 << 16);
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
      cv_.wait_for(lock, std::chrono::milliseconds(20));
      drain_locked();
    }
  });
}

RequestLog::~RequestLog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  drain_locked();
  if (dropped()) std::fprintf(file_, "{\"dropped\":%llu}\n", static_cast<unsigned long long>(dropped()));
  std::fclose(file_);
}

bool RequestLog::sample(size_t worker) noexcept {
  Ring& r = *rings_[worker];
  return (r.counter++ % every_) == 0;
}

void RequestLog::record(size_t worker, const RequestLogEntry& e) noexcept {
  Ring& r = *rings_[worker];
  const uint64_t head = r.head.load(std::memory_order_relaxed);
  if (head - r.tail.load(std::memory_order_acquire) >= kRing) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  r.slots[head & (kRing - 1)] = e;
  r.head.store(head + 1, std::memory_order_release);
}

void RequestLog::flush() {
  std::lock_guard<std::mutex> lock(mutex_);
  drain_locked();
}

void RequestLog::drain_locked() {
  for (auto& rp : rings_) {
    Ring& r = *rp;
    uint64_t tail = r.tail.load(std::memory_order_relaxed);
    const uint64_t head = r.head.load(std::memory_order_acquire);
    line_.clear();
    for (; tail != head; ++tail) {
      const RequestLogEntry& e = r.slots[tail & (kRing - 1)];
      const time_t secs = static_cast<time_t>(e.wall_ns / 1000000000);
      tm utc{};
      gmtime_r(&secs, &utc);
      char ts[64];
      std::snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", utc.tm_year + 1900, utc.tm_mon + 1,
                    utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                    static_cast<long long>((e.wall_ns % 1000000000) / 1000));
      char fp[17];
      std::snprintf(fp, sizeof fp, "%016llx", static_cast<unsigned long long>(e.fingerprint));
      line_ += "{\"time\":\"";
      line_ += ts;
      line_ += "\",\"model\":";
      append_json_string(line_, e.model ? *e.model : std::string());
      line_ += ",\"version\":";
      append_json_int(line_, e.version);
      line_ += ",\"status\":\"";
      line_ += status_code_name(e.status);
      char nums[160];
      std::snprintf(nums, sizeof nums, "\",\"queue_us\":%.3f,\"compute_us\":%.3f,\"total_us\":%.3f,",
                    e.queue_ns / 1e3, e.compute_ns / 1e3, e.total_ns / 1e3);
      line_ += nums;
      line_ += "\"input_fingerprint\":\"";
      line_ += fp;
      line_ += "\"}\n";
    }
    r.tail.store(tail, std::memory_order_release);
    if (!line_.empty()) std::fwrite(line_.data(), 1, line_.size(), file_);
  }
  std::fflush(file_);
}

}  // namespace tickinfer::serving
