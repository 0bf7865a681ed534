#!/usr/bin/env python3
"""tickinfer side by side with the runtimes a desk would otherwise use, on the bench suite.

    make compare                       (builds the module, creates .venv-compare, runs this)
    .venv-compare/bin/python bench/compare/run.py --build build [--pin 1] [--seconds S]
                                       [--models a,b] [--suite DIR] [--with-torch] [--out DIR]
                                       [--device cuda]

For each model of the suite's manifest (--suite: bench/models, the bench suite, by default;
bench/book_models for the order-book models, `make compare COMPARE_ARGS="--suite bench/book_models"`):
 1. converts it (convert.py: SavedModel -> TFLite, tf2onnx -> ONNX; OpenVINO reads the TFLite);
 2. checks every runtime against Keras on the same inputs (64 of the timing inputs plus the
    committed in0.npy rows, whose Keras outputs out0.npy are checked too) BEFORE any timing;
    a runtime that disagrees is not timed and the command exits non-zero;
 3. measures per-call latency at batch 1: warm-up, then each call timed alone with
    time.perf_counter_ns, cycling through 1024 inputs drawn N(0, 1) with a fixed seed (the same
    inputs for every runtime), until --seconds have passed and at least --min-calls calls;
    exact p50/p99/p99.9 of the samples;
 4. runs tickinfer natively (`tickinfer bench --json`, the C++ harness: rdtsc per call over its
    own 1024 N(0, 1) inputs) for the production number;
 5. unless --no-int8: the quantized forms of both sides from the same 200 calibration windows
    (another seeded N(0, 1) draw): LiteRT dynamic-range and full int8 (convert.py), tickinfer's
    `quantize --mode int8|dynamic|auto` (quantized.py), checked against Keras at
    --quant-tolerance on the 64 N(0, 1) agreement inputs (not on the committed edge-case rows),
    timed the same way; the quantization bar compares each engine's fastest form within that
    tolerance.
--device cuda adds the GPU section on the machine's card: tickinfer's GPU plan (compile(device=
"cuda")), PyTorch eager and in a CUDA graph (the same weights), ONNX Runtime's CUDA provider where
onnxruntime-gpu is installed; each checked against Keras first, timed host to host per call like
the rest, reported in a table of its own and never counted among the CPU bars' peers.
Recurrent models are compared in window mode (what every peer computes: the whole window, state
from zero). tickinfer's stream mode (one tick per call, state carried) is listed below them as
what a streaming deployment would run; no peer offers it.

Prints a markdown table and the issue's bars, writes OUT/compare.json, OUT/compare.md and a
log-scale bar chart OUT/compare.png (OUT defaults to BUILD/compare).
"""
import argparse
import json
import os
import pathlib
import platform
import subprocess
import sys
import time

# numpy's OpenBLAS would start a spinning thread per core; pinned to one CPU with every runtime,
# it would take time from whichever runtime is being timed. No runtime here calls BLAS through
# numpy, so one thread is the fair setting for all of them.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

RECURRENT = ("lstm_window", "gru_window", "lstm_tiny")
BAR_MODELS = ("mlp_small", "mlp_large", "lstm_window", "gru_window", "tcn", "lstm_tiny")
RTOL, ATOL = 1e-4, 1e-5  # peers sum in other orders (XNNPACK, oneDNN, MLAS): float32 noise only
# Quantized rows: within 5 % of the largest reference output by default (int8 weights lose ~2-3
# significant bits); --quant-tolerance sets it.
INT8_REL = 0.05
N_INPUTS, N_CHECK, SEED = 1024, 64, 20261130
N_CALIBRATION, N_VALIDATION = 200, 500  # drawn with SEED + 1 and SEED + 2: no timing input among them


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def versions(with_torch):
    import importlib.metadata as md
    names = ["tensorflow-cpu", "keras", "numpy", "ai-edge-litert", "onnxruntime", "onnx", "tf2onnx",
             "openvino", "matplotlib"] + (["torch"] if with_torch else [])
    v = {}
    for n in names:
        try:
            v[n] = md.version(n)
        except md.PackageNotFoundError:
            v[n] = None
    v["python"] = platform.python_version()
    return v


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def timer_overhead_ns():
    pc = time.perf_counter_ns
    d = []
    for _ in range(20000):
        t0 = pc()
        t1 = pc()
        d.append(t1 - t0)
    return float(np.median(d))


