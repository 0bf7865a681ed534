#pragma once
// Turning Python arguments into the float pointers Plan::run takes, and numpy arrays back out.
//
// Inputs: an aligned C-contiguous float32 numpy array is used in place, without a copy (checked
// through numpy's C API: a few loads, no buffer-protocol round trip). Anything else array-like
// (float64, a transposed view, a list) is converted once, as numpy.ascontiguousarray(x,
// dtype=float32) would; the copy lives until the call returns. Outputs given by the caller (`out=`) must already be
// writable C-contiguous float32 arrays of the right shape: they are written in place, never
// converted (a converted copy would silently drop the results).
//
// Every mismatch raises tickinfer::Error naming the argument, what was expected and what came.
#include <nanobind/nanobind.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tickinfer/tickinfer.hpp"

namespace tickinfer::python {

namespace nb = nanobind;

// A float32 C-contiguous array the engine can read or write directly. `owner` keeps a converted
// copy alive (it is empty when the caller's own array is used in place; the caller's argument
// is alive for the whole call anyway).
struct ArrayView {
  float* data = nullptr;
  const int64_t* dims = nullptr;
  size_t ndim = 0;
  nb::object owner;
};

// Imports numpy's C API; called once when the module is imported.
void init_numpy();

// `what` names the argument in error messages, e.g. "input 0 ('features')".
ArrayView as_input_array(nb::handle obj, const std::string& what);
ArrayView as_output_array(nb::handle obj, const std::string& what);

// "(3, 10)" as numpy prints shapes.
std::string shape_text(const int64_t* dims, size_t ndim);
// With `leading` >= 0 a leading axis of that length; with leading_name, one named so ("N").
std::string shape_text(const Shape& shape, long leading = -1, const char* leading_name = nullptr);

// True when the array's shape is `per_run` with `leading` rows in front (leading < 0: none).
bool shape_is(const int64_t* dims, size_t ndim, const Shape& per_run, long leading);

// A new float32 numpy array of the given shape (uninitialised) and its data pointer.
nb::object new_float_array(const int64_t* dims, size_t ndim, float** data);
// The same, float64.
nb::object new_double_array(const int64_t* dims, size_t ndim, double** data);

// Throws tickinfer::Error naming `what`, the row and flat position of the first NaN/Inf in
// rows x row_floats values, if any. Cost: one pass over the values, vectorised.
void refuse_nonfinite(const float* values, size_t rows, size_t row_floats, const std::string& what);

}  // namespace tickinfer::python
