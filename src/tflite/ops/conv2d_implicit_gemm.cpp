// int8 and hybrid CONV_2D on the implicit GEMMs (conv2d_implicit_gemm.hpp): AVX-512 VNNI, and
// AVX2 (the avx2 set, or avx512 without VNNI).
//
// Each call copies the whole input once into a buffer with a spare tail (a pass over a few KB),
// offset to u8 for VNNI (x ^ 0x80) or widened to int16 for AVX2; then, per chunk of
// kConvVnniPositions output positions, the kernel reads each position's patch where it lies:
//  - one run of elements when the taps are adjacent (one filter row, width dilation 1): the
//    patch is a contiguous slice, its last quad reading up to 3 elements of the next pixel (which
//    meet zero weights; the buffer has a spare tail);
//  - tap by tap when the channels are a whole number of quads;
//  - gathered (as the patch-gemm kernels do, outside taps filled with the zero point as the
//    kernel's input holds it: + 128 for VNNI's u8) for a chunk holding a position whose receptive
//    field leaves the input, or when neither form applies.
#include "tflite/ops/conv2d_implicit_gemm.hpp"

#include <algorithm>
#include <type_traits>

#include "kernels/aligned_allocator.hpp"
#include "tflite/kernels/conv_s8_avx2.hpp"
#include "tflite/kernels/conv_s8_vnni.hpp"

namespace tickinfer::tfl::ops {
#if defined(TICKINFER_HAVE_X86)
namespace {

using kernels::ConvAvx2Call;
using kernels::ConvTaps;
using kernels::ConvVnniCall;
using kernels::kConvVnniPositions;

static_assert(kConvVnniPositions == kernels::kConvAvx2MaxPositions, "one chunk size for both kernels");

constexpr size_t kSpareTail = 64;  // elements after the copied input: a last quad may read past it

// The packed filter, the two ways a chunk's patches are addressed, and the buffers they use. T is
// the kernel's input element: uint8_t for VNNI (x + 128, 16-channel groups) or int16_t for AVX2
// (x widened, 8-channel blocks of int16 pairs). Offsets and origins count T elements.
template <class T>
class ImplicitGemm {
 public:
  static constexpr bool kVnni = std::is_same_v<T, uint8_t>;
  using Packed = std::conditional_t<kVnni, int8_t, int16_t>;
  // A chunk's patches: the taps and each position's origin.
  struct Chunk {
    ConvTaps taps;
    const T* const* xp = nullptr;
  };

  ImplicitGemm(const ConvShape& s, const int8_t* filter) : s_(s) {
    const Window& w = s.w;
    rows_ = w.out_c;
    quads_ = (s.patch + 3) / 4;
    if constexpr (kVnni) {
      packed_.resize(kernels::conv_vnni_packed_bytes(rows_, s.patch));
      kernels::pack_conv_s8_vnni(filter, rows_, s.patch, packed_.data());
    } else {
      packed_.resize(kernels::conv_avx2_packed_elements(rows_, s.patch));
      kernels::pack_conv_s16_avx2(filter, rows_, s.patch, packed_.data());
    }
    row_sums_.assign(static_cast<size_t>(padded_rows()), 0);
    kernels::row_sums_s8(filter, rows_, s.patch, row_sums_.data());
    in_elements_ = static_cast<size_t>(w.batch) * w.in_h * w.in_w * w.in_c;
    x_.assign(in_elements_ + kSpareTail, 0);
    const int stride = quads_ * 4;
    patches_.assign(static_cast<size_t>(stride) * kConvVnniPositions, 0);
    gathered_offset_ = {0};
    gathered_ = ConvTaps{1, quads_, gathered_offset_.data()};
    if (w.dil_w == 1 && w.filter_h == 1) {
      direct_offset_ = {0};
      direct_ = ConvTaps{1, quads_, direct_offset_.data()};
    } else if (w.in_c % 4 == 0) {
      for (int ky = 0; ky < w.filter_h; ++ky)
        for (int kx = 0; kx < w.filter_w; ++kx) direct_offset_.push_back((ky * w.dil_h * w.in_w + kx * w.dil_w) * w.in_c);
      direct_ = ConvTaps{w.filter_h * w.filter_w, w.in_c / 4, direct_offset_.data()};
    }
    for (int p = 0; p < kConvVnniPositions; ++p) patch_ptr_[p] = patches_.data() + static_cast<size_t>(p) * stride;
    batch_elements_ = static_cast<size_t>(w.in_h) * w.in_w * w.in_c;
    plan_positions();
  }

