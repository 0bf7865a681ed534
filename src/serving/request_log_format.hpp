#pragma once
// The request log's file format, and its reader. Byte layout (little-endian; docs/serving.md,
// "Request log"), built like the pipeline's decision log:
//
//   file   = "TKRLOG01" record*
//   record = u32 payload_bytes, u32 crc32(payload), payload
//   payload: u8 type, then the type's fields
//     type 1, a request:  u8 api, u8 method, u8 status, u8 flags (1 = inputs, 2 = outputs),
//                         i64 wall_ns, i64 version, u64 queue_ns, u64 compute_ns, u64 total_ns,
//                         u64 input_fingerprint, u32 batch, str model, str signature, str message,
//                         u8 n_inputs  {str name, u32 floats_per_row},
//                         u8 n_outputs {str name, u32 floats_per_row},
//                         [flags & 1] every input's batch * floats_per_row f32,
//                         [flags & 2] every output's batch * floats_per_row f32
//     type 2, a writer's summary at close: u64 records, u64 dropped, u64 inputs_omitted
//   str = u16 bytes, bytes
//
// The input fingerprint is FNV-1a 64 over the bytes of the *decoded* input floats, every input in
// the signature's order (the pipeline's decision-log fingerprint for one input): the same tensor
// sent as JSON rows, JSON columns or a gRPC TensorProto, formatted any way, has one fingerprint.
// 0 with no inputs: the request failed before its inputs were decoded.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "serving/metrics.hpp"

namespace tickinfer::serving {

inline constexpr char kRequestLogMagic[8] = {'T', 'K', 'R', 'L', 'O', 'G', '0', '1'};
inline constexpr size_t kRequestLogRecordHeader = 8;  // u32 payload bytes + u32 crc32
inline constexpr size_t kRequestLogMaxPayload = size_t{1} << 30;

enum class LoggedApi : uint8_t { Rest = 0, Grpc = 1 };
enum class LoggedMethod : uint8_t { Predict = 0, Classify = 1, Regress = 2 };
const char* logged_api_name(LoggedApi a) noexcept;
const char* logged_method_name(LoggedMethod m) noexcept;

struct LoggedTensor {
  std::string name;
  uint32_t floats_per_row = 0;
  std::vector<float> values;  // batch * floats_per_row when the record carries them, else empty
};

struct LoggedRequest {
  LoggedApi api = LoggedApi::Rest;
  LoggedMethod method = LoggedMethod::Predict;
  StatusCode status = StatusCode::Ok;
  bool has_inputs = false, has_outputs = false;
  int64_t wall_ns = 0;  // CLOCK_REALTIME when the answer was ready
  int64_t version = -1;  // -1: no version was resolved
  uint64_t queue_ns = 0, compute_ns = 0, total_ns = 0;
  uint64_t input_fingerprint = 0;
  uint32_t batch = 0;
  std::string model, signature, message;  // message: the error's text, empty when OK
  std::vector<LoggedTensor> inputs, outputs;
  uint64_t offset = 0;  // the record's byte offset in the file
};

struct RequestLogContents {
  std::vector<LoggedRequest> requests;
  // From the writers' summary records (one per server run that closed cleanly).
  uint64_t summaries = 0, summarized_records = 0, dropped = 0, inputs_omitted = 0;
  bool torn_tail = false;     // the file ends in a record cut short or failing its checksum
  std::string tail_problem;   // what was wrong with it
  uint64_t good_bytes = 0;    // the header and the whole records before the tail
  uint64_t tail_bytes = 0;    // bytes from there to the end of the file
};

// FNV-1a 64 of a byte string, and continued over more bytes (seeded with a previous hash).
uint64_t fnv1a64(std::string_view bytes) noexcept;
uint64_t fnv1a64(const void* bytes, size_t n, uint64_t seed) noexcept;
inline constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull;

// Decodes one payload (after its header and checksum were checked). False with `error` set for
// a payload that does not hold what its type says (a bounds-checked parse: fuzzed).
bool decode_logged_request(const uint8_t* payload, size_t n, LoggedRequest& out, std::string& error);

// Reads a whole log. Throws tickinfer::Error for a file that cannot be read or does not start
// with the magic; a bad or torn record ends the read and is reported (the records before it
// are kept), never thrown.
RequestLogContents read_request_log(const std::string& path);
// The same over bytes in memory (`where` names them in errors).
RequestLogContents parse_request_log(const uint8_t* data, size_t n, const std::string& where);

}  // namespace tickinfer::serving
