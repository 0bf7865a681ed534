// The .tkq op options block, version 1.2 (docs/tkq-format.md, "options block").
#include <bit>

#include "formats/tkq/tkq_layout.hpp"

static_assert(std::endian::native == std::endian::little, ".tkq is little-endian; so is every host we build for");

namespace tickinfer::formats::tkq {

std::vector<uint8_t> encode_options(const tfl::OpOptions& o) {
  ByteWriter b;
  b.put<uint8_t>(static_cast<uint8_t>(o.activation));
  b.put<uint8_t>(static_cast<uint8_t>(o.padding));
  for (bool f : {o.keep_num_dims, o.asymmetric_quantize_inputs, o.keep_dims, o.time_major, o.offset, o.adj_x,
                 o.adj_y, o.approximate, o.pot_scale_int16}) {
    b.put<uint8_t>(f ? 1 : 0);
  }
  b.put<uint8_t>(static_cast<uint8_t>((o.reset_after ? 0 : kGruResetBefore) | (o.own_arithmetic ? kGruOwnArithmetic : 0)));
  for (int v : {o.stride_w, o.stride_h, o.dilation_w, o.dilation_h, o.filter_w, o.filter_h, o.depth_multiplier}) {
    b.put<int32_t>(v);
  }
  for (float v : {o.cell_clip, o.proj_clip, o.beta, o.alpha}) b.put<float>(v);
  for (int v : {o.axis, o.num, o.begin_mask, o.end_mask, o.ellipsis_mask, o.new_axis_mask, o.shrink_axis_mask}) {
    b.put<int32_t>(v);
  }
  b.put<uint32_t>(static_cast<uint32_t>(o.new_shape.size()));
  for (int v : o.new_shape) b.put<int32_t>(v);
  return std::move(b.bytes);
}

}  // namespace tickinfer::formats::tkq
