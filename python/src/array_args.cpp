#include "array_args.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

// Only this file uses numpy's C API, so its function table stays private to it.
#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#include <numpy/arrayobject.h>

namespace tickinfer::python {

namespace {

static_assert(sizeof(npy_intp) == sizeof(int64_t), "numpy dims are read as int64_t");

// str(obj) for an error message; never throws (a failing __str__ gives "?").
std::string str_of(PyObject* obj) {
  PyObject* s = PyObject_Str(obj);
  const char* c = s ? PyUnicode_AsUTF8(s) : nullptr;
  std::string text = c ? c : "?";
  Py_XDECREF(s);
  if (!c) PyErr_Clear();
  return text;
}

std::string type_text(nb::handle obj) {
  std::string text = Py_TYPE(obj.ptr())->tp_name;
  if (PyArray_Check(obj.ptr())) {
    auto* a = reinterpret_cast<PyArrayObject*>(obj.ptr());
    PyObject* shape = PyObject_GetAttrString(obj.ptr(), "shape");
    text += " of dtype " + str_of(reinterpret_cast<PyObject*>(PyArray_DESCR(a))) + " and shape " +
            (shape ? str_of(shape) : "?");
    Py_XDECREF(shape);
    if (!PyArray_CHKFLAGS(a, NPY_ARRAY_C_CONTIGUOUS)) text += ", not C-contiguous";
    if (!PyArray_CHKFLAGS(a, NPY_ARRAY_WRITEABLE)) text += ", read-only";
  }
  return text;
}

// The engine-ready case: a numpy float32 array, C-contiguous and aligned (and writable when
// the engine writes it).
bool usable(PyObject* obj, bool writable) {
  if (!PyArray_Check(obj)) return false;
  auto* a = reinterpret_cast<PyArrayObject*>(obj);
  const int need = NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | (writable ? NPY_ARRAY_WRITEABLE : 0);
  return PyArray_TYPE(a) == NPY_FLOAT32 && PyArray_CHKFLAGS(a, need);
}

ArrayView view_of(PyObject* obj) {
  auto* a = reinterpret_cast<PyArrayObject*>(obj);
  ArrayView v;
  v.data = static_cast<float*>(PyArray_DATA(a));
  v.dims = reinterpret_cast<const int64_t*>(PyArray_DIMS(a));
  v.ndim = static_cast<size_t>(PyArray_NDIM(a));
  return v;
}

}  // namespace

void init_numpy() {
  if (PyArray_ImportNumPyAPI() < 0) throw nb::python_error();
}

ArrayView as_input_array(nb::handle obj, const std::string& what) {
  if (usable(obj.ptr(), false)) return view_of(obj.ptr());  // zero-copy path
  // Anything else array-like: one conversion (a copy unless it already had the layout).
  PyObject* converted = PyArray_FromAny(obj.ptr(), PyArray_DescrFromType(NPY_FLOAT32), 0, 0,
                                        NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_FORCECAST, nullptr);
  if (!converted) {
    nb::python_error e;
    throw Error(what + ": cannot convert " + type_text(obj) + " to a float32 array (" + e.what() + ")");
  }
  nb::object owner = nb::steal(converted);
  ArrayView v = view_of(converted);
  v.owner = std::move(owner);
  return v;
}

ArrayView as_output_array(nb::handle obj, const std::string& what) {
  if (usable(obj.ptr(), true)) return view_of(obj.ptr());
  throw Error(what + ": must be a writable C-contiguous float32 numpy array (it is written in place), got " +
              type_text(obj));
}

std::string shape_text(const int64_t* dims, size_t ndim) {
  std::string text = "(";
  for (size_t i = 0; i < ndim; ++i) {
    if (i) text += ", ";
    text += std::to_string(dims[i]);
  }
  return text + (ndim == 1 ? ",)" : ")");
}

std::string shape_text(const Shape& shape, long leading, const char* leading_name) {
  std::vector<std::string> parts;
  if (leading_name) parts.emplace_back(leading_name);
  if (leading >= 0) parts.push_back(std::to_string(leading));
  for (int d : shape) parts.push_back(std::to_string(d));
  std::string text = "(";
  for (size_t i = 0; i < parts.size(); ++i) text += (i ? ", " : "") + parts[i];
  return text + (parts.size() == 1 ? ",)" : ")");
}

bool shape_is(const int64_t* dims, size_t ndim, const Shape& per_run, long leading) {
  const size_t offset = leading >= 0 ? 1 : 0;
  if (ndim != per_run.size() + offset) return false;
  if (leading >= 0 && dims[0] != leading) return false;
  for (size_t i = 0; i < per_run.size(); ++i) {
    if (dims[i + offset] != per_run[i]) return false;
  }
  return true;
}

nb::object new_float_array(const int64_t* dims, size_t ndim, float** data) {
  auto* shape = const_cast<npy_intp*>(reinterpret_cast<const npy_intp*>(dims));
  PyObject* a = PyArray_SimpleNew(static_cast<int>(ndim), shape, NPY_FLOAT32);
  if (!a) throw nb::python_error();
  *data = static_cast<float*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(a)));
  return nb::steal(a);
}

nb::object new_double_array(const int64_t* dims, size_t ndim, double** data) {
  auto* shape = const_cast<npy_intp*>(reinterpret_cast<const npy_intp*>(dims));
  PyObject* a = PyArray_SimpleNew(static_cast<int>(ndim), shape, NPY_FLOAT64);
  if (!a) throw nb::python_error();
  *data = static_cast<double*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(a)));
  return nb::steal(a);
}

void refuse_nonfinite(const float* values, size_t rows, size_t row_floats, const std::string& what) {
  const size_t n = rows * row_floats;
  // Exponent all ones <=> NaN or Inf. An OR-reduction over the exponent test vectorises; the
  // slow search for the position runs only when something was found.
  uint32_t any = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, values + i, sizeof bits);
    any |= static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
  }
  if (!any) return;
  for (size_t i = 0; i < n; ++i) {
    if (std::isfinite(values[i])) continue;
    char value[32];
    std::snprintf(value, sizeof value, "%g", static_cast<double>(values[i]));
    std::string where = rows > 1 ? "row " + std::to_string(i / row_floats) + " has" : "has";
    throw Error(what + ": " + where + " a non-finite value (" + value + " at flat position " +
                std::to_string(i % row_floats) + "); pass check_finite=False to run it anyway");
  }
}

}  // namespace tickinfer::python
