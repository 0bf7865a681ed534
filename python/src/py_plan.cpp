#include "py_plan.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <climits>
#include <optional>
#include <string_view>

#include "array_args.hpp"

namespace tickinfer::python {

namespace {

constexpr size_t kMaxRank = 15;  // output rank, so shapes fit a stack array

const char* mode_name(RecurrentMode m) { return m == RecurrentMode::Stream ? "stream" : "window"; }

// Marks the plan busy for the duration of one call (see py_plan.hpp).
class BusyGuard {
 public:
  explicit BusyGuard(std::atomic<bool>& flag) : flag_(flag) {
    if (flag_.exchange(true, std::memory_order_acquire)) {
      throw Error("plan is already running in another thread; give each thread its own plan.clone()");
    }
  }
  ~BusyGuard() { flag_.store(false, std::memory_order_release); }
  BusyGuard(const BusyGuard&) = delete;
  BusyGuard& operator=(const BusyGuard&) = delete;

 private:
  std::atomic<bool>& flag_;
};

nb::tuple shape_tuple(const Shape& s) {
  nb::list l;
  for (int d : s) l.append(d);
  return nb::tuple(l);
}

// The arguments of a call with several inputs/outputs arrive as a list or tuple.
std::vector<nb::handle> as_sequence(nb::handle obj, size_t want, const char* what_plural) {
  if (!nb::isinstance<nb::list>(obj) && !nb::isinstance<nb::tuple>(obj)) {
    throw Error(std::string("this plan has ") + std::to_string(want) + " " + what_plural +
                ": pass a list or tuple of " + std::to_string(want) + " arrays, in the model's order");
  }
  const size_t n = nb::len(obj);
  if (n != want) {
    throw Error(std::string("this plan has ") + std::to_string(want) + " " + what_plural + ", got " +
                std::to_string(n));
  }
  std::vector<nb::handle> items;
  for (size_t i = 0; i < n; ++i) items.push_back(obj[i]);
  return items;
}

}  // namespace

// run_batch's rows per Plan::run_rows call: enough for the AVX2 kernel's groups of four.
constexpr int kBatchRows = 8;

PyPlan::PyPlan(Plan plan, std::vector<std::string> input_names, std::vector<std::string> output_names)
    : plan_(std::move(plan)), input_names_(std::move(input_names)), output_names_(std::move(output_names)) {
  auto label = [](const char* kind, size_t i, const std::vector<std::string>& names) {
    std::string s = std::string(kind) + " " + std::to_string(i);
    if (i < names.size()) s += " ('" + names[i] + "')";
    return s;
  };
  for (size_t i = 0; i < plan_.num_inputs(); ++i) input_labels_.push_back(label("input", i, input_names_));
  by_rows_ = plan_.try_reserve_rows(kBatchRows);  // false: recurrent, convolutional, branching, TFLite
  for (size_t i = 0; i < plan_.num_outputs(); ++i) output_labels_.push_back(label("out", i, output_names_));
  for (size_t i = 0; i < plan_.num_outputs(); ++i) {
    if (plan_.output_shape(i).size() > kMaxRank) {
      throw Error(output_label(i) + ": rank " + std::to_string(plan_.output_shape(i).size()) +
                  " is more than the Python module supports (" + std::to_string(kMaxRank) + ")");
    }
  }
}

nb::object PyPlan::run(nb::handle x, nb::handle out, bool check_finite) {
  const size_t n_in = plan_.num_inputs(), n_out = plan_.num_outputs();
  const bool single = n_in == 1 && n_out == 1;

  // Inputs. The single-input case keeps its array on the stack (no heap allocation).
  std::optional<ArrayView> one_in;
  std::vector<ArrayView> many_in;
  long leading = -1;  // -1: inputs came without a batch axis; 1: with a leading axis of 1
  auto take_input = [&](nb::handle obj, size_t i) -> ArrayView {
    ArrayView a = as_input_array(obj, input_label(i));
    const Shape& s = plan_.input_shape(i);
    long lead = -1;
    if (shape_is(a.dims, a.ndim, s, -1)) {
      lead = -1;
    } else if (shape_is(a.dims, a.ndim, s, 1)) {
      lead = 1;
    } else {
      throw Error(input_label(i) + ": expected shape " + shape_text(s) + " or " + shape_text(s, 1) + " for one " +
                  mode_name(plan_.mode()) + "-mode run, got " + shape_text(a.dims, a.ndim) +
                  (a.ndim == s.size() + 1 ? "; use run_batch() for several rows" : ""));
    }
    if (i == 0) leading = lead;
    if (check_finite) refuse_nonfinite(a.data, 1, plan_.input_size(i), input_label(i));
    return a;
  };
  const float* in_ptr_one = nullptr;
  std::vector<const float*> in_ptrs;
  if (n_in == 1) {
    one_in = take_input(x, 0);
    in_ptr_one = one_in->data;
  } else {
    auto items = as_sequence(x, n_in, "inputs");
    for (size_t i = 0; i < n_in; ++i) many_in.push_back(take_input(items[i], i));
    for (auto& a : many_in) in_ptrs.push_back(a.data);
  }

  // Outputs: the caller's arrays (written in place) or new ones.
  nb::object result;
  float* out_ptr_one = nullptr;
  std::vector<float*> out_ptrs(single ? 0 : n_out);
  std::optional<ArrayView> one_out;
  std::vector<ArrayView> many_out;
  auto check_out = [&](ArrayView& a, size_t i) {
    const Shape& s = plan_.output_shape(i);
    if (!shape_is(a.dims, a.ndim, s, -1) && !shape_is(a.dims, a.ndim, s, 1)) {
      throw Error(output_label(i) + ": expected shape " + shape_text(s) + " or " + shape_text(s, 1) + ", got " +
                  shape_text(a.dims, a.ndim));
    }
  };
  if (!out.is_none()) {
    if (n_out == 1) {
      one_out = as_output_array(out, output_label(0));
      check_out(*one_out, 0);
      out_ptr_one = one_out->data;
      if (!single) out_ptrs[0] = out_ptr_one;
    } else {
      auto items = as_sequence(out, n_out, "outputs");
      for (size_t i = 0; i < n_out; ++i) {
        many_out.push_back(as_output_array(items[i], output_label(i)));
        check_out(many_out.back(), i);
        out_ptrs[i] = many_out.back().data;
      }
    }
    result = nb::borrow(out);
  } else {
    auto alloc = [&](size_t i, float** data) {
      std::array<int64_t, kMaxRank + 1> dims;  // on the stack: no heap allocation per call
      size_t nd = 0;
      if (leading >= 0) dims[nd++] = 1;
      for (int d : plan_.output_shape(i)) dims[nd++] = d;
      return new_float_array(dims.data(), nd, data);
    };
    if (n_out == 1) {
      result = alloc(0, &out_ptr_one);
      if (!single) out_ptrs[0] = out_ptr_one;
    } else {
      nb::list list;
      for (size_t i = 0; i < n_out; ++i) list.append(alloc(i, &out_ptrs[i]));
      result = list;
    }
  }
  if (n_in == 1 && !single) in_ptrs.assign(1, in_ptr_one);

  BusyGuard guard(busy_);
  // A GPU plan waits on the device (a launch and its completion, or a resident kernel's reply):
  // the GIL is released for it whatever its size, so other Python threads run meanwhile.
  const bool release = plan_.flops() > kReleaseGilFlops || std::string_view(plan_.isa()).starts_with("cuda");
  auto compute = [&] {
    if (single) {
      plan_.run(in_ptr_one, out_ptr_one);
    } else {
      plan_.run(in_ptrs.data(), out_ptrs.data());
    }
  };
  if (release) {
    nb::gil_scoped_release unlocked;
    compute();
  } else {
    compute();
  }
  return result;
}

nb::object PyPlan::run_batch(nb::handle x, nb::handle out, bool check_finite) {
  const size_t n_in = plan_.num_inputs(), n_out = plan_.num_outputs();
  std::vector<nb::handle> in_items = n_in == 1 ? std::vector<nb::handle>{x} : as_sequence(x, n_in, "inputs");
  std::vector<ArrayView> ins;
  long rows = -1;
  for (size_t i = 0; i < n_in; ++i) {
    ArrayView a = as_input_array(in_items[i], input_label(i));
    const Shape& s = plan_.input_shape(i);
    if (a.ndim != s.size() + 1 || !shape_is(a.dims, a.ndim, s, static_cast<long>(a.dims[0]))) {
      throw Error(input_label(i) + ": expected shape " + shape_text(s, -1, "N") + " (N " +
                  (plan_.mode() == RecurrentMode::Stream ? "consecutive ticks" : "rows") + ") for run_batch, got " +
                  shape_text(a.dims, a.ndim));
    }
    if (rows >= 0 && static_cast<long>(a.dims[0]) != rows) {
      throw Error(input_label(i) + ": has " + std::to_string(a.dims[0]) + " rows but input 0 has " +
                  std::to_string(rows));
    }
    rows = static_cast<long>(a.dims[0]);
    if (check_finite) refuse_nonfinite(a.data, a.dims[0], plan_.input_size(i), input_label(i));
    ins.push_back(std::move(a));
  }

  std::vector<float*> out_base(n_out);
  std::vector<ArrayView> outs;
  nb::object result;
  if (!out.is_none()) {
    std::vector<nb::handle> items = n_out == 1 ? std::vector<nb::handle>{out} : as_sequence(out, n_out, "outputs");
    for (size_t i = 0; i < n_out; ++i) {
      ArrayView a = as_output_array(items[i], output_label(i));
      if (!shape_is(a.dims, a.ndim, plan_.output_shape(i), rows)) {
        throw Error(output_label(i) + ": expected shape " + shape_text(plan_.output_shape(i), rows) + ", got " +
                    shape_text(a.dims, a.ndim));
      }
      out_base[i] = a.data;
      outs.push_back(std::move(a));
    }
    result = nb::borrow(out);
  } else {
    nb::list list;
    for (size_t i = 0; i < n_out; ++i) {
      std::vector<int64_t> dims{rows};
      for (int d : plan_.output_shape(i)) dims.push_back(d);
      list.append(new_float_array(dims.data(), dims.size(), &out_base[i]));
    }
    result = n_out == 1 ? nb::object(list[0]) : nb::object(list);
  }

  std::vector<const float*> in_ptrs(n_in);
  std::vector<float*> out_ptrs(n_out);
  BusyGuard guard(busy_);
  nb::gil_scoped_release unlocked;
  if (by_rows_ && rows <= INT_MAX) {  // sliced by kBatchRows inside run_rows
    plan_.run_rows(ins[0].data, static_cast<int>(rows), out_base[0]);
    return result;
  }
  for (long r = 0; r < rows; ++r) {
    for (size_t i = 0; i < n_in; ++i) in_ptrs[i] = ins[i].data + static_cast<size_t>(r) * plan_.input_size(i);
    for (size_t i = 0; i < n_out; ++i) out_ptrs[i] = out_base[i] + static_cast<size_t>(r) * plan_.output_size(i);
    plan_.run(in_ptrs.data(), out_ptrs.data());
  }
  return result;
}

void PyPlan::reset_state() {
  BusyGuard guard(busy_);
  plan_.reset_state();
}

PyPlan PyPlan::clone() const { return PyPlan(plan_.clone(), input_names_, output_names_); }

std::string PyPlan::repr() const {
  std::string s = std::string("<tickinfer.Plan mode=") + mode_name(plan_.mode()) + " isa=" + plan_.isa() + " inputs=[";
  for (size_t i = 0; i < plan_.num_inputs(); ++i) s += (i ? ", " : "") + shape_text(plan_.input_shape(i));
  s += "] outputs=[";
  for (size_t i = 0; i < plan_.num_outputs(); ++i) s += (i ? ", " : "") + shape_text(plan_.output_shape(i));
  return s + "]>";
}

void bind_plan(nb::module_& m) {
  using namespace nb::literals;
  nb::class_<PyPlan>(m, "Plan",
                     "A compiled model: packed weights plus one private arena (and, in stream mode, the\n"
                     "recurrent state). Made by Model.compile(). One call at a time per plan: give each\n"
                     "thread its own plan.clone() (clones share the packed weights).")
      .def("run", &PyPlan::run, "x"_a, "out"_a = nb::none(), "check_finite"_a = true,
           nb::sig("def run(self, x: numpy.typing.ArrayLike | typing.Sequence[numpy.typing.ArrayLike], "
                   "out: numpy.typing.NDArray[numpy.float32] | typing.Sequence[numpy.typing.NDArray[numpy.float32]] "
                   "| None = None, check_finite: bool = True) -> typing.Any"),
           "Runs the plan once.\n\n"
           "x: the input, shaped like input_shapes[0] (optionally with a leading axis of 1); a list\n"
           "of arrays for a model with several inputs. A C-contiguous float32 array is read in\n"
           "place (no copy); anything else is converted to one first.\n"
           "out: optional writable C-contiguous float32 array(s), written in place and returned;\n"
           "with it the call allocates nothing. Otherwise new arrays are returned (a list when\n"
           "the model has several outputs).\n"
           "check_finite: refuse inputs holding NaN or Inf (tickinfer.Error).\n"
           "Stream mode: x is one tick ([features]); the recurrent state carries to the next call.\n"
           "Raises tickinfer.Error on a wrong shape, a non-finite input or concurrent use.")
      .def("run_into",
           [](PyPlan& p, nb::handle x, nb::handle out) { return p.run(x, out, true); }, "x"_a, "out"_a,
           nb::sig("def run_into(self, x: numpy.typing.ArrayLike | typing.Sequence[numpy.typing.ArrayLike], "
                   "out: numpy.typing.NDArray[numpy.float32] | typing.Sequence[numpy.typing.NDArray[numpy.float32]]"
                   ") -> typing.Any"),
           "run(x, out=out) with positional arguments only: the cheapest call from Python (no\n"
           "keyword parsing, no allocation). Returns out.")
      .def("run_batch", &PyPlan::run_batch, "x"_a, "out"_a = nb::none(), "check_finite"_a = true,
           nb::sig("def run_batch(self, x: numpy.typing.ArrayLike | typing.Sequence[numpy.typing.ArrayLike], "
                   "out: numpy.typing.NDArray[numpy.float32] | typing.Sequence[numpy.typing.NDArray[numpy.float32]] "
                   "| None = None, check_finite: bool = True) -> typing.Any"),
           "Runs N rows back to back in C++ with the GIL released.\n\n"
           "x: shaped [N, *input_shapes[i]] (a list for several inputs, same N).\n"
           "Window mode: N independent rows, the same as N run() calls.\n"
           "Stream mode: N consecutive ticks of one sequence; the state carries across the rows\n"
           "and on to the next call (reset_state() starts a new sequence).\n"
           "out: optional [N, *output_shapes[i]] float32 array(s) written in place.")
      .def("reset_state", &PyPlan::reset_state,
           "Stream mode: zero the recurrent state (start of a new sequence). Window mode: no-op.")
      .def("clone", &PyPlan::clone, "A new plan sharing these packed weights, with its own arena and state.")
      .def("describe", [](const PyPlan& p) { return p.plan().describe(); }, "The compiled steps, one per line.")
      .def_prop_ro("mode", [](const PyPlan& p) { return std::string(mode_name(p.plan().mode())); },
                   "'window' or 'stream'.")
      .def_prop_ro("isa", [](const PyPlan& p) { return std::string(p.plan().isa()); }, "Kernel set in use.")
      .def_prop_ro("input_names", &PyPlan::input_names)
      .def_prop_ro("output_names", &PyPlan::output_names)
      .def_prop_ro("input_shapes",
                   [](const PyPlan& p) {
                     nb::list l;
                     for (size_t i = 0; i < p.plan().num_inputs(); ++i) l.append(shape_tuple(p.plan().input_shape(i)));
                     return l;
                   },
                   "Per-run input shapes (no batch axis; [features] in stream mode).")
      .def_prop_ro("output_shapes",
                   [](const PyPlan& p) {
                     nb::list l;
                     for (size_t i = 0; i < p.plan().num_outputs(); ++i) l.append(shape_tuple(p.plan().output_shape(i)));
                     return l;
                   },
                   "Per-run output shapes.")
      .def_prop_ro("arena_bytes", [](const PyPlan& p) { return p.plan().arena_bytes(); },
                   "Activation and state scratch owned by this plan, in bytes.")
      .def_prop_ro("flops", [](const PyPlan& p) { return p.plan().flops(); }, "FLOPs of one run (2 per multiply-add).")
      .def_prop_ro("weight_bytes", [](const PyPlan& p) { return p.plan().weight_bytes(); },
                   "Bytes of fp32 weights one run reads.")
      .def_prop_ro("weight_footprint_bytes", [](const PyPlan& p) { return p.plan().weight_footprint_bytes(); },
                   "Bytes of packed weights kept resident (shared by clones).")
      .def("__repr__", &PyPlan::repr);
}

}  // namespace tickinfer::python
