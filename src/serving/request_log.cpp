#include "serving/request_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "stats/crc32.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::serving {

namespace {

constexpr uint8_t kTypeRequest = 1, kTypeSummary = 2;
constexpr size_t kMaxMessage = 512;  // bytes of an error's text kept
constexpr size_t kFixedBytes = 5 + 6 * 8 + 4;  // type..flags, wall..fingerprint, batch

uint64_t every(double rate) {
  if (!(rate > 0)) return 0;
  const auto k = static_cast<uint64_t>(std::llround(1.0 / rate));
  return k == 0 ? 1 : k;
}

size_t pow2_at_least(size_t n) {
  size_t p = 4096;
  while (p < n) p <<= 1;
  return p;
}

std::string_view clip(std::string_view s, size_t n) { return s.size() > n ? s.substr(0, n) : s; }

size_t heads_bytes(const std::vector<TensorSpec>* specs) {
  size_t n = 1;
  if (specs) {
    for (const auto& t : *specs) n += 2 + clip(t.name, 0xffff).size() + 4;
  }
  return n;
}

size_t values_bytes(const std::vector<TensorSpec>* specs, uint32_t batch) {
  size_t n = 0;
  if (specs) {
    for (const auto& t : *specs) n += sizeof(float) * t.size * batch;
  }
  return n;
}

}  // namespace

uint64_t input_fingerprint(const std::vector<TensorSpec>& specs, const float* const* inputs, size_t batch) noexcept {
  uint64_t h = kFnvOffset;
  for (size_t i = 0; i < specs.size(); ++i) h = fnv1a64(inputs[i], sizeof(float) * specs[i].size * batch, h);
  return h;
}

RequestLog::RequestLog(const std::string& path, const RequestLogOptions& o, size_t rings) : path_(path) {
  if (!(o.sample_rate > 0 && o.sample_rate <= 1)) {
    throw Error("request log sample rate must be in (0, 1], got " + std::to_string(o.sample_rate));
  }
  if (!(o.inputs_rate >= 0 && o.inputs_rate <= 1)) {
    throw Error("request log inputs rate must be in [0, 1], got " + std::to_string(o.inputs_rate));
  }
  calls_every_ = every(o.sample_rate);
  inputs_every_ = every(o.inputs_rate);
  ring_bytes_ = pow2_at_least(o.ring_bytes);
  open_file(path);
  for (size_t i = 0; i < (rings ? rings : 1); ++i) rings_.push_back(std::make_unique<Ring>(ring_bytes_));
  out_.reserve(ring_bytes_);
  if (!o.writer_thread) return;
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
      cv_.wait_for(lock, std::chrono::milliseconds(20));
      drain_locked();
    }
  });
}

// Appends to an existing log only after checking it is one, cutting off a torn last record.
void RequestLog::open_file(const std::string& path) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error("cannot open request log '" + path + "': " + std::strerror(errno));
  struct stat st{};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw Error("request log '" + path + "' is not a regular file");
  }
  if (st.st_size == 0) {
    write_all(reinterpret_cast<const uint8_t*>(kRequestLogMagic), sizeof kRequestLogMagic);
    return;
  }
  RequestLogContents c;
  try {
    c = read_request_log(path);
  } catch (const Error& e) {
    ::close(fd_);
    throw Error(std::string(e.what()) + "; refusing to append to it (move it away or name another file)");
  }
  if (c.torn_tail) {
    repaired_bytes_ = c.tail_bytes;
    std::fprintf(stderr, "request log '%s': %s; cut %llu bytes off before appending\n", path.c_str(),
                 c.tail_problem.c_str(), static_cast<unsigned long long>(c.tail_bytes));
    if (::ftruncate(fd_, static_cast<off_t>(c.good_bytes)) != 0) {
      const int err = errno;
      ::close(fd_);
      throw Error("request log '" + path + "': cannot cut off its torn tail: " + std::strerror(err));
    }
  }
}

RequestLog::~RequestLog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  drain_locked();
  uint8_t payload[1 + 3 * 8];
  payload[0] = kTypeSummary;
  const uint64_t counts[3] = {records(), dropped(), inputs_omitted()};
  std::memcpy(payload + 1, counts, sizeof counts);
  uint32_t head[2] = {static_cast<uint32_t>(sizeof payload), stats::crc32(payload, sizeof payload)};
  uint8_t rec[sizeof head + sizeof payload];
  std::memcpy(rec, head, sizeof head);
  std::memcpy(rec + sizeof head, payload, sizeof payload);
  write_all(rec, sizeof rec);
  ::close(fd_);
}

bool RequestLog::sample(size_t ring) noexcept { return (rings_[ring]->calls++ % calls_every_) == 0; }

void RequestLog::put(Ring& r, uint64_t pos, const void* src, size_t n) noexcept {
  const size_t at = pos & (ring_bytes_ - 1), first = std::min(n, ring_bytes_ - at);
  std::memcpy(r.data.get() + at, src, first);
  if (first < n) std::memcpy(r.data.get(), static_cast<const uint8_t*>(src) + first, n - first);
}

void RequestLog::get(const Ring& r, uint64_t pos, void* dst, size_t n) const noexcept {
  const size_t at = pos & (ring_bytes_ - 1), first = std::min(n, ring_bytes_ - at);
  std::memcpy(dst, r.data.get() + at, first);
  if (first < n) std::memcpy(static_cast<uint8_t*>(dst) + first, r.data.get(), n - first);
}