  const std::vector<int32_t>& row_sums() const { return row_sums_; }
  const Packed* packed() const { return packed_.data(); }
  int rows() const { return rows_; }
  int quads() const { return quads_; }
  int padded_rows() const {
    if constexpr (kVnni) return kernels::conv_vnni_padded_rows(rows_);
    return kernels::conv_avx2_padded_rows(rows_);
  }
  bool direct() const { return !direct_offset_.empty(); }
  // The input's zero point as the kernel's input holds it (+ 128 in VNNI's u8).
  static int32_t held_zero_point(int32_t input_zero_point) { return kVnni ? input_zero_point + 128 : input_zero_point; }
  // What a gathered patch's outside taps hold.
  static T fill(int32_t input_zero_point) { return static_cast<T>(held_zero_point(input_zero_point)); }
  // Each channel's starting sum, bias - held zero point * rowsum: the input's zero point (and
  // VNNI's u8 offset) folded in (int32 wrap-around, as the reference's accumulator); padding rows 0.
  std::vector<int32_t> starting_sums(const int32_t* bias, int32_t input_zero_point) const {
    const uint32_t zp = static_cast<uint32_t>(held_zero_point(input_zero_point));
    std::vector<int32_t> start(static_cast<size_t>(padded_rows()), 0);
    for (int o = 0; o < rows_; ++o) {
      const uint32_t b = bias ? static_cast<uint32_t>(bias[o]) : 0u;
      start[static_cast<size_t>(o)] = static_cast<int32_t>(b - zp * static_cast<uint32_t>(row_sums_[static_cast<size_t>(o)]));
    }
    return start;
  }

  // The int8 input in the kernel's form.
  void copy_input(const int8_t* x) noexcept {
    if constexpr (kVnni) {
      kernels::offset_s8_to_u8(x, in_elements_, x_.data());
    } else {
      kernels::widen_s8_to_s16(x, in_elements_, x_.data());
    }
  }

  // The patches of output positions [first, first + n) of batch b (n <= kConvVnniPositions;
  // first a multiple of it).
  Chunk chunk(int b, int first, int n, T fill) noexcept {
    if (chunk_inside_[static_cast<size_t>(first / kConvVnniPositions)]) {
      const T* batch = x_.data() + static_cast<size_t>(b) * batch_elements_;
      for (int j = 0; j < n; ++j) direct_ptr_[j] = batch + origin_[static_cast<size_t>(first + j)];
      return {direct_, direct_ptr_};
    }
    gather_patches(s_.w, x_.data(), b, first, n, fill, quads_ * 4, patches_.data());
    return {gathered_, patch_ptr_};
  }

 private:
  // Per output position, where its receptive field starts in a batch's input, and per chunk of
  // kConvVnniPositions positions whether every one of them lies inside (read in place) or not
  // (gathered): worked out once, so a call does no division.
  void plan_positions() {
    const Window& w = s_.w;
    const int pixels = w.out_h * w.out_w;
    origin_.assign(static_cast<size_t>(pixels), 0);
    chunk_inside_.assign(static_cast<size_t>((pixels + kConvVnniPositions - 1) / kConvVnniPositions), direct());
    for (int i = 0; i < pixels; ++i) {
      const int oy = i / w.out_w, ox = i % w.out_w;
      const int y0 = oy * w.stride_h - w.pad_h, x0 = ox * w.stride_w - w.pad_w;
      const bool inside = y0 >= 0 && x0 >= 0 && y0 + (w.filter_h - 1) * w.dil_h < w.in_h &&
                          x0 + (w.filter_w - 1) * w.dil_w < w.in_w;
      if (inside) origin_[static_cast<size_t>(i)] = (static_cast<int64_t>(y0) * w.in_w + x0) * w.in_c;
      if (!inside) chunk_inside_[static_cast<size_t>(i / kConvVnniPositions)] = 0;
    }
  }

