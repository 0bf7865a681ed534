#include "serving/proto_wire.hpp"

#include <cstring>

#include "formats/crc32c.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::serving {

namespace {

constexpr int64_t kMaxElements = int64_t{1} << 28;

class Reader {
 public:
  Reader(std::string_view b, std::string_view source) : b_(b), source_(source) {}
  bool done() const { return p_ >= b_.size(); }

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(std::string(source_) + ": malformed protobuf at byte " + std::to_string(p_) + ": " + what);
  }

  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ >= b_.size()) fail("truncated varint");
      const uint8_t c = static_cast<uint8_t>(b_[p_++]);
      v |= static_cast<uint64_t>(c & 0x7f) << shift;
      if (!(c & 0x80)) return v;
    }
    fail("varint longer than 10 bytes");
  }
  std::string_view bytes() {
    const uint64_t n = varint();
    if (n > b_.size() - p_) fail("length " + std::to_string(n) + " runs past the end");
    const std::string_view v = b_.substr(p_, n);
    p_ += n;
    return v;
  }
  uint32_t fixed32() {
    if (b_.size() - p_ < 4) fail("truncated fixed32");
    uint32_t v;
    std::memcpy(&v, b_.data() + p_, 4);
    p_ += 4;
    return v;
  }
  uint64_t fixed64() {
    if (b_.size() - p_ < 8) fail("truncated fixed64");
    uint64_t v;
    std::memcpy(&v, b_.data() + p_, 8);
    p_ += 8;
    return v;
  }
  void skip(int wire) {
    switch (wire) {
      case 0: varint(); break;
      case 1: fixed64(); break;
      case 2: bytes(); break;
      case 5: fixed32(); break;
      default: fail("unsupported wire type " + std::to_string(wire));
    }
  }
  // Next tag: field number and wire type.
  void tag(uint32_t& field, int& wire) {
    const uint64_t t = varint();
    field = static_cast<uint32_t>(t >> 3);
    wire = static_cast<int>(t & 7);
    if (field == 0) fail("field number 0");
  }

 private:
  std::string_view b_;
  std::string_view source_;
  size_t p_ = 0;
};

void expect_wire(Reader& r, int wire, int want, const char* field) {
  if (wire != want) r.fail(std::string("field '") + field + "' has wire type " + std::to_string(wire));
}

}  // namespace

std::string decode_health_check_request(std::string_view bytes, std::string_view source) {
  Reader r(bytes, source);
  std::string service;
  while (!r.done()) {
    uint32_t field;
    int wire;
    r.tag(field, wire);
    if (field == 1) {
      expect_wire(r, wire, 2, "service");
      service.assign(r.bytes());
    } else {
      r.skip(wire);
    }
  }
  return service;
}

namespace {

std::vector<int64_t> decode_shape(std::string_view b, std::string_view source) {
  Reader r(b, source);
  std::vector<int64_t> dims;
  while (!r.done()) {
    uint32_t f;
    int w;
    r.tag(f, w);
    if (f == 2) {
      expect_wire(r, w, 2, "dim");
      Reader d(r.bytes(), source);
      int64_t size = 0;
      while (!d.done()) {
        uint32_t df;
        int dw;
        d.tag(df, dw);
        if (df == 1 && dw == 0) size = static_cast<int64_t>(d.varint());
        else d.skip(dw);
      }
      dims.push_back(size);
    } else if (f == 3 && w == 0) {
      if (r.varint() != 0) r.fail("unknown_rank tensors cannot be used");
    } else {
      r.skip(w);
    }
  }
  return dims;
}

// Repeated scalar fields may be packed (wire 2) or not; `one` reads a single element.
template <typename F>
void repeated(Reader& r, int wire, int scalar_wire, std::vector<float>& out, std::string_view source,
              F one) {
  if (wire == 2) {
    Reader p(r.bytes(), source);
    while (!p.done()) {
      out.push_back(one(p));
      if (static_cast<int64_t>(out.size()) > kMaxElements) p.fail("too many values");
    }
  } else if (wire == scalar_wire) {
    out.push_back(one(r));
    if (static_cast<int64_t>(out.size()) > kMaxElements) r.fail("too many values");
  } else {
    r.fail("repeated value with wire type " + std::to_string(wire));
  }
}

}  // namespace

