// The `tickinfer._tickinfer` extension: Model (load, inspect, compile), Plan (py_plan.cpp) and
// FeatureStore (feature_store.cpp).
// Engine errors (tickinfer::Error) surface as tickinfer.Error with the engine's message.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "array_args.hpp"
#include "feature_store.hpp"
#include "itch_reader.hpp"
#include "py_plan.hpp"
#include "tickinfer/tickinfer.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace tickinfer::python {
namespace {

nb::tuple shape_tuple(const Shape& s) {
  nb::list l;
  for (int d : s) l.append(d);
  return nb::tuple(l);
}

// A loaded model and the file it came from. Immutable; compile() may be called any number of
// times (different modes, kernel sets) and from any thread.
struct PyModel {
  Model model;
  std::string path;
};

RecurrentMode parse_mode(const std::string& mode) {
  if (mode == "window") return RecurrentMode::Window;
  if (mode == "stream") return RecurrentMode::Stream;
  throw Error("compile: mode must be 'window' or 'stream', got '" + mode + "'");
}

RoundingMode parse_rounding(const std::string& rounding) {
  if (rounding == "tflite") return RoundingMode::Tflite;
  if (rounding == "double") return RoundingMode::Double;
  if (rounding == "single") return RoundingMode::Single;
  throw Error("compile: rounding must be 'tflite', 'double' or 'single', got '" + rounding + "'");
}

PyPlan compile_model(const PyModel& m, const std::string& isa, const std::string& mode, int window_length,
                     const std::string& rounding, const std::string& device, bool incremental,
                     const std::string& cuda_form, const std::string& cuda_precision) {
  if (window_length < 0) throw Error("compile: window_length must be >= 0, got " + std::to_string(window_length));
  CompileOptions options;
  options.isa = isa;
  options.mode = parse_mode(mode);
  options.rounding = parse_rounding(rounding);
  options.window_length = window_length;
  options.device = device;
  options.incremental = incremental;
  options.cuda_form = cuda_form;
  options.cuda_precision = cuda_precision;
  Plan plan = [&] {
    nb::gil_scoped_release unlocked;  // packing large weights takes a while; nothing here needs Python
    return compile(m.model, options);
  }();
  std::vector<std::string> in_names, out_names;
  for (const TensorInfo& t : m.model.inputs()) in_names.push_back(t.name);
  for (const TensorInfo& t : m.model.outputs()) out_names.push_back(t.name);
  return PyPlan(std::move(plan), std::move(in_names), std::move(out_names));
}

}  // namespace
}  // namespace tickinfer::python