  ConvShape s_;
  int rows_ = 0, quads_ = 0;
  size_t in_elements_ = 0, batch_elements_ = 0;
  std::vector<int64_t> origin_;       // per output position, elements into its batch
  std::vector<uint8_t> chunk_inside_;  // per chunk: read in place
  tickinfer::kernels::AlignedVector<Packed> packed_;
  std::vector<int32_t> row_sums_;  // padded: padded_rows() entries
  std::vector<T> x_, patches_;
  std::vector<int32_t> direct_offset_, gathered_offset_;
  ConvTaps direct_, gathered_;
  const T* direct_ptr_[kConvVnniPositions] = {};
  const T* patch_ptr_[kConvVnniPositions] = {};
};

using VnniGemm = ImplicitGemm<uint8_t>;
using Avx2Gemm = ImplicitGemm<int16_t>;

// A kernel's call (ConvVnniCall, ConvAvx2Call) for a chunk of positions, without the
// requantization's constants.
template <class Call, class Gemm>
Call chunk_call(Gemm& g, int b, int first, int n, decltype(Gemm::fill(0)) fill, const int32_t* init) noexcept {
  const typename Gemm::Chunk patches = g.chunk(b, first, n, fill);
  Call c;
  c.packed = g.packed();
  c.rows = g.rows();
  c.quads = g.quads();
  c.n = n;
  c.init = init;
  c.taps = patches.taps;
  c.xp = patches.xp;
  return c;
}

// int8 CONV_2D on either implicit GEMM, the requantization in the tile. Each kernel's rounding
// constants are made here once: VNNI's double rounding as double_rounding_constants16 (single
// rounding makes them per tile), AVX2's as one Requant8 per block of 8 channels.
template <class Gemm, Rounding R>
class Int8ConvImplicitGemm final : public PreparedOp {
 public:
  Int8ConvImplicitGemm(const ConvShape& s, const int8_t* filter, Int8ConvQuant q)
      : s_(s), g_(s, filter), q_(std::move(q)), fill_(Gemm::fill(q_.input_zero_point)) {
    init_ = g_.starting_sums(q_.bias, q_.input_zero_point);
    params_.output_zero_point = q_.output_zero_point;
    params_.act_min = q_.act_min;
    params_.act_max = q_.act_max;
    shifts_left_ = std::any_of(q_.shift.begin(), q_.shift.end(), [](int32_t v) { return v > 0; });
    if constexpr (Gemm::kVnni) {
      params_.multiplier = q_.multiplier.data();
      params_.shift = q_.shift.data();
      if constexpr (R == Rounding::Double) {
        rounding_.resize(kernels::conv_vnni_rounding_bytes(g_.rows()));
        kernels::double_rounding_constants16(q_.multiplier.data(), q_.shift.data(), g_.rows(), rounding_.data());
      }
    } else {
      // Made for whole blocks of 8 channels; the padding's lanes are not stored.
      std::vector<int32_t> multiplier = q_.multiplier, shift = q_.shift;
      multiplier.resize(static_cast<size_t>(g_.padded_rows()), 0);
      shift.resize(multiplier.size(), 0);
      rounding_.resize(kernels::conv_avx2_requant_bytes(g_.rows()));
      kernels::conv_avx2_prepare_requant<R>(multiplier.data(), shift.data(), g_.rows(), rounding_.data());
    }
  }
  void eval(const TensorMemory& mem) noexcept override {
    const Window& w = s_.w;
    int8_t* y = mem.at<int8_t>(s_.output);
    g_.copy_input(mem.at<int8_t>(s_.input));
    const int pixels = w.out_h * w.out_w;
    for (int b = 0; b < w.batch; ++b) {
      for (int i = 0; i < pixels; i += kConvVnniPositions) {
        const int n = std::min(kConvVnniPositions, pixels - i);
        int8_t* out = y + (static_cast<int64_t>(b) * pixels + i) * w.out_c;
        if constexpr (Gemm::kVnni) {
          ConvVnniCall c = chunk_call<ConvVnniCall>(g_, b, i, n, fill_, init_.data());
          if (!rounding_.empty()) {
            c.rounding = rounding_.data();
            c.shifts_left = shifts_left_;
          }
          kernels::conv_u8s8_requant_vnni<R>(c, params_, out);
        } else {
          ConvAvx2Call c = chunk_call<ConvAvx2Call>(g_, b, i, n, fill_, init_.data());
          c.requant = rounding_.data();
          c.shifts_left = shifts_left_;
          kernels::conv_s16_requant_avx2<R>(c, params_, out);
        }
      }
    }
  }
  std::string describe() const override {
    return std::string("int8 conv2d implicit gemm ") + (Gemm::kVnni ? "avx512vnni" : "avx2") + " (" +
           (g_.direct() ? "patches in place" : "patches gathered") + ")";
  }
  int64_t macs() const override { return int64_t{s_.w.batch} * s_.w.out_h * s_.w.out_w * s_.w.out_c * s_.patch; }

