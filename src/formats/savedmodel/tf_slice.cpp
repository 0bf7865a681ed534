// StridedSlice with TensorFlow's mask semantics (tensorflow/core/util/strided_slice_op.cc):
// a begin/end mask bit takes the whole range on that axis, a negative index counts from the end,
// indices clamp to the axis, a shrink bit takes one element and drops the axis, a new-axis bit
// inserts an axis of size 1 and an ellipsis bit stands for as many whole axes as the other
// entries leave (an index vector without one ends in an implicit ellipsis).
#include <algorithm>

#include "formats/savedmodel/tf_attr.hpp"
#include "formats/savedmodel/tf_eval.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::formats {

namespace {

// One entry of the index vectors applied to one input axis (TF's dense spec).
struct AxisSlice {
  int64_t begin = 0, end = 0, stride = 1;
  bool begin_all = true, end_all = true, shrink = false;
};

}  // namespace

TfTensor tf_strided_slice(const tensorflow::NodeDef& node, const TfTensor& x, const std::vector<int64_t>& begin,
                          const std::vector<int64_t>& end, const std::vector<int64_t>& strides, const std::string& where) {
  const int64_t begin_mask = attr_int(node, "begin_mask", 0), end_mask = attr_int(node, "end_mask", 0);
  const int64_t shrink = attr_int(node, "shrink_axis_mask", 0), new_axis = attr_int(node, "new_axis_mask", 0);
  int64_t ellipsis = attr_int(node, "ellipsis_mask", 0);
  if (begin.size() != end.size() || begin.size() != strides.size() || begin.size() > 62) {
    throw Error(where + ": StridedSlice index vectors do not match the input rank");
  }
  if (ellipsis < 0 || (ellipsis & (ellipsis - 1)) != 0) throw Error(where + ": StridedSlice with more than one ellipsis");
  auto bit = [](int64_t mask, size_t i) { return ((mask >> i) & 1) != 0; };
  size_t entries = begin.size();
  if (ellipsis == 0) ellipsis = int64_t{1} << entries++;
  // The input axis each entry applies to, and the output's axes: an input axis, or -1 for a new one.
  std::vector<AxisSlice> dense(x.shape.size());
  std::vector<int64_t> final_axes;
  size_t axis = 0;
  for (size_t i = 0; i < entries; ++i) {
    if (bit(ellipsis, i)) {
      size_t new_after = 0;
      for (size_t j = i + 1; j < entries; ++j) new_after += bit(new_axis, j) ? 1 : 0;
      const auto rest = static_cast<int64_t>(x.shape.size()) - static_cast<int64_t>(entries - 1 - i - new_after);
      for (; static_cast<int64_t>(axis) < rest && axis < x.shape.size(); ++axis) final_axes.push_back(static_cast<int64_t>(axis));
    } else if (bit(new_axis, i)) {
      final_axes.push_back(-1);
    } else {
      if (axis >= x.shape.size()) throw Error(where + ": StridedSlice index vectors do not match the input rank");
      dense[axis] = AxisSlice{begin[i], end[i], strides[i], bit(begin_mask, i), bit(end_mask, i), bit(shrink, i)};
      if (!dense[axis].shrink) final_axes.push_back(static_cast<int64_t>(axis));
      ++axis;
    }
  }
  if (axis != x.shape.size()) throw Error(where + ": StridedSlice index vectors do not match the input rank");
  std::vector<int64_t> lo(x.shape.size()), step(x.shape.size()), count(x.shape.size());
  for (size_t d = 0; d < x.shape.size(); ++d) {
    const int64_t dim = x.shape[d];
    const AxisSlice& a = dense[d];
    const int64_t s = a.stride;
    if (s == 0) throw Error(where + ": StridedSlice stride 0");
    int64_t b = a.begin, e = a.end;
    if (a.shrink) {
      if (b < 0) b += dim;
      if (b < 0 || b >= dim) throw Error(where + ": StridedSlice index " + std::to_string(a.begin) + " outside [0," + std::to_string(dim) + ")");
      lo[d] = b, step[d] = 1, count[d] = 1;
      continue;
    }
    if (a.begin_all) b = s > 0 ? 0 : dim - 1;
    else {
      if (b < 0) b += dim;
      b = s > 0 ? std::clamp<int64_t>(b, 0, dim) : std::clamp<int64_t>(b, -1, dim - 1);
    }
    if (a.end_all) e = s > 0 ? dim : -1;
    else {
      if (e < 0) e += dim;
      e = s > 0 ? std::clamp<int64_t>(e, 0, dim) : std::clamp<int64_t>(e, -1, dim - 1);
    }
    lo[d] = b, step[d] = s;
    count[d] = s > 0 ? std::max<int64_t>(0, (e - b + s - 1) / s) : std::max<int64_t>(0, (b - e - s - 1) / (-s));
  }
  TfTensor out;
  out.dtype = x.dtype;
  for (int64_t f : final_axes) out.shape.push_back(f < 0 ? 1 : count[static_cast<size_t>(f)]);
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