NB_MODULE(_tickinfer, m) {
  using namespace tickinfer;
  using namespace tickinfer::python;
  m.doc() = "tickinfer: Keras models compiled to allocation-free plans, batch 1, from Python.";

  init_numpy();
  nb::exception<Error>(m, "Error", PyExc_RuntimeError);
  bind_feature_store(m);
  bind_feature_ring(m);
  bind_itch(m);

  nb::class_<TensorInfo>(m, "TensorInfo", "A model input or output: Keras layer name and shape (no batch axis).")
      .def_ro("name", &TensorInfo::name)
      .def_prop_ro("shape", [](const TensorInfo& t) { return shape_tuple(t.shape); })
      .def("__repr__", [](const TensorInfo& t) {
        return "TensorInfo(name='" + t.name + "', shape=" + nb::repr(shape_tuple(t.shape)).c_str() + ")";
      });

  nb::class_<LayerStats>(m, "LayerStats", "Static cost of one layer for one window-mode inference.")
      .def_ro("name", &LayerStats::name)
      .def_ro("keras_class", &LayerStats::keras_class)
      .def_prop_ro("output_shape", [](const LayerStats& l) { return shape_tuple(l.output_shape); })
      .def_ro("params", &LayerStats::params)
      .def_ro("flops", &LayerStats::flops, "2 per multiply-add, 1 per elementwise op")
      .def_ro("weight_bytes", &LayerStats::weight_bytes, "fp32 weight bytes read per inference");

  nb::class_<ModelStats>(m, "ModelStats", "Static cost of one inference (batch 1, window mode).")
      .def_ro("layers", &ModelStats::layers)
      .def_ro("params", &ModelStats::params)
      .def_ro("flops", &ModelStats::flops)
      .def_ro("weight_bytes", &ModelStats::weight_bytes);

  bind_plan(m);

  nb::class_<PyModel>(m, "Model", "A loaded Keras model (immutable; safe to share between threads).")
      .def_ro("path", &PyModel::path, "The file it was loaded from.")
      .def_prop_ro("inputs", [](const PyModel& p) { return p.model.inputs(); }, "list[TensorInfo], in order.")
      .def_prop_ro("outputs", [](const PyModel& p) { return p.model.outputs(); }, "list[TensorInfo], in order.")
      .def("stats", [](const PyModel& p) { return p.model.stats(); }, "Parameters, FLOPs and weight bytes per layer.")
      .def("compile", &compile_model, "isa"_a = "", "mode"_a = "window", "window_length"_a = 0, "rounding"_a = "tflite",
           "device"_a = "cpu", "incremental"_a = false, "cuda_form"_a = "auto", "cuda_precision"_a = "fp32",
           "Compiles a Plan.\n\n"
           "isa: '' for the fastest kernels this CPU supports (or $TICKINFER_ISA), or one of\n"
           "'scalar', 'portable', 'avx2', 'avx512' (tickinfer.Error if the CPU lacks it).\n"
           "mode: 'window' (each run takes the whole [T, features] window, state from zero: what\n"
           "Keras computes) or 'stream' (one tick per run, recurrent state carried).\n"
           "window_length: window mode, for an input saved with an unknown time length.\n"
           "rounding: TFLite and quantized models' int8 requantization: 'tflite' (as the TFLite\n"
           "interpreters on PyPI), 'double' (a default TFLite source build) or 'single'\n"
           "(a TFLITE_SINGLE_ROUNDING build).\n"
           "device: 'cpu', or 'cuda' / 'cuda:N' for that GPU (a resident kernel for an LSTM stack\n"
           "with a Dense head, the CUDA graph or program form for any other Keras graph, the integer program\n"
           "with TFLite's bits for an int8 TFLite or .tkq file; docs/gpu.md).\n"
           "incremental: window mode; when a window is the previous one moved by one row,\n"
           "convolutions and per-row layers recompute only the rows that change (docs/incremental.md).\n"
           "cuda_form: with device 'cuda': 'auto' (the resident LSTM kernel for an LSTM stack, else\n"
           "the graph or program form, whichever the card runs faster), 'graph' (the CUDA graph form for every model)\n"
           "or 'program' (one never-exiting kernel that polls for requests; docs/gpu.md).\n"
           "cuda_precision: with device 'cuda': the weight matrices' storage, 'fp32', 'fp16' or 'bf16',\n"
           "or 'W/A' for the matrices and the layer outputs ('fp16/fp16'), then ',LAYER=FORMAT' per\n"
           "layer (`tickinfer cuda-precision` measures each layer's error).\n"
           "Raises tickinfer.Error (e.g. stream mode on a model with a Flatten over time).")
      .def("__repr__", [](const PyModel& p) {
        std::string s = "<tickinfer.Model '" + p.path + "' inputs=[";
        auto ins = p.model.inputs();
        for (size_t i = 0; i < ins.size(); ++i) s += (i ? ", " : "") + ins[i].name;
        return s + "]>";
      });

  // Test hook: the address run() would read input `x` from (after any conversion), so tests
  // can prove a C-contiguous float32 array is used in place.
  m.def("_input_address", [](nb::handle x) {
    ArrayView v = as_input_array(x, "x");
    return reinterpret_cast<uintptr_t>(v.data);
  });

  m.def(
      "load",
      [](const std::string& path, const std::string& tflite_engine) {
        LoadOptions options;
        options.tflite_engine = parse_tflite_engine(tflite_engine);  // an Error naming a bad value
        nb::gil_scoped_release unlocked;
        return PyModel{Model::load(path, options), path};
      },
      "path"_a, "tflite_engine"_a = "auto",
      "Loads a model file (Keras .keras / .h5, SavedModel, ONNX, TFLite, .tkq; detected from the content).\n"
      "tflite_engine: a float TFLite file on the graph engine when it lifts ('auto'), always on the TFLite\n"
      "interpreter ('interpreter'), or the graph engine or an error ('graph').\n"
      "Raises tickinfer.Error naming the file, layer and option for anything unreadable or unsupported.");
}
