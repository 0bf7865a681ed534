#include "serving/request_log_format.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "stats/crc32.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::serving {

namespace {

// A bounds-checked little-endian cursor: a read past the end clears ok and yields zeros.
struct Cursor {
  const uint8_t* p;
  const uint8_t* end;
  bool ok = true;
  bool take(void* dst, size_t n) {
    if (n == 0) return ok;  // an empty tensor's data() may be null, which memcpy must not see
    if (!ok || static_cast<size_t>(end - p) < n) {
      ok = false;
      std::memset(dst, 0, n);
      return false;
    }
    std::memcpy(dst, p, n);
    p += n;
    return true;
  }
  template <class T>
  T get() {
    T v;
    take(&v, sizeof v);
    return v;
  }
  std::string str() {
    const auto n = get<uint16_t>();
    if (!ok || static_cast<size_t>(end - p) < n) {
      ok = false;
      return {};
    }
    std::string s(reinterpret_cast<const char*>(p), n);
    p += n;
    return s;
  }
  size_t left() const { return static_cast<size_t>(end - p); }
};

constexpr uint8_t kTypeRequest = 1, kTypeSummary = 2;

bool read_tensor_heads(Cursor& in, std::vector<LoggedTensor>& out) {
  const auto n = in.get<uint8_t>();
  out.resize(n);
  for (auto& t : out) {
    t.name = in.str();
    t.floats_per_row = in.get<uint32_t>();
  }
  return in.ok;
}

bool read_values(Cursor& in, uint32_t batch, std::vector<LoggedTensor>& tensors, std::string& error) {
  for (auto& t : tensors) {
    const uint64_t count = uint64_t{batch} * t.floats_per_row;
    if (count > in.left() / sizeof(float)) {  // divided, so a huge batch x width cannot wrap
      error = "tensor '" + t.name + "' needs " + std::to_string(count) + " floats, the record has " +
              std::to_string(in.left() / sizeof(float));
      return false;
    }
    t.values.resize(static_cast<size_t>(count));
    in.take(t.values.data(), t.values.size() * sizeof(float));
  }
  return true;
}

}  // namespace

const char* logged_api_name(LoggedApi a) noexcept { return a == LoggedApi::Grpc ? "grpc" : "rest"; }

const char* logged_method_name(LoggedMethod m) noexcept {
  switch (m) {
    case LoggedMethod::Classify: return "classify";
    case LoggedMethod::Regress: return "regress";
    default: return "predict";
  }
}

uint64_t fnv1a64(const void* bytes, size_t n, uint64_t h) noexcept {
  const auto* b = static_cast<const uint8_t*>(bytes);
  for (size_t i = 0; i < n; ++i) {
    h ^= b[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

uint64_t fnv1a64(std::string_view bytes) noexcept { return fnv1a64(bytes.data(), bytes.size(), kFnvOffset); }

bool decode_logged_request(const uint8_t* payload, size_t n, LoggedRequest& r, std::string& error) {
  Cursor in{payload, payload + n};
  if (in.get<uint8_t>() != kTypeRequest) {
    error = "not a request record";
    return false;
  }
  const auto api = in.get<uint8_t>(), method = in.get<uint8_t>(), status = in.get<uint8_t>(),
             flags = in.get<uint8_t>();
  if (api > 1 || method > 2 || status > 16 || flags > 3) {
    error = "field out of range (api " + std::to_string(api) + ", method " + std::to_string(method) + ", status " +
            std::to_string(status) + ", flags " + std::to_string(flags) + ")";
    return false;
  }
  r.api = static_cast<LoggedApi>(api);
  r.method = static_cast<LoggedMethod>(method);
  r.status = static_cast<StatusCode>(status);
  r.has_inputs = (flags & 1) != 0;
  r.has_outputs = (flags & 2) != 0;
  r.wall_ns = in.get<int64_t>();
  r.version = in.get<int64_t>();
  r.queue_ns = in.get<uint64_t>();
  r.compute_ns = in.get<uint64_t>();
  r.total_ns = in.get<uint64_t>();
  r.input_fingerprint = in.get<uint64_t>();
  r.batch = in.get<uint32_t>();
  r.model = in.str();
  r.signature = in.str();
  r.message = in.str();
  if (!read_tensor_heads(in, r.inputs) || !read_tensor_heads(in, r.outputs)) {
    error = "truncated request record";
    return false;
  }
  if ((r.has_inputs && !read_values(in, r.batch, r.inputs, error)) ||
      (r.has_outputs && !read_values(in, r.batch, r.outputs, error))) {
    return false;
  }
  if (in.left() != 0) {
    error = std::to_string(in.left()) + " bytes after the request record's last field";
    return false;
  }
  return true;
}

RequestLogContents parse_request_log(const uint8_t* data, size_t len, const std::string& where) {
  RequestLogContents c;
  if (len < sizeof kRequestLogMagic || std::memcmp(data, kRequestLogMagic, sizeof kRequestLogMagic) != 0) {
    throw Error("request log '" + where + "': not a tickinfer request log (the file does not start with " +
                std::string(kRequestLogMagic, sizeof kRequestLogMagic) + ")");
  }
  size_t pos = sizeof kRequestLogMagic;
  c.good_bytes = pos;
  std::string error;
  while (pos < len) {
    auto torn = [&](const std::string& why) {
      c.torn_tail = true;
      c.tail_problem = why + " at byte " + std::to_string(pos);
      c.tail_bytes = len - pos;
    };
    if (len - pos < kRequestLogRecordHeader) {
      torn("truncated record header");
      break;
    }
    Cursor h{data + pos, data + len};
    const auto n = h.get<uint32_t>();
    const auto crc = h.get<uint32_t>();
    if (n == 0 || n > kRequestLogMaxPayload) {
      torn("implausible record length " + std::to_string(n));
      break;
    }
    if (len - pos - kRequestLogRecordHeader < n) {
      torn("truncated record (" + std::to_string(n) + " bytes announced)");
      break;
    }
    const uint8_t* p = data + pos + kRequestLogRecordHeader;
    if (stats::crc32(p, n) != crc) {
      torn("checksum mismatch");
      break;
    }
    if (p[0] == kTypeSummary) {
      Cursor in{p + 1, p + n};
      const auto records = in.get<uint64_t>(), dropped = in.get<uint64_t>(), omitted = in.get<uint64_t>();
      if (!in.ok || in.left() != 0) {
        torn("malformed summary record");
        break;
      }
      ++c.summaries;
      c.summarized_records += records;
      c.dropped += dropped;
      c.inputs_omitted += omitted;
    } else {
      LoggedRequest r;
      if (!decode_logged_request(p, n, r, error)) {
        torn("malformed record: " + error);
        break;
      }
      r.offset = pos;
      c.requests.push_back(std::move(r));
    }
    pos += kRequestLogRecordHeader + n;
    c.good_bytes = pos;
  }
  return c;
}

RequestLogContents read_request_log(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error("request log '" + path + "': is a directory, not a log file");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("request log '" + path + "': cannot open");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) throw Error("request log '" + path + "': read error");
  return parse_request_log(bytes.data(), bytes.size(), path);
}

}  // namespace tickinfer::serving