void RequestLog::record(size_t ring, const RequestLogEntry& e) noexcept {
  Ring& r = *rings_[ring];
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  const int64_t wall_ns = int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
  const bool decoded = e.input_specs && e.inputs;
  const bool computed = e.output_specs && e.outputs;
  const std::string_view model = clip(e.model, 0xffff), sig = clip(e.signature, 0xffff);
  const std::string_view message = clip(e.message, kMaxMessage);
  const size_t base = kFixedBytes + 6 + model.size() + sig.size() + message.size() +
                      heads_bytes(decoded ? e.input_specs : nullptr) + heads_bytes(computed ? e.output_specs : nullptr);
  const size_t in_bytes = decoded ? values_bytes(e.input_specs, e.batch) : 0;
  const size_t out_bytes = computed ? values_bytes(e.output_specs, e.batch) : 0;
  const bool want_inputs = decoded && inputs_every_ != 0 && (r.logged++ % inputs_every_) == 0;
  const uint64_t head = r.head.load(std::memory_order_relaxed);
  const size_t room = ring_bytes_ - static_cast<size_t>(head - r.tail.load(std::memory_order_acquire));
  bool with_inputs = want_inputs, with_outputs = computed;
  if (4 + base + in_bytes * with_inputs + out_bytes > room) {
    if (4 + base > room) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    if (with_inputs) inputs_omitted_.fetch_add(1, std::memory_order_relaxed);
    with_inputs = false;
    if (4 + base + out_bytes > room) with_outputs = false;
  }
  const auto payload = static_cast<uint32_t>(base + (with_inputs ? in_bytes : 0) + (with_outputs ? out_bytes : 0));
  uint64_t pos = head;
  auto put_bytes = [&](const void* p, size_t n) {
    put(r, pos, p, n);
    pos += n;
  };
  auto put_str = [&](std::string_view s) {
    const auto n = static_cast<uint16_t>(s.size());
    put_bytes(&n, 2);
    put_bytes(s.data(), s.size());
  };
  auto put_heads = [&](const std::vector<TensorSpec>* specs) {
    const auto n = static_cast<uint8_t>(specs ? specs->size() : 0);
    put_bytes(&n, 1);
    for (size_t i = 0; i < n; ++i) {
      put_str(clip((*specs)[i].name, 0xffff));
      const auto per_row = static_cast<uint32_t>((*specs)[i].size);
      put_bytes(&per_row, 4);
    }
  };
  auto put_values = [&](const std::vector<TensorSpec>& specs, const float* const* v) {
    for (size_t i = 0; i < specs.size(); ++i) put_bytes(v[i], sizeof(float) * specs[i].size * e.batch);
  };
  const uint8_t fields[5] = {kTypeRequest, static_cast<uint8_t>(e.api), static_cast<uint8_t>(e.method),
                             static_cast<uint8_t>(e.status),
                             static_cast<uint8_t>((with_inputs ? 1 : 0) | (with_outputs ? 2 : 0))};
  const uint64_t fp = decoded ? input_fingerprint(*e.input_specs, e.inputs, e.batch) : 0;
  const uint64_t nums[6] = {static_cast<uint64_t>(wall_ns), static_cast<uint64_t>(e.version), e.queue_ns,
                            e.compute_ns, e.total_ns, fp};
  put_bytes(&payload, 4);
  put_bytes(fields, sizeof fields);
  put_bytes(nums, sizeof nums);
  put_bytes(&e.batch, 4);
  put_str(model);
  put_str(sig);
  put_str(message);
  put_heads(decoded ? e.input_specs : nullptr);
  put_heads(computed ? e.output_specs : nullptr);
  if (with_inputs) put_values(*e.input_specs, e.inputs);
  if (with_outputs) put_values(*e.output_specs, e.outputs);
  r.head.store(pos, std::memory_order_release);
}

void RequestLog::flush() {
  std::lock_guard<std::mutex> lock(mutex_);
  drain_locked();
}

void RequestLog::drain_locked() {
  out_.clear();
  uint64_t framed = 0;
  for (auto& rp : rings_) {
    Ring& r = *rp;
    uint64_t tail = r.tail.load(std::memory_order_relaxed);
    const uint64_t head = r.head.load(std::memory_order_acquire);
    while (tail != head) {
      uint32_t n = 0;
      get(r, tail, &n, 4);
      const size_t at = out_.size();
      out_.resize(at + kRequestLogRecordHeader + n);
      get(r, tail + 4, out_.data() + at + kRequestLogRecordHeader, n);
      const uint32_t crc = stats::crc32(out_.data() + at + kRequestLogRecordHeader, n);
      std::memcpy(out_.data() + at, &n, 4);
      std::memcpy(out_.data() + at + 4, &crc, 4);
      tail += 4 + n;
      ++framed;
    }
    r.tail.store(tail, std::memory_order_release);
  }
  if (!out_.empty()) write_all(out_.data(), out_.size());
  records_.fetch_add(framed, std::memory_order_relaxed);
}

void RequestLog::write_all(const uint8_t* p, size_t n) noexcept {
  while (n > 0) {
    const ssize_t w = ::write(fd_, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      write_errors_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
}

}  // namespace tickinfer::serving
