// The request-log record decoder on hand-built payloads (the layout in docs/serving.md, "Request
// log"): a zero-width tensor decodes to no values, and a batch x width whose byte count would wrap
// 64 bits is refused with the tensor's name instead of sizing a vector from the wrapped number.
// Both were libFuzzer findings.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "serving/request_log_format.hpp"

using namespace tickinfer::serving;

namespace {

struct Payload {
  std::vector<uint8_t> b;
  template <class T>
  void put(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    b.insert(b.end(), p, p + sizeof v);
  }
  void str(const std::string& s) {
    put<uint16_t>(static_cast<uint16_t>(s.size()));
    b.insert(b.end(), s.begin(), s.end());
  }
};

// A gRPC predict record with inputs and outputs, one input "x" and one output "y" of the given widths.
Payload record(uint32_t batch, uint32_t x_width, uint32_t y_width) {
  Payload p;
  for (uint8_t v : {1, 1, 0, 0, 3}) p.put<uint8_t>(v);  // request, grpc, predict, OK, inputs + outputs
  p.put<int64_t>(1764500000000000000);
  p.put<int64_t>(1);
  for (uint64_t v : {100, 200, 400, 0}) p.put<uint64_t>(v);
  p.put<uint32_t>(batch);
  p.str("mlp");
  p.str("serving_default");
  p.str("");
  p.put<uint8_t>(1);
  p.str("x");
  p.put<uint32_t>(x_width);
  p.put<uint8_t>(1);
  p.str("y");
  p.put<uint32_t>(y_width);
  return p;
}

TEST(ServingRequestLogFormat, ZeroWidthTensorDecodesToNoValues) {
  Payload p = record(2, 0, 1);
  p.put<float>(0.25f);
  p.put<float>(0.75f);
  LoggedRequest r;
  std::string error;
  ASSERT_TRUE(decode_logged_request(p.b.data(), p.b.size(), r, error)) << error;
  ASSERT_EQ(r.inputs.size(), 1u);
  EXPECT_TRUE(r.inputs[0].values.empty());
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].values, (std::vector<float>{0.25f, 0.75f}));
}

TEST(ServingRequestLogFormat, WrappingTensorSizeIsRefusedByName) {
  // 2^31 rows x 2^31 floats = 2^62 floats: at 4 bytes each the 64-bit byte count wraps to 0.
  Payload p = record(0x80000000u, 0x80000000u, 1);
  p.put<float>(1.0f);
  LoggedRequest r;
  std::string error;
  EXPECT_FALSE(decode_logged_request(p.b.data(), p.b.size(), r, error));
  EXPECT_NE(error.find("tensor 'x' needs"), std::string::npos) << error;
}

}  // namespace