 private:
  ConvShape s_;
  Gemm g_;
  Int8ConvQuant q_;
  decltype(Gemm::fill(0)) fill_;
  std::vector<int32_t> init_;
  kernels::RequantParams params_;  // AVX2: only the zero point and the clamp are read
  tickinfer::kernels::AlignedVector<int8_t> rounding_;  // the prepared constants (above), or empty
  bool shifts_left_ = true;  // some channel's shift is positive (read with double rounding only)
};

// Hybrid CONV_2D (float in and out, int8 filter) on either implicit GEMM: the input quantized per
// batch, then the integer sums stored per chunk and finished by the set's float epilogue.
template <class Gemm>
class HybridConvImplicitGemm final : public PreparedOp {
 public:
  HybridConvImplicitGemm(const ConvShape& s, const int8_t* filter, HybridConvQuant q)
      : s_(s), g_(s, filter), q_(std::move(q)) {
    init_ = g_.starting_sums(nullptr, 0);  // the plain sums: the epilogue applies the zero point
    batch_size_ = s.w.in_h * s.w.in_w * s.w.in_c;
    xq_.assign(static_cast<size_t>(batch_size_) * s.w.batch, 0);
    acc_step_ = g_.padded_rows();
    acc_.assign(static_cast<size_t>(acc_step_) * kConvVnniPositions, 0);
    out_.resize(static_cast<size_t>(s.w.batch));
    for (kernels::HybridConvOut& o : out_) {
      if (q_.per_channel) {
        o.row_sums = g_.row_sums().data();
        o.filter_scale = q_.filter_scale.data();
      }
      o.bias = q_.bias;
      o.lo = q_.lo;
      o.hi = q_.hi;
      o.leaky = s.leaky;
      o.alpha = s.alpha;
    }
  }
  void eval(const TensorMemory& mem) noexcept override {
    const Window& w = s_.w;
    const float* x = mem.at<float>(s_.input);
    float* y = mem.at<float>(s_.output);
    for (int b = 0; b < w.batch; ++b) {  // each batch quantized on its own, as TFLite does
      const int64_t off = static_cast<int64_t>(b) * batch_size_;
      kernels::HybridConvOut& o = out_[static_cast<size_t>(b)];
      if (q_.per_channel) {
        kernels::quantize_row_asymmetric(*q_.row_quant, x + off, batch_size_, xq_.data() + off, &o.input_scale, &o.zero_point);
      } else {
        o.input_scale = kernels::quantize_row_symmetric(*q_.row_quant, x + off, batch_size_, xq_.data() + off) * q_.filter_scale[0];
      }
    }
    g_.copy_input(xq_.data());
    const int pixels = w.out_h * w.out_w;
    for (int b = 0; b < w.batch; ++b) {
      const kernels::HybridConvOut& o = out_[static_cast<size_t>(b)];
      const auto fill = Gemm::fill(o.zero_point);
      for (int i = 0; i < pixels; i += kConvVnniPositions) {
        const int n = std::min(kConvVnniPositions, pixels - i);
        if constexpr (Gemm::kVnni) {
          kernels::conv_u8s8_s32_vnni(chunk_call<ConvVnniCall>(g_, b, i, n, fill, init_.data()), acc_.data(), acc_step_);
        } else {
          kernels::conv_s16_s32_avx2(chunk_call<ConvAvx2Call>(g_, b, i, n, fill, init_.data()), acc_.data(), acc_step_);
        }
        q_.epilogue(acc_.data(), w.out_c, n, acc_step_, o, y + (static_cast<int64_t>(b) * pixels + i) * w.out_c);
      }
    }
  }
  std::string describe() const override {
    return std::string("hybrid conv2d ") + (q_.per_channel ? "per-channel asymmetric " : "symmetric ") +
           "implicit gemm " + (Gemm::kVnni ? "avx512vnni" : "avx2") + " (" + (g_.direct() ? "patches in place" : "patches gathered") + ")" + fused_note(s_);
  }
  int64_t macs() const override { return int64_t{s_.w.batch} * s_.w.out_h * s_.w.out_w * s_.w.out_c * s_.patch; }