DecodedTensor decode_tensor_proto(std::string_view b, std::string_view source) {
  Reader r(b, source);
  DecodedTensor t;
  std::string_view content;
  bool has_content = false;
  bool has_shape = false;
  while (!r.done()) {
    uint32_t f;
    int w;
    r.tag(f, w);
    switch (f) {
      case 1: expect_wire(r, w, 0, "dtype"); t.dtype = static_cast<int>(r.varint()); break;
      case 2: expect_wire(r, w, 2, "tensor_shape"); t.shape = decode_shape(r.bytes(), source); has_shape = true; break;
      case 4: expect_wire(r, w, 2, "tensor_content"); content = r.bytes(); has_content = true; break;
      case 5:
        repeated(r, w, 5, t.values, source, [](Reader& x) {
          const uint32_t u = x.fixed32();
          float v;
          std::memcpy(&v, &u, 4);
          return v;
        });
        break;
      case 6:
        repeated(r, w, 1, t.values, source, [](Reader& x) {
          const uint64_t u = x.fixed64();
          double v;
          std::memcpy(&v, &u, 8);
          return static_cast<float>(v);
        });
        break;
      case 7:
        repeated(r, w, 0, t.values, source,
                 [](Reader& x) { return static_cast<float>(static_cast<int32_t>(x.varint())); });
        break;
      case 10:
        repeated(r, w, 0, t.values, source,
                 [](Reader& x) { return static_cast<float>(static_cast<int64_t>(x.varint())); });
        break;
      case 11:
        repeated(r, w, 0, t.values, source, [](Reader& x) { return x.varint() ? 1.0f : 0.0f; });
        break;
      default: r.skip(w);
    }
  }
  if (!has_shape) r.fail("tensor has no tensor_shape");
  int64_t n = 1;
  for (int64_t d : t.shape) {
    if (d < 0) r.fail("tensor shape has an unknown dimension");
    if (d > 0 && n > kMaxElements / d) r.fail("tensor shape too large");
    n *= d;
  }
  if (n > kMaxElements) r.fail("tensor shape too large");
  size_t width = 0;
  switch (t.dtype) {
    case 1: case 3: width = 4; break;       // FLOAT, INT32
    case 2: case 9: width = 8; break;       // DOUBLE, INT64
    case 4: case 6: case 10: width = 1; break;  // UINT8, INT8, BOOL
    case 5: case 17: width = 2; break;      // INT16, UINT16
    default: r.fail("dtype " + std::to_string(t.dtype) + " cannot be converted to float");
  }
  if (has_content) {
    if (content.size() != static_cast<size_t>(n) * width) {
      r.fail("tensor_content holds " + std::to_string(content.size()) + " bytes, the shape needs " +
             std::to_string(static_cast<size_t>(n) * width));
    }
    t.values.resize(static_cast<size_t>(n));
    const char* p = content.data();
    for (int64_t i = 0; i < n; ++i, p += width) {
      float v = 0;
      switch (t.dtype) {
        case 1: std::memcpy(&v, p, 4); break;
        case 2: { double d; std::memcpy(&d, p, 8); v = static_cast<float>(d); break; }
        case 3: { int32_t x; std::memcpy(&x, p, 4); v = static_cast<float>(x); break; }
        case 9: { int64_t x; std::memcpy(&x, p, 8); v = static_cast<float>(x); break; }
        case 4: v = static_cast<uint8_t>(*p); break;
        case 6: v = static_cast<int8_t>(*p); break;
        case 10: v = *p ? 1.0f : 0.0f; break;
        case 5: { int16_t x; std::memcpy(&x, p, 2); v = x; break; }
        case 17: { uint16_t x; std::memcpy(&x, p, 2); v = x; break; }
      }
      t.values[static_cast<size_t>(i)] = v;
    }
  } else if (t.values.size() == 1 && n != 1) {
    t.values.assign(static_cast<size_t>(n), t.values[0]);
  } else if (static_cast<int64_t>(t.values.size()) != n) {
    r.fail("tensor holds " + std::to_string(t.values.size()) + " values, its shape needs " +
           std::to_string(n));
  }
  return t;
}

