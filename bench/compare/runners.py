"""One function per runtime: given a bench-suite model, return a callable f(x) -> y for one
batch-1 inference through that runtime's Python API, set up for single-thread latency.

x is a C-contiguous float32 array of shape [1, *input_shape]; y is the model's single output
as a numpy array of shape [1, *output_shape]. A model with several inputs (ctx["input_shapes"]
longer than one: the multi-horizon DeepLOBs' snapshot window and decoder start) gets x as a
tuple of such arrays, in the Keras model's input order, and callables written for that; the
single-input callables stay as they are (no per-call branch). Every callable is what a user of
that runtime would write; none keeps state between calls that another runtime does not (window
mode).
"""
import functools

import numpy as np


def keras_order(ctx, shapes, names):
    """For each Keras input (ctx["input_shapes"], batch 1), the position among a converted file's
    inputs (`shapes`, `names` in the file's order) that holds it: by shape where that is unique
    (a converter may list inputs in any order), else by name."""
    want = [(1,) + tuple(s) for s in ctx["input_shapes"]]
    have = [tuple(int(d) for d in s) for s in shapes]
    if len(set(want)) == len(want) and sorted(want) == sorted(have):
        return [have.index(w) for w in want]
    return sorted(range(len(names)), key=lambda k: names[k])


def tickinfer_python(ctx, out_buffer=False, mode="window", file="model_path", device="cpu"):
    """The engine through its Python module: plan.run(x) returns a new array (as the peers do);
    with out_buffer, plan.run_into(x, buf) writes a preallocated array (no allocation per call).
    mode="stream": x is one tick ([1, features]); the recurrent state carries between calls.
    file: which of the model's files (the Keras model, or a .tkq from quantized.py).
    device="cuda": the GPU plan (the resident kernel for an LSTM stack, else the CUDA graph form)."""
    import tickinfer
    plan = tickinfer.load(ctx[file]).compile(mode=mode, device=device)
    if len(ctx["input_shapes"]) > 1:  # the inputs as a list, the Python module's form
        out = np.empty((1,) + plan.output_shapes[0], np.float32)
        run, run_into = plan.run, plan.run_into

        def call_many(x):
            return run_into(list(x), out) if out_buffer else run(list(x))
        call_many.keepalive = plan
        return call_many
    if out_buffer:
        out = np.empty((1,) + plan.output_shapes[0], np.float32)
        run_into = plan.run_into

        def call(x):
            return run_into(x, out)
        call.keepalive = plan
        return call
    return plan.run  # the bound method itself: no Python wrapper frame


def litert(ctx, file="tflite"):
    """LiteRT interpreter on the converted .tflite, 1 thread (the default XNNPACK delegate)."""
    from ai_edge_litert.interpreter import Interpreter
    it = Interpreter(model_path=ctx[file], num_threads=1)
    it.allocate_tensors()
    i = it.get_input_details()[0]["index"]
    o = it.get_output_details()[0]["index"]
    set_tensor, invoke, get_tensor = it.set_tensor, it.invoke, it.get_tensor
    if len(ctx["input_shapes"]) > 1:
        details = it.get_input_details()
        order = keras_order(ctx, [d["shape"] for d in details], [d["name"] for d in details])
        ins = [details[k]["index"] for k in order]

        def call_many(x):
            for t, v in zip(ins, x):
                set_tensor(t, v)
            invoke()
            return get_tensor(o)
        call_many.keepalive = it
        return call_many

    def call(x):
        set_tensor(i, x)
        invoke()
        return get_tensor(o)
    call.keepalive = it
    return call