def measure(call, xs, seconds, warmup_seconds, min_calls, max_calls, max_seconds):
    """Per-call latency samples in ns: each call bracketed by perf_counter_ns alone. Stops after
    `seconds` once min_calls are in, and after max_seconds in any case (TensorFlow's eager
    LSTM takes ~0.1 s per call: 1000 calls would take minutes)."""
    pc = time.perf_counter_ns
    mask = len(xs) - 1
    i = 0
    end = pc() + int(warmup_seconds * 1e9)
    while pc() < end or i < 20:
        call(xs[i & mask])
        i += 1
    samples = np.empty(max_calls, np.int64)
    start = pc()
    end, hard_end = start + int(seconds * 1e9), start + int(max_seconds * 1e9)
    n = 0
    while n < max_calls:
        x = xs[n & mask]
        t0 = pc()
        call(x)
        t1 = pc()
        samples[n] = t1 - t0
        n += 1
        if t1 >= end and (n >= min_calls or t1 >= hard_end):
            break
    return samples[:n]


def summarize(samples):
    p = np.percentile(samples, [50, 90, 99, 99.9])
    return {"p50_ns": float(p[0]), "p90_ns": float(p[1]), "p99_ns": float(p[2]), "p999_ns": float(p[3]),
            "max_ns": float(samples.max()), "mean_ns": float(samples.mean()), "calls": int(samples.size)}


def agreement(got, want, quant_rel=None):
    """Worst |got - want| - (ATOL + RTOL |want|) over all elements: <= 0 means agreement. A
    quantized row (quant_rel given): |got - want| <= quant_rel * max |want|."""
    got = np.asarray(got, np.float64).reshape(want.shape)
    bound = quant_rel * float(np.abs(want).max()) if quant_rel is not None else ATOL + RTOL * np.abs(want)
    excess = np.abs(got - want) - bound
    return float(excess.max()), float(np.abs(got - want).max())


