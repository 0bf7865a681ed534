// Data movement: Pad (zeros around the input, per axis) and Transpose (a permutation of the
// axes), over tensors of any rank up to kMaxRank, by an odometer over the input's leading axes
// (Pad copies whole last-axis rows; Transpose gathers each output row with the input stride of
// its last axis); Slice, one contiguous range; ReverseRows, the first axis's rows last to first.
// None is row-wise.
#include <algorithm>
#include <cstring>
#include <ostream>

#include "engine/steps/step_ops.hpp"

namespace tickinfer::engine {
namespace {

constexpr int kMaxRank = 8;

// Row-major strides of dims[0, rank) (floats).
void strides_of(const int* dims, int rank, size_t* strides) {
  size_t s = 1;
  for (int a = rank - 1; a >= 0; --a) {
    strides[a] = s;
    s *= static_cast<size_t>(dims[a]);
  }
}

// Steps `index` (over `dims`, the last axis excluded) to the next row; false after the last.
bool next_row(int* index, const int* dims, int rank) {
  for (int a = rank - 2; a >= 0; --a) {
    if (++index[a] < dims[a]) return true;
    index[a] = 0;
  }
  return false;
}

void run_pad(const StepCtx& c, const Step& s) noexcept {
  const int rank = static_cast<int>(s.in_shape.size());
  int out_dims[kMaxRank], in_dims[kMaxRank], index[kMaxRank] = {};
  size_t out_strides[kMaxRank];
  for (int a = 0; a < rank; ++a) {
    in_dims[a] = s.in_shape[static_cast<size_t>(a)];
    out_dims[a] = in_dims[a] + s.pads[2 * static_cast<size_t>(a)] + s.pads[2 * static_cast<size_t>(a) + 1];
  }
  strides_of(out_dims, rank, out_strides);
  const float* x = c.at(s.in);
  float* y = c.at(s.out);
  std::fill(y, y + s.out_width, 0.0f);
  const int row = in_dims[rank - 1];
  if (row == 0) return;
  do {
    size_t at = static_cast<size_t>(s.pads[2 * static_cast<size_t>(rank - 1)]);
    for (int a = 0; a < rank - 1; ++a) at += (index[a] + static_cast<size_t>(s.pads[2 * static_cast<size_t>(a)])) * out_strides[a];
    std::memcpy(y + at, x, sizeof(float) * static_cast<size_t>(row));
    x += row;
  } while (next_row(index, in_dims, rank));
}

void run_transpose(const StepCtx& c, const Step& s) noexcept {
  const int rank = static_cast<int>(s.in_shape.size());
  size_t in_strides[kMaxRank], stride[kMaxRank];
  int in_dims[kMaxRank], out_dims[kMaxRank], index[kMaxRank] = {};
  for (int a = 0; a < rank; ++a) in_dims[a] = s.in_shape[static_cast<size_t>(a)];
  strides_of(in_dims, rank, in_strides);
  for (int a = 0; a < rank; ++a) {
    const size_t from = static_cast<size_t>(s.permutation[static_cast<size_t>(a)]);
    out_dims[a] = s.in_shape[from];
    stride[a] = in_strides[from];
  }
  const float* x = c.at(s.in);
  float* y = c.at(s.out);
  const int row = out_dims[rank - 1];
  const size_t step = stride[rank - 1];
  do {
    size_t at = 0;
    for (int a = 0; a < rank - 1; ++a) at += static_cast<size_t>(index[a]) * stride[a];
    for (int j = 0; j < row; ++j) y[j] = x[at + j * step];
    y += row;
  } while (next_row(index, out_dims, rank));
}

void run_slice(const StepCtx& c, const Step& s) noexcept {
  std::memcpy(c.at(s.out), c.at(s.in) + s.slice_offset, sizeof(float) * static_cast<size_t>(s.out_width));
}

void run_reverse_rows(const StepCtx& c, const Step& s) noexcept {
  const float* x = c.at(s.in);
  float* y = c.at(s.out);
  const size_t width = static_cast<size_t>(s.in_width);
  for (int r = 0; r < s.rows; ++r)
    std::memcpy(y + static_cast<size_t>(s.rows - 1 - r) * width, x + static_cast<size_t>(r) * width, sizeof(float) * width);
}

void describe_reverse_rows(std::ostream& os, const Step& s) { os << "  " << s.rows << " rows of " << s.in_width; }

void describe_slice(std::ostream& os, const Step& s) {
  os << "  floats [" << s.slice_offset << ", " << s.slice_offset + s.out_width << ")";
}

void describe_pad(std::ostream& os, const Step& s) {
  os << "  " << shape_str(s.in_shape) << " pads=";
  for (size_t i = 0; i < s.pads.size(); ++i) os << (i ? "," : "") << s.pads[i];
}

void describe_transpose(std::ostream& os, const Step& s) {
  os << "  " << shape_str(s.in_shape) << " perm=";
  for (size_t i = 0; i < s.permutation.size(); ++i) os << (i ? "," : "") << s.permutation[i];
}

}  // namespace

extern const StepOps kPadStep = {"pad", "a layout step", run_pad, nullptr, no_floats, no_floats, no_cost, describe_pad};
extern const StepOps kTransposeStep = {"transpose",   "a layout step", run_transpose, nullptr, no_floats, no_floats,
                                       no_cost, describe_transpose};
extern const StepOps kSliceStep = {"slice", "a layout step", run_slice, nullptr, no_floats, no_floats, no_cost, describe_slice};
extern const StepOps kReverseRowsStep = {"reverse_rows", "a layout step", run_reverse_rows, nullptr, no_floats,
                                         no_floats, no_cost, describe_reverse_rows};

}  // namespace tickinfer::engine