 private:
  ConvShape s_;
  Gemm g_;
  HybridConvQuant q_;
  int batch_size_ = 0, acc_step_ = 0;
  std::vector<int32_t> init_;
  tickinfer::kernels::AlignedVector<int8_t> xq_;
  std::vector<int32_t> acc_;
  std::vector<kernels::HybridConvOut> out_;  // per batch: its input scale and zero point
};

}  // namespace
#endif

ImplicitGemmKind implicit_gemm_kind(::tickinfer::kernels::Isa isa) {
#if defined(TICKINFER_HAVE_X86)
  if (isa == ::tickinfer::kernels::Isa::Avx512) return kernels::s8_vnni_supported() ? ImplicitGemmKind::Vnni : ImplicitGemmKind::Avx2;
  if (isa == ::tickinfer::kernels::Isa::Avx2) return ImplicitGemmKind::Avx2;
#else
  (void)isa;
#endif
  return ImplicitGemmKind::None;
}

std::unique_ptr<PreparedOp> make_int8_conv_implicit_gemm(ImplicitGemmKind kind, const ConvShape& s, const int8_t* filter,
                                                         Int8ConvQuant q) {
#if defined(TICKINFER_HAVE_X86)
  const bool d = q.rounding == Rounding::Double;
  if (kind == ImplicitGemmKind::Vnni) {
    if (d) return std::make_unique<Int8ConvImplicitGemm<VnniGemm, Rounding::Double>>(s, filter, std::move(q));
    return std::make_unique<Int8ConvImplicitGemm<VnniGemm, Rounding::Single>>(s, filter, std::move(q));
  }
  if (d) return std::make_unique<Int8ConvImplicitGemm<Avx2Gemm, Rounding::Double>>(s, filter, std::move(q));
  return std::make_unique<Int8ConvImplicitGemm<Avx2Gemm, Rounding::Single>>(s, filter, std::move(q));
#else
  (void)kind, (void)s, (void)filter, (void)q;
  return nullptr;
#endif
}

std::unique_ptr<PreparedOp> make_hybrid_conv_implicit_gemm(ImplicitGemmKind kind, const ConvShape& s, const int8_t* filter,
                                                           HybridConvQuant q) {
#if defined(TICKINFER_HAVE_X86)
  if (kind == ImplicitGemmKind::Vnni) return std::make_unique<HybridConvImplicitGemm<VnniGemm>>(s, filter, std::move(q));
  return std::make_unique<HybridConvImplicitGemm<Avx2Gemm>>(s, filter, std::move(q));
#else
  (void)kind, (void)s, (void)filter, (void)q;
  return nullptr;
#endif
}

}  // namespace tickinfer::tfl::ops
