// StridedSlice with TensorFlow's mask semantics (tensorflow/core/util/strided_slice_op.cc):
// a begin/end mask bit takes the whole range on that axis, a negative index counts from the end,
// indices clamp to the axis, a shrink bit takes one element and drops the axis.
#include <algorithm>

#include "formats/savedmodel/tf_attr.hpp"
#include "formats/savedmodel/tf_eval.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

TfTensor tf_strided_slice(const tensorflow::NodeDef& node, const TfTensor& x, const std::vector<int64_t>& begin,
                          const std::vector<int64_t>& end, const std::vector<int64_t>& strides, const std::string& where) {
  const int64_t begin_mask = attr_int(node, "begin_mask", 0), end_mask = attr_int(node, "end_mask", 0);
  const int64_t shrink = attr_int(node, "shrink_axis_mask", 0);
  if (attr_int(node, "ellipsis_mask", 0) != 0 || attr_int(node, "new_axis_mask", 0) != 0) {
    throw Error(where + ": StridedSlice with ellipsis or new-axis masks is not supported");
  }
  if (begin.size() != end.size() || begin.size() != strides.size() || begin.size() > x.shape.size()) {
    throw Error(where + ": StridedSlice index vectors do not match the input rank");
  }
  std::vector<int64_t> lo(x.shape.size()), step(x.shape.size()), count(x.shape.size());
  std::vector<int64_t> out_shape;
  for (size_t d = 0; d < x.shape.size(); ++d) {
    const int64_t dim = x.shape[d];
    if (d >= begin.size()) {
      lo[d] = 0, step[d] = 1, count[d] = dim;
      out_shape.push_back(dim);
      continue;
    }
    const int64_t s = strides[d];
    if (s == 0) throw Error(where + ": StridedSlice stride 0");
    const bool bit_shrink = (shrink >> d) & 1;
    int64_t b = begin[d], e = end[d];
    if (bit_shrink) {
      if (b < 0) b += dim;
      if (b < 0 || b >= dim) throw Error(where + ": StridedSlice index " + std::to_string(begin[d]) + " outside [0," + std::to_string(dim) + ")");
      lo[d] = b, step[d] = 1, count[d] = 1;
      continue;
    }
    if ((begin_mask >> d) & 1) b = s > 0 ? 0 : dim - 1;
    else {
      if (b < 0) b += dim;
      b = s > 0 ? std::clamp<int64_t>(b, 0, dim) : std::clamp<int64_t>(b, -1, dim - 1);
    }
    if ((end_mask >> d) & 1) e = s > 0 ? dim : -1;
    else {
      if (e < 0) e += dim;
      e = s > 0 ? std::clamp<int64_t>(e, 0, dim) : std::clamp<int64_t>(e, -1, dim - 1);
    }
    const int64_t n = s > 0 ? std::max<int64_t>(0, (e - b + s - 1) / s) : std::max<int64_t>(0, (b - e - s - 1) / (-s));
    lo[d] = b, step[d] = s, count[d] = n;
    out_shape.push_back(n);
  }
  TfTensor out;
  out.dtype = x.dtype;
  out.shape = out_shape;
  int64_t total = 1;
  for (int64_t c : count) total *= c;
  std::vector<int64_t> in_strides(x.shape.size(), 1);
  for (size_t i = x.shape.size(); i-- > 1;) in_strides[i - 1] = in_strides[i] * x.shape[i];
  std::vector<int64_t> idx(x.shape.size(), 0);
  for (int64_t i = 0; i < total; ++i) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d) src += (lo[d] + idx[d] * step[d]) * in_strides[d];
    out.values.push_back(x.values[static_cast<size_t>(src)]);
    for (size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < count[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

}  // namespace tickinfer::formats