def onnxruntime(ctx, spinning, file="onnx"):
    """ONNX Runtime CPU provider on the tf2onnx model: 1 intra-op and 1 inter-op thread,
    sequential execution, full graph optimisation; intra-op spinning on or off."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
    so.add_session_config_entry("session.inter_op.allow_spinning", "1" if spinning else "0")
    sess = ort.InferenceSession(ctx[file], so, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    outs = [sess.get_outputs()[0].name]
    run = sess.run
    if len(ctx["input_shapes"]) > 1:
        names = [i.name for i in sess.get_inputs()]

        def call_many(x):
            return run(outs, dict(zip(names, x)))[0]
        call_many.keepalive = sess
        return call_many

    def call(x):
        return run(outs, {name: x})[0]
    call.keepalive = sess
    return call


def openvino(ctx):
    """OpenVINO CPU plugin on the .tflite: latency hint, 1 stream, 1 inference thread, fp32.
    Without the precision hint the plugin runs bf16 on CPUs with AVX512_BF16 or AMX (its default
    there), which is a different precision, not a faster fp32: the outputs then miss Keras by
    1e-3 and the row is not timed."""
    import openvino as ov
    core = ov.Core()
    model = core.read_model(ctx["tflite"])
    compiled = core.compile_model(model, "CPU", {"PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": "1",
                                                 "INFERENCE_NUM_THREADS": "1",
                                                 "INFERENCE_PRECISION_HINT": "f32"})
    req = compiled.create_infer_request()
    infer = req.infer
    if len(ctx["input_shapes"]) > 1:
        ports = compiled.inputs
        order = keras_order(ctx, [list(p.get_shape()) for p in ports], [p.get_any_name() for p in ports])
        where = {k: i for i, k in enumerate(order)}  # file input k <- Keras input where[k]

        def call_many(x):
            return infer([x[where[k]] for k in range(len(x))], share_inputs=True)[0]
        call_many.keepalive = (core, compiled, req)
        return call_many

    def call(x):
        return infer([x], share_inputs=True)[0]
    call.keepalive = (core, compiled, req)
    return call


def tf_keras_call(ctx):
    """TensorFlow eager: the Keras model called directly, model(x, training=False)."""
    model = ctx["keras_model"]
    if len(ctx["input_shapes"]) > 1:
        return lambda x: model(list(x), training=False).numpy()

    def call(x):
        return model(x, training=False).numpy()
    return call


def tf_function(ctx):
    """TensorFlow graph mode: the same call wrapped in a tf.function with a fixed signature."""
    import tensorflow as tf
    model = ctx["keras_model"]
    if len(ctx["input_shapes"]) > 1:
        specs = [tf.TensorSpec((1,) + tuple(s), tf.float32) for s in ctx["input_shapes"]]
        fn_many = tf.function(lambda *x: model(list(x), training=False), input_signature=specs)
        return lambda x: fn_many(*x).numpy()
    spec = tf.TensorSpec((1,) + tuple(ctx["input_shape"]), tf.float32)
    fn = tf.function(lambda x: model(x, training=False), input_signature=[spec])

    def call(x):
        return fn(x).numpy()
    return call


def _torch_single_thread(torch):
    # Thread counts can be set once per process, before torch runs anything in parallel.
    if getattr(_torch_single_thread, "done", False):
        return
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    _torch_single_thread.done = True


def pytorch(ctx):
    """PyTorch eager, 1 thread, inference_mode, the same weights (see torch_port.py)."""
    import torch
    from torch_port import port
    _torch_single_thread(torch)
    module = port(ctx["keras_model"]).eval()
    from_numpy = torch.from_numpy

    if len(ctx["input_shapes"]) > 1:
        def call_many(x):
            with torch.inference_mode():
                return module(*[from_numpy(v) for v in x]).numpy()
        call_many.keepalive = module
        return call_many

    def call(x):
        with torch.inference_mode():
            return module(from_numpy(x)).numpy()
    call.keepalive = module
    return call


def pytorch_cuda(ctx, graph=False):
    """PyTorch on the GPU, the same weights (torch_port.py): the input copied from pinned memory,
    the module, the output copied back, one synchronise per call; graph=True captures that once
    in a torch.cuda.CUDAGraph and replays it (PyTorch's lowest-overhead form for a fixed shape).
    TF32 off, so the products are fp32 as tickinfer's."""
    import torch
    from torch_port import port
    if len(ctx["input_shapes"]) > 1:
        raise NotImplementedError("the GPU rows take single-input models")
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    module = port(ctx["keras_model"]).eval().to(dev)
    x_pin = torch.zeros((1,) + tuple(ctx["input_shape"])).pin_memory()
    x_dev = torch.zeros(x_pin.shape, device=dev)
    with torch.inference_mode():
        y_pin = torch.zeros(module(x_dev).shape).pin_memory()
    x_np, y_np = x_pin.numpy(), y_pin.numpy()

    def body():
        x_dev.copy_(x_pin, non_blocking=True)
        y_pin.copy_(module(x_dev), non_blocking=True)

    stream = torch.cuda.current_stream()
    with torch.inference_mode():
        side = torch.cuda.Stream()  # warm-up off the capture stream, as torch.cuda.graph asks
        side.wait_stream(stream)
        with torch.cuda.stream(side):
            for _ in range(3):
                body()
        stream.wait_stream(side)
        torch.cuda.synchronize()
        run = body
        if graph:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                body()
            run = g.replay

    def call(x):
        x_np[...] = x
        with torch.inference_mode():
            run()
        stream.synchronize()
        return y_np.copy()
    call.keepalive = (module, x_pin, x_dev, y_pin, run)
    return call


def onnxruntime_cuda(ctx, file="onnx"):
    """ONNX Runtime's CUDA execution provider on the tf2onnx file, where the installed package
    has it (onnxruntime-gpu); refused by name otherwise."""
    import onnxruntime as ort
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        raise NotImplementedError("this onnxruntime has no CUDAExecutionProvider (onnxruntime-gpu is not installed)")
    sess = ort.InferenceSession(ctx[file], providers=["CUDAExecutionProvider"])
    if len(sess.get_inputs()) > 1:
        raise NotImplementedError("the GPU rows take single-input models")
    name = sess.get_inputs()[0].name
    run = sess.run

    def call(x):
        return run(None, {name: x})[0]
    call.keepalive = sess
    return call


# name -> (factory, label for tables). Order is the table's order.
PEERS = {
    "litert": (litert, "LiteRT (XNNPACK, 1 thread)"),
    "onnxruntime_spin": (functools.partial(onnxruntime, spinning=True), "ONNX Runtime (1 thread, spinning on)"),
    "onnxruntime_nospin": (functools.partial(onnxruntime, spinning=False), "ONNX Runtime (1 thread, spinning off)"),
    "openvino": (openvino, "OpenVINO (latency hint, 1 stream, 1 thread)"),
    "tf_keras": (tf_keras_call, "TensorFlow: Keras model call"),
    "tf_function": (tf_function, "TensorFlow: tf.function"),
}
# Quantized rows: checked against Keras at a quantization tolerance (run.py's --quant-tolerance),
# never counted as "fastest peer" for the fp32 bars; the quantization bar (report.py) takes each
# engine's fastest row of any precision within that tolerance.
INT8 = {
    "litert_int8": (functools.partial(litert, file="tflite_int8"), "LiteRT int8 dynamic-range (XNNPACK, 1 thread)"),
    "litert_full_int8": (functools.partial(litert, file="tflite_full_int8"),
                         "LiteRT full int8, calibrated (XNNPACK, 1 thread)"),
    "onnxruntime_int8": (functools.partial(onnxruntime, spinning=False, file="onnx_int8"),
                         "ONNX Runtime int8 quantize_dynamic (1 thread)"),
}
# row -> the converted file it runs (a conversion that failed leaves FILE.failed saying why)
INT8_FILES = {"litert_int8": "tflite_int8", "litert_full_int8": "tflite_full_int8", "onnxruntime_int8": "onnx_int8",
              "tickinfer_python_int8": "tkq_int8", "tickinfer_python_dynamic": "tkq_dynamic",
              "tickinfer_python_auto": "tkq_auto", "tickinfer_python_tflite_dynamic": "tflite_int8",
              "tickinfer_python_tflite_int8": "tflite_full_int8"}
TICKINFER_QUANTIZED = {
    "tickinfer_python_int8": (functools.partial(tickinfer_python, file="tkq_int8"),
                              "tickinfer via Python: plan.run(x), --mode int8 .tkq (full int8 where the layer has it)"),
    "tickinfer_python_dynamic": (functools.partial(tickinfer_python, file="tkq_dynamic"),
                                 "tickinfer via Python: plan.run(x), dynamic-range .tkq"),
    "tickinfer_python_auto": (functools.partial(tickinfer_python, file="tkq_auto"),
                              "tickinfer via Python: plan.run(x), auto .tkq (--max-error 0.01)"),
    # The converter's own quantized files, which tickinfer runs too (its TFLite interpreter, int8
    # bit for bit with TFLite's reference kernels): the quantized form a user of a model that
    # `tickinfer quantize` refuses (Conv2D, attention) still has.
    "tickinfer_python_tflite_dynamic": (functools.partial(tickinfer_python, file="tflite_int8"),
                                        "tickinfer via Python: plan.run(x), the converter's dynamic-range .tflite"),
    "tickinfer_python_tflite_int8": (functools.partial(tickinfer_python, file="tflite_full_int8"),
                                     "tickinfer via Python: plan.run(x), the converter's full-int8 .tflite"),
}
# The precision of each row's arithmetic (every other row is fp32).
PRECISION = {"litert_int8": "dynamic", "litert_full_int8": "int8", "onnxruntime_int8": "dynamic",
             "tickinfer_python_int8": "int8", "tickinfer_python_dynamic": "dynamic", "tickinfer_python_auto": "auto",
             "tickinfer_python_tflite_dynamic": "tflite dynamic", "tickinfer_python_tflite_int8": "tflite int8"}
TORCH = {"pytorch": (pytorch, "PyTorch eager (1 thread)")}
TICKINFER = {
    "tickinfer_python": (tickinfer_python, "tickinfer via Python: plan.run(x)"),
    "tickinfer_python_out": (functools.partial(tickinfer_python, out_buffer=True),
                             "tickinfer via Python: plan.run_into(x, buf)"),
}
# `run.py --device cuda`: tickinfer's GPU plan and the peers a desk would put on the same card.
# Their rows carry device "cuda" and are never counted among the CPU bars' peers.
GPU = {
    "tickinfer_cuda": (functools.partial(tickinfer_python, device="cuda"),
                       "tickinfer on the GPU via Python: plan.run(x), compile(device=\"cuda\")"),
    "pytorch_cuda": (pytorch_cuda, "PyTorch eager on the GPU (pinned copies, one synchronise)"),
    "pytorch_cuda_graph": (functools.partial(pytorch_cuda, graph=True), "PyTorch CUDA graph (replayed per call)"),
    "onnxruntime_cuda": (onnxruntime_cuda, "ONNX Runtime, CUDA execution provider"),
}