DecodedPredictRequest decode_predict_request(std::string_view b, std::string_view source) {
  Reader r(b, source);
  DecodedPredictRequest req;
  while (!r.done()) {
    uint32_t f;
    int w;
    r.tag(f, w);
    if (f == 1) {
      expect_wire(r, w, 2, "model_spec");
      Reader s(r.bytes(), source);
      while (!s.done()) {
        uint32_t sf;
        int sw;
        s.tag(sf, sw);
        if (sf == 1 && sw == 2) req.model_name = std::string(s.bytes());
        else if (sf == 3 && sw == 2) req.signature_name = std::string(s.bytes());
        else s.skip(sw);
      }
    } else if (f == 2) {
      expect_wire(r, w, 2, "inputs");
      Reader e(r.bytes(), source);
      std::string key;
      std::string_view value;
      while (!e.done()) {
        uint32_t ef;
        int ew;
        e.tag(ef, ew);
        if (ef == 1 && ew == 2) key = std::string(e.bytes());
        else if (ef == 2 && ew == 2) value = e.bytes();
        else e.skip(ew);
      }
      req.inputs[key] = decode_tensor_proto(value, source);
    } else {
      r.skip(w);
    }
  }
  return req;
}

bool decode_prediction_log(std::string_view b, std::string_view source, DecodedPredictRequest& out) {
  Reader r(b, source);
  bool found = false;
  while (!r.done()) {
    uint32_t f;
    int w;
    r.tag(f, w);
    if (f == 6) {
      expect_wire(r, w, 2, "predict_log");
      Reader p(r.bytes(), source);
      while (!p.done()) {
        uint32_t pf;
        int pw;
        p.tag(pf, pw);
        if (pf == 1) {
          expect_wire(p, pw, 2, "request");
          out = decode_predict_request(p.bytes(), source);
          found = true;
        } else {
          p.skip(pw);
        }
      }
    } else {
      r.skip(w);
    }
  }
  return found;
}

// One CRC-32C implementation in the project: the model formats' (TFRecord, tensor bundles).
uint32_t crc32c(const void* data, size_t size) { return formats::crc32c(data, size); }

uint32_t masked_crc32c(const void* data, size_t size) { return formats::masked_crc32c(data, size); }

std::vector<std::string> read_tfrecords(std::string_view file, std::string_view source,
                                        size_t max_records) {
  std::vector<std::string> out;
  size_t p = 0;
  while (p < file.size()) {
    const std::string where = std::string(source) + ": record " + std::to_string(out.size());
    if (out.size() >= max_records) {
      throw Error(where + ": more than " + std::to_string(max_records) + " records");
    }
    if (file.size() - p < 12) throw Error(where + ": truncated header");
    uint64_t len;
    uint32_t len_crc;
    std::memcpy(&len, file.data() + p, 8);
    std::memcpy(&len_crc, file.data() + p + 8, 4);
    if (masked_crc32c(file.data() + p, 8) != len_crc) throw Error(where + ": length checksum mismatch");
    p += 12;
    if (len > file.size() - p || file.size() - p - len < 4) throw Error(where + ": truncated data");
    uint32_t data_crc;
    std::memcpy(&data_crc, file.data() + p + len, 4);
    if (masked_crc32c(file.data() + p, len) != data_crc) throw Error(where + ": data checksum mismatch");
    out.emplace_back(file.data() + p, len);
    p += len + 4;
  }
  return out;
}

}  // namespace tickinfer::serving