def native_bench(build, model_path, mode, seconds, pin, extra=()):
    cmd = [str(pathlib.Path(build) / "tickinfer"), "bench", str(model_path), "--mode", mode,
           "--seconds", str(seconds), "--json", "--floor", *extra]
    if pin is not None:
        cmd += ["--pin", str(pin)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    return {k: float(r[k]) for k in ("p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns", "mean_ns")} | {
        "calls": int(r.get("runs", 0)), "isa": r.get("isa"),
        "timer_overhead_ns": r.get("timer_overhead_ns"), "flops": int(r["flops"]),
        "weight_bytes": int(r["weight_bytes"]), "weight_footprint_bytes": int(r["weight_footprint_bytes"])}


def add_floors(build, results):
    """The floor of each native row, measured now by bench/floor_probe as tools/bench_suite.py
    does: max(FLOPs / peak FMA rate, weight bytes read / read bandwidth at the plan's working
    set). A bar that needs tickinfer below its floor cannot be met by any code on this core."""
    native = [r for r in results if r.get("via") == "native" and r.get("precision", "fp32") == "fp32"]
    if not native:
        return None

    def working_set(r):
        return max(min(r["weight_footprint_bytes"], r["weight_bytes"]), 1024)

    sizes = sorted({working_set(r) for r in native})
    out = subprocess.run([str(pathlib.Path(build) / "bench" / "floor_probe")] + [str(n) for n in sizes],
                         check=True, capture_output=True, text=True).stdout
    probe = json.loads(out.strip().splitlines()[-1])
    for r in native:
        compute = r["flops"] / probe["peak_gflops"]
        memory = r["weight_bytes"] / probe["read_gbps"][str(working_set(r))]
        # compute: a hard bound (no code beats the core's peak FMA rate); memory: an estimate (the
        # probe is a plain streaming loop, which a plan's access pattern can beat).
        r["compute_floor_ns"] = compute
        r["floor_ns"], r["floor_bound"] = max(compute, memory), "compute" if compute >= memory else "cache"
    return probe


def no_gpu(case, suite_dir, tickinfer):
    """Why the GPU section cannot run here ("" when it can): tickinfer's own answer for the suite's
    first model (no CUDA backend in this build, no device visible), then PyTorch's."""
    try:
        tickinfer.load(str(suite_dir / case["file"])).compile(device="cuda")
    except Exception as e:
        return str(e)
    try:
        import torch
    except ImportError:
        return "PyTorch is not installed in this venv (bench/compare/setup_venv.sh --with-torch)"
    return "" if torch.cuda.is_available() else "PyTorch sees no CUDA device"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=str(ROOT / "build"), help="CMake build dir with tickinfer and python/")
    ap.add_argument("--out", default=None, help="results dir (default BUILD/compare)")
    ap.add_argument("--models", default="", help="comma-separated subset of the suite")
    ap.add_argument("--suite", default="bench/models",
                    help="the model suite (a make_fixtures.py manifest): bench/models, or bench/book_models "
                         "for the order-book models at their published sizes")
    ap.add_argument("--seconds", type=float, default=1.5, help="timed seconds per runtime and model")
    ap.add_argument("--warmup", type=float, default=0.3, help="untimed warm-up seconds per runtime and model")
    ap.add_argument("--min-calls", type=int, default=1000, help="at least this many timed calls")
    ap.add_argument("--max-calls", type=int, default=400000)
    ap.add_argument("--max-seconds", type=float, default=6.0, help="timed seconds cap per runtime and model")
    ap.add_argument("--pin", type=int, default=None, help="pin this process (and the native bench) to a CPU")
    ap.add_argument("--no-int8", dest="int8", action="store_false",
                    help="skip the quantized rows (the peers' and tickinfer's)")
    ap.add_argument("--quant-tolerance", type=float, default=INT8_REL,
                    help="a quantized row agrees when |err| <= this x max |Keras output| (default %(default)g)")
    ap.add_argument("--with-torch", action="store_true", help="add PyTorch (bench/compare/setup_venv.sh --with-torch)")
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                    help="cuda: add the GPU section (tickinfer's GPU plan, PyTorch eager and CUDA graph, ONNX "
                         "Runtime's CUDA provider where installed) on the same card; needs PyTorch with CUDA")
    ap.add_argument("--render", metavar="JSON", help="only re-render the table and chart from a compare.json")
    args = ap.parse_args()
    started = time.perf_counter()
    if args.render:
        import report
        doc = json.load(open(args.render))
        out = pathlib.Path(args.render).parent
        (out / "compare.md").write_text(report.markdown(doc))
        report.chart(doc, out / "compare.png")
        print(report.markdown(doc))
        return 0

    build = pathlib.Path(args.build).resolve()
    suite_dir = (ROOT / args.suite).resolve()
    out_dir = pathlib.Path(args.out or build / "compare")
    out_dir.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(build / "python"))
    if args.pin is not None:
        os.sched_setaffinity(0, {args.pin})  # every thread any runtime starts inherits it
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    import keras
    import tickinfer
    import convert
    import quantized
    import report
    import runners

    manifest = json.load(open(suite_dir / "manifest.json"))
    cases = manifest["cases"]
    if args.models:
        wanted = args.models.split(",")
        cases = [c for c in cases if c["name"] in wanted]
    ver = versions(args.with_torch or args.device == "cuda")
    rt_table = dict(runners.PEERS)
    if args.with_torch:
        rt_table.update(runners.TORCH)
    if args.device == "cuda":
        if why := no_gpu(cases[0], suite_dir, tickinfer):
            log(f"--device cuda: {why}")
            return 2
        rt_table.update(runners.GPU)
    overhead = timer_overhead_ns()
    log(f"timer: perf_counter_ns pair costs {overhead:.0f} ns (included in every Python-side sample)")

    results, failures, notes = [], [], []
    for case in cases:
        name = case["name"]
        model_path = suite_dir / case["file"]
        log(f"== {name}")
        kmodel = keras.saving.load_model(model_path)
        input_shapes = [tuple(t.shape[1:]) for t in kmodel.inputs]
        input_shape = input_shapes[0]
        many = len(input_shapes) > 1  # then every x below is a tuple, one array per input
        cal_rng, val_rng = np.random.default_rng(SEED + 1), np.random.default_rng(SEED + 2)
        calibration = [cal_rng.standard_normal((N_CALIBRATION,) + s).astype(np.float32) for s in input_shapes]
        validation = [val_rng.standard_normal((N_VALIDATION,) + s).astype(np.float32) for s in input_shapes]
        conv = convert.convert(model_path, out_dir / "models" / name, kmodel, input_shapes, ver, log, int8=args.int8,
                               calibration=calibration)
        if args.int8:
            conv |= quantized.quantize(build, model_path, out_dir / "models" / name, calibration, validation, log)
        ctx = {"model_path": str(model_path), "keras_model": kmodel, "input_shape": input_shape,
               "input_shapes": input_shapes, **conv}

        rng = np.random.default_rng(SEED)

        def draw():
            x = tuple(np.ascontiguousarray(rng.standard_normal((1,) + s), dtype=np.float32) for s in input_shapes)
            return x if many else x[0]
        xs = [draw() for _ in range(N_INPUTS)]
        # Reference: Keras itself, after checking this venv's Keras reproduces the committed outputs.
        ins = [np.load(suite_dir / f) for f in case["inputs"]]
        out0 = np.load(suite_dir / case["outputs"][0])
        rows = [tuple(np.ascontiguousarray(a[r:r + 1]) for a in ins) for r in range(ins[0].shape[0])]
        check_x = xs[:N_CHECK] + (rows if many else [r[0] for r in rows])
        ref = np.stack([kmodel(list(x) if many else x, training=False).numpy() for x in check_x])
        k_excess, _ = agreement(ref[N_CHECK:, 0], out0)
        if k_excess > 0:
            failures.append(f"{name}: Keras in this venv does not reproduce out0.npy")

        entries = dict(runners.TICKINFER) | rt_table | (runners.INT8 | runners.TICKINFER_QUANTIZED if args.int8 else {})
        for key, (factory, label) in entries.items():
            quant = key in runners.PRECISION  # a quantized row: an extra, at the quantization tolerance
            row = {"model": name, "runtime": key, "label": label, "mode": "window", "via": "python",
                   "precision": runners.PRECISION.get(key, "fp32"), "device": "cuda" if key in runners.GPU else "cpu"}
            # Each row's plan ends with its row, whatever the row's end (a GPU plan left running
            # beside the next runtime's first kernel launches could stall them; docs/gpu.md).
            call = None
            try:
                call = factory(ctx)
                # The Keras call is the reference itself (same call, same inputs): not re-run.
                got = ref if key == "tf_keras" else np.stack([np.asarray(call(x)).copy() for x in check_x])
            except Exception as e:  # a runtime that cannot run this model is reported
                row["error"] = f"{type(e).__name__}: {str(e).strip().splitlines()[-1][:200]}"
                if key in runners.INT8_FILES:
                    failed = pathlib.Path(ctx[runners.INT8_FILES[key]] + ".failed")
                    if failed.exists():
                        row["error"] = "conversion failed: " + failed.read_text()
                log(f"  {key:22s} cannot run: {row['error']}")
                # int8 rows are extras, and a peer port that does not exist yet (torch_port.py's
                # single-input models) is no fault of the model: reported, not failing the run.
                extra = quant or isinstance(e, NotImplementedError)
                (notes if extra else failures).append(f"{name}/{key}: {row['error']}")
                results.append(row)
                call = None
                continue
            if quant:
                # On the 64 inputs drawn like the calibration windows: the committed fixture rows
                # add edge cases (all zeros, inputs scaled to ~50) that a quantization calibrated on
                # N(0, 1) saturates by design, for every engine alike.
                excess, max_abs = agreement(got[:N_CHECK], ref[:N_CHECK], args.quant_tolerance)
            else:
                excess, max_abs = agreement(got, ref)
            row["max_abs_err"] = max_abs
            row["agrees"] = excess <= 0
            if not row["agrees"]:
                log(f"  {key:22s} DISAGREES with Keras (max |err| {max_abs:.3g}): not timed")
                # An int8 row outside its quantization tolerance is reported (not timed) but does
                # not fail the fp32 comparison.
                (notes if quant else failures).append(
                    f"{name}/{key}: outputs disagree with Keras (max |err| {max_abs:.3g}): not timed")
                results.append(row)
                call = None
                continue
            row.update(summarize(measure(call, xs, args.seconds, args.warmup, args.min_calls, args.max_calls, args.max_seconds)))
            log(f"  {key:22s} p50 {row['p50_ns'] / 1e3:9.2f} us  p99 {row['p99_ns'] / 1e3:9.2f} us  "
                f"(max |err| {max_abs:.2g}, {row['calls']} calls)")
            results.append(row)
            call = None

        # Native: the production path, the C++ harness.
        modes = ("window", "stream") if name in RECURRENT else ("window",)
        for mode in modes:
            row = {"model": name, "runtime": "tickinfer_native", "mode": mode, "via": "native",
                   "label": "tickinfer native (C++)" + (" stream: 1 tick/call" if mode == "stream" else "")}
            row.update(native_bench(build, model_path, mode, args.seconds, args.pin))
            log(f"  native {mode:15s} p50 {row['p50_ns'] / 1e3:9.2f} us  p99 {row['p99_ns'] / 1e3:9.2f} us")
            results.append(row)
        for key in runners.TICKINFER_QUANTIZED if args.int8 else ():
            # The same .tkq file natively, when its Python row agreed with Keras (same plan, same error).
            py = next(r for r in results if r["model"] == name and r["runtime"] == key)
            if not py.get("agrees"):
                continue
            precision = runners.PRECISION[key]
            row = {"model": name, "runtime": "tickinfer_native_" + precision.replace(" ", "_"), "mode": "window",
                   "via": "native",
                   "precision": precision, "max_abs_err": py["max_abs_err"],
                   "label": f"tickinfer native (C++), {py['label'].split(', ', 1)[1]}"}
            row.update(native_bench(build, ctx[runners.INT8_FILES[key]], "window", args.seconds, args.pin))
            log(f"  native {precision:15s} p50 {row['p50_ns'] / 1e3:9.2f} us  p99 {row['p99_ns'] / 1e3:9.2f} us")
            results.append(row)
        if manifest.get("suite", "").startswith("book"):
            # A book model sees a window that moves one snapshot per event: the whole-window plan
            # and the incremental plan (CompileOptions::incremental) on the same sliding windows.
            for mode, extra, label in (("window-slide", ["--slide"], "tickinfer native (C++), sliding windows, whole run"),
                                       ("incremental", ["--slide", "--incremental"],
                                        "tickinfer native (C++), sliding windows, incremental update")):
                row = {"model": name, "runtime": "tickinfer_native", "mode": mode, "via": "native", "label": label}
                row.update(native_bench(build, model_path, "window", args.seconds, args.pin, extra))
                log(f"  native {mode:15s} p50 {row['p50_ns'] / 1e3:9.2f} us  p99 {row['p99_ns'] / 1e3:9.2f} us")
                results.append(row)
        if name in RECURRENT:
            # Python, stream mode: one tick per call; checked against Keras on each prefix of the
            # committed stream fixture when there is one.
            call = runners.tickinfer_python(ctx, mode="stream")
            plan_in = (1,) + tuple(input_shape[1:])
            ticks = [np.ascontiguousarray(x[:, -1]).reshape(plan_in) for x in xs]
            row = {"model": name, "runtime": "tickinfer_python_stream", "mode": "stream", "via": "python",
                   "label": "tickinfer via Python stream: 1 tick/call"}
            if case.get("stream"):  # Keras on every prefix of the committed stream sequences
                plan = call.__self__
                s_in = np.load(suite_dir / case["stream"]["inputs"])    # [N, T, F]
                s_out = np.load(suite_dir / case["stream"]["outputs"])  # [N, T, out]
                got = []
                for seq in s_in:
                    plan.reset_state()
                    got.append([np.asarray(plan.run(np.ascontiguousarray(t))).copy() for t in seq])
                excess, row["max_abs_err"] = agreement(np.array(got), s_out.astype(np.float64))
                if excess > 0:
                    failures.append(f"{name}/tickinfer_python_stream: disagrees with Keras on the stream fixture")
                plan.reset_state()
            row.update(summarize(measure(call, ticks, args.seconds, args.warmup, args.min_calls, args.max_calls, args.max_seconds)))
            log(f"  python stream          p50 {row['p50_ns'] / 1e3:9.2f} us")
            results.append(row)
        del kmodel, ctx

    probe = add_floors(build, results)
    meta = {"cpu": cpu_name(), "kernel": platform.release(), "pinned_cpu": args.pin,
            "cores_online": os.cpu_count(), "versions": ver, "tickinfer_isa": next(
                (r.get("isa") for r in results if r.get("via") == "native"), None),
            "seconds_per_runtime": args.seconds, "warmup_seconds": args.warmup, "min_calls": args.min_calls,
            "inputs": f"{N_INPUTS} sets N(0,1), seed {SEED}, batch 1", "rtol": RTOL, "atol": ATOL,
            "int8_tolerance": f"|err| <= {args.quant_tolerance:g} x max |Keras output|",
            "quant_tolerance": args.quant_tolerance,
            "timer_overhead_ns": overhead, "failures": failures, "notes": notes, "floor_probe": probe,
            "wall_seconds": time.perf_counter() - started}
    bars = report.bars(results, BAR_MODELS if args.suite == "bench/models" else [c["name"] for c in cases])
    doc = {"meta": meta, "results": results, "bars": bars,
           "quantization_bars": report.quantization_bars(results, [c["name"] for c in cases]) if args.int8 else []}
    (out_dir / "compare.json").write_text(json.dumps(doc, indent=1))
    md = report.markdown(doc)
    (out_dir / "compare.md").write_text(md)
    report.chart(doc, out_dir / "compare.png")
    meta["wall_seconds"] = time.perf_counter() - started
    (out_dir / "compare.json").write_text(json.dumps(doc, indent=1))
    print(md)
    log(f"wrote {out_dir / 'compare.json'}, compare.md, compare.png in {meta['wall_seconds']:.0f} s")
    if failures:
        log("FAILURES:\n  " + "\n  ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
