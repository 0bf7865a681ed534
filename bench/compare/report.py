"""The comparison's outputs: the issue's bars, a markdown table and a log-scale bar chart."""


def _peers(results, model):
    return [r for r in results if r["model"] == model and r["via"] == "python" and r["mode"] == "window"
            and not r["runtime"].startswith("tickinfer") and r.get("precision", "fp32") == "fp32" and "p50_ns" in r
            and r.get("device", "cpu") == "cpu"]


def _row(results, model, runtime, mode="window"):
    return next((r for r in results if r["model"] == model and r["runtime"] == runtime and r["mode"] == mode
                 and "p50_ns" in r), None)


def bars(results, models):
    """For each model: tickinfer via Python p50 <= fastest peer p50 / 3, and <= 1/5 (issue 18);
    native p50 at least 10x below the fastest peer's; native p99 below every peer's p50. Window
    mode throughout. compute_floor_allows_5x: whether the native plan's compute floor (FLOPs at
    the peak FMA rate measured in the same run, a hard bound) is at most 1/5 of the fastest peer,
    i.e. whether the 5x bar is reachable on this core at all; floor_allows_5x: the same for the
    estimated floor (the larger of that and weight bytes at the probe's read bandwidth)."""
    out = []
    for m in models:
        peers = _peers(results, m)
        tp, tpo, nat = (_row(results, m, "tickinfer_python"), _row(results, m, "tickinfer_python_out"),
                        _row(results, m, "tickinfer_native"))
        if not peers or not tp or not nat:
            out.append({"model": m, "complete": False})
            continue
        fastest = min(peers, key=lambda r: r["p50_ns"])
        f = fastest["p50_ns"]
        b = {"model": m, "complete": True, "fastest_peer": fastest["runtime"], "fastest_peer_p50_ns": f,
             "python_p50_ns": tp["p50_ns"], "python_out_p50_ns": tpo["p50_ns"] if tpo else None,
             "python_ratio": f / tp["p50_ns"], "python_out_ratio": f / tpo["p50_ns"] if tpo else None,
             "native_p50_ns": nat["p50_ns"], "native_p99_ns": nat["p99_ns"], "native_ratio": f / nat["p50_ns"],
             "min_peer_p50_ns": f}
        b["python_bar"] = tp["p50_ns"] * 3 <= f
        b["python_5x_bar"] = tp["p50_ns"] * 5 <= f
        if nat.get("floor_ns"):
            b["native_floor_ns"], b["floor_bound"] = nat["floor_ns"], nat["floor_bound"]
            b["native_compute_floor_ns"] = nat["compute_floor_ns"]
            b["floor_allows_5x"] = nat["floor_ns"] * 5 <= f
            b["compute_floor_allows_5x"] = nat["compute_floor_ns"] * 5 <= f
        b["python_out_bar"] = bool(tpo) and tpo["p50_ns"] * 3 <= f
        b["native_10x_bar"] = nat["p50_ns"] * 10 <= f
        b["native_p99_bar"] = nat["p99_ns"] < f
        inc, slide = _row(results, m, "tickinfer_native", "incremental"), _row(results, m, "tickinfer_native", "window-slide")
        if inc and slide:  # issue 37: the update per snapshot >= 3x faster than the whole run and the fastest peer
            b["incremental_p50_ns"], b["slide_whole_p50_ns"] = inc["p50_ns"], slide["p50_ns"]
            b["incremental_vs_whole"] = slide["p50_ns"] / inc["p50_ns"]
            b["incremental_vs_peer"] = f / inc["p50_ns"]
            b["incremental_3x_bar"] = b["incremental_vs_whole"] >= 3 and b["incremental_vs_peer"] >= 3
        stream = _row(results, m, "tickinfer_native", "stream")
        if stream:
            b["native_stream_p50_ns"] = stream["p50_ns"]
            b["native_stream_ratio"] = f / stream["p50_ns"]
        out.append(b)
    return out


# The quantization bar's rows: each engine's forms, Python-side (the same harness for both), window mode.
LITERT_FORMS = {"fp32": "litert", "dynamic": "litert_int8", "int8": "litert_full_int8"}
TICKINFER_FORMS = {"fp32": "tickinfer_python", "int8": "tickinfer_python_int8", "dynamic": "tickinfer_python_dynamic",
                   "auto": "tickinfer_python_auto", "tflite dynamic": "tickinfer_python_tflite_dynamic",
                   "tflite int8": "tickinfer_python_tflite_int8"}


def quantization_bars(results, models):
    """Issue 39's third bar, per model: tickinfer's fastest form (fp32; its own int8,
    dynamic-range and auto .tkq; the converter's dynamic-range and full-int8 .tflite run by
    tickinfer) whose outputs agree with Keras (fp32 at the float tolerance, quantized forms at the
    quantization tolerance) against LiteRT's fastest form (fp32, dynamic-range, full int8) under
    the same rule; both via Python in the same harness. A form that could not be made or did not
    agree is not a candidate (its row says why). Also the native (C++) fastest form."""
    out = []
    for m in models:
        def forms(table):
            got = {}
            for precision, key in table.items():
                r = _row(results, m, key)
                got[precision] = r if r and r.get("agrees", True) else None
            return got
        lit, tk = forms(LITERT_FORMS), forms(TICKINFER_FORMS)
        nat = [r for r in results if r["model"] == m and r["via"] == "native" and r["mode"] == "window"
               and r["runtime"].startswith("tickinfer_native") and "p50_ns" in r]
        b = {"model": m, "litert": {k: r["p50_ns"] if r else None for k, r in lit.items()},
             "tickinfer": {k: r["p50_ns"] if r else None for k, r in tk.items()},
             "errors": {f"litert_{k}": r.get("max_abs_err") for k, r in lit.items() if r}
             | {f"tickinfer_{k}": r.get("max_abs_err") for k, r in tk.items() if r}}
        lit_ok = {k: v for k, v in b["litert"].items() if v is not None}
        tk_ok = {k: v for k, v in b["tickinfer"].items() if v is not None}
        b["complete"] = bool(lit_ok and tk_ok)
        if b["complete"]:
            b["litert_best"] = min(lit_ok, key=lit_ok.get)
            b["tickinfer_best"] = min(tk_ok, key=tk_ok.get)
            b["litert_best_p50_ns"], b["tickinfer_best_p50_ns"] = lit_ok[b["litert_best"]], tk_ok[b["tickinfer_best"]]
            b["ratio"] = b["litert_best_p50_ns"] / b["tickinfer_best_p50_ns"]
            b["bar"] = b["ratio"] > 1.0
        if nat:
            best = min(nat, key=lambda r: r["p50_ns"])
            b["native_best"], b["native_best_p50_ns"] = best.get("precision", "fp32"), best["p50_ns"]
        out.append(b)
    return out


def _quantization_markdown(doc):
    q = doc.get("quantization_bars") or []
    if not q:
        return []
    tol = doc["meta"].get("quant_tolerance")
    lines = ["", f"Quantization bar (issue 39): each engine's fastest form whose outputs agree with Keras (fp32 at the "
             f"float tolerance, quantized forms within {tol:g} x max |Keras output|), both via Python in this harness; "
             "'-' is a form that could not be made or did not agree (the table above says why). p50 us:", "",
             "| model | LiteRT fp32 | LiteRT dynamic | LiteRT full int8 | tickinfer fp32 | tickinfer int8 "
             "| tickinfer dynamic | tickinfer auto | tickinfer on the converter's dynamic / full int8 "
             "| LiteRT best / tickinfer best | bar met | tickinfer native best |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|"]
    yn = {True: "yes", False: "**no**"}

    def cell(side, b, k):
        v = b[side].get(k)
        if v is None:
            return "-"
        best = b.get(f"{side}_best") == k
        return f"**{_us(v)}**" if best else _us(v)
    for b in q:
        ratio = (f"{b['litert_best']} {_us(b['litert_best_p50_ns'])} / {b['tickinfer_best']} "
                 f"{_us(b['tickinfer_best_p50_ns'])} = {b['ratio']:.2f}x") if b["complete"] else "incomplete"
        met = yn[b["bar"]] if b["complete"] else ""
        nat = f"{b['native_best']} {_us(b['native_best_p50_ns'])}" if "native_best" in b else ""
        lines.append(f"| {b['model']} | {cell('litert', b, 'fp32')} | {cell('litert', b, 'dynamic')} "
                     f"| {cell('litert', b, 'int8')} | {cell('tickinfer', b, 'fp32')} | {cell('tickinfer', b, 'int8')} "
                     f"| {cell('tickinfer', b, 'dynamic')} | {cell('tickinfer', b, 'auto')} "
                     f"| {cell('tickinfer', b, 'tflite dynamic')} / {cell('tickinfer', b, 'tflite int8')} "
                     f"| {ratio} | {met} | {nat} |")
    return lines


def _us(ns):
    return "" if ns is None else f"{ns / 1e3:.2f}" if ns < 1e5 else f"{ns / 1e3:.0f}"


def _gpu_markdown(doc):
    """run.py --device cuda: per model, each GPU row beside tickinfer's GPU plan and the CPU plan
    on one core (native), and PyTorch's CUDA graph over tickinfer's GPU plan (issue 36's window bar: 2x)."""
    results = doc["results"]
    gpu = [r for r in results if r.get("device") == "cuda"]
    if not gpu:
        return []
    lines = ["", "On the GPU (same card, same run; host to host per call, batch 1):", "",
             "| model | runtime | p50 us | p99 us | p99.9 us | max abs err vs Keras | p50 / tickinfer GPU p50 "
             "| p50 / tickinfer CPU native p50 |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for m in dict.fromkeys(r["model"] for r in gpu):
        ours, nat = _row(results, m, "tickinfer_cuda"), _row(results, m, "tickinfer_native")
        for r in sorted((r for r in gpu if r["model"] == m), key=lambda r: r.get("p50_ns", float("inf"))):
            if "p50_ns" not in r:
                lines.append(f"| {m} | {r['label']} | - | - | - | | {r.get('error') or 'disagrees with Keras'} | |")
                continue
            vs_gpu = f"{r['p50_ns'] / ours['p50_ns']:.2f}x" if ours else ""
            vs_cpu = f"{r['p50_ns'] / nat['p50_ns']:.2f}x" if nat else ""
            lines.append(f"| {m} | {r['label']} | {_us(r['p50_ns'])} | {_us(r['p99_ns'])} | {_us(r['p999_ns'])} "
                         f"| {r.get('max_abs_err', 0):.1e} | {vs_gpu} | {vs_cpu} |")
    return lines


def markdown(doc):
    meta, results = doc["meta"], doc["results"]
    v = meta["versions"]
    lines = [
        f"machine: {meta['cpu']}, {meta['cores_online']} cores online (shared), Linux {meta['kernel']}; "
        f"pinned to cpu {meta['pinned_cpu']}; tickinfer kernels {meta['tickinfer_isa']}; batch 1; "
        f"{meta['seconds_per_runtime']:g} s timed per runtime after {meta['warmup_seconds']:g} s warm-up "
        f"(at least {meta['min_calls']} calls); inputs {meta['inputs']}; outputs checked against Keras "
        f"first (rtol {meta['rtol']:g}, atol {meta['atol']:g}); Python timer pair {meta['timer_overhead_ns']:.0f} ns "
        f"included.",
        "versions: " + ", ".join(f"{k} {val}" for k, val in v.items() if val),
        "",
        "| model | runtime | p50 us | p99 us | p99.9 us | calls | max abs err vs Keras | p50 / tickinfer native p50 |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for m in dict.fromkeys(r["model"] for r in results):
        nat = _row(results, m, "tickinfer_native")
        rows = [r for r in results if r["model"] == m]
        rows.sort(key=lambda r: (r["mode"] != "window", r.get("p50_ns", float("inf"))))
        for r in rows:
            if "p50_ns" not in r:
                why = r.get("error") or ("disagrees with Keras" if r.get("agrees") is False else "not run")
                err = f"{r['max_abs_err']:.1e}" if "max_abs_err" in r else ""
                lines.append(f"| {m} | {r['label']} | - | - | - | - | {err} | {why}: not timed |")
                continue
            err = "" if "max_abs_err" not in r else f"{r['max_abs_err']:.1e}"
            q = r["p50_ns"] / nat["p50_ns"] if nat else None
            ratio = "" if q is None else f"{q:.1f}x" if q >= 0.95 else f"{q:.3f}x"
            p999 = _us(r["p999_ns"]) + (" (n<1000)" if r["calls"] < 1000 else "")
            lines.append(f"| {m} | {r['label']} | {_us(r['p50_ns'])} | {_us(r['p99_ns'])} | {p999} "
                         f"| {r['calls']} | {err} | {ratio} |")
    lines += ["", "Bars (window mode; 'fastest peer' is the lowest fp32 p50 among the other runtimes via Python; "
              "quantized rows are not counted here: see the quantization bar below):", "",
              "| model | fastest peer (p50 us) | tickinfer Python run(x) p50 us (peer/ours) | run_into(x, buf) p50 us "
              "(peer/ours) | native p50 us (peer/native) | native p99 us | Python <= 1/3 | native >= 10x "
              "| native p99 < every peer p50 |",
              "|---|---|---:|---:|---:|---:|---|---|---|"]
    yn = {True: "yes", False: "**no**"}
    for b in doc["bars"]:
        if not b["complete"]:
            lines.append(f"| {b['model']} | incomplete run | | | | | | | |")
            continue
        lines.append(
            f"| {b['model']} | {b['fastest_peer']} ({_us(b['fastest_peer_p50_ns'])}) "
            f"| {_us(b['python_p50_ns'])} ({b['python_ratio']:.1f}x) "
            f"| {_us(b['python_out_p50_ns'])} ({b['python_out_ratio']:.1f}x) "
            f"| {_us(b['native_p50_ns'])} ({b['native_ratio']:.1f}x) | {_us(b['native_p99_ns'])} "
            f"| {yn[b['python_bar']]} | {yn[b['native_10x_bar']]} | {yn[b['native_p99_bar']]} |")
    lines += ["", "Issue 18's bar: tickinfer via Python at least 5x faster than the fastest peer, fp32 (the "
              "precision within the models' stated error against Keras). The native plan's floors are measured in "
              "this run (bench/floor_probe): the compute floor (FLOPs at the peak FMA rate) is a hard bound, so where "
              "5 x it exceeds the peer's p50 no code on this core meets the bar; the estimated floor adds the weight "
              "bytes at the probe's streaming read bandwidth, which a plan can beat:", "",
              "| model | fastest peer p50 us | peer / 5, us | tickinfer Python p50 us | peer / Python | bar met "
              "| compute floor us | reachable (5 x compute floor <= peer) | estimated floor us | 5 x estimate <= peer |",
              "|---|---|---:|---:|---:|---|---:|---|---:|---|"]
    for b in doc["bars"]:
        if not b["complete"]:
            continue
        cf = _us(b.get("native_compute_floor_ns"))
        floor = f"{_us(b['native_floor_ns'])} ({b['floor_bound']})" if b.get("native_floor_ns") else ""
        reach = yn[b["compute_floor_allows_5x"]] if "compute_floor_allows_5x" in b else ""
        est = yn[b["floor_allows_5x"]] if "floor_allows_5x" in b else ""
        lines.append(f"| {b['model']} | {b['fastest_peer']} {_us(b['fastest_peer_p50_ns'])} "
                     f"| {_us(b['fastest_peer_p50_ns'] / 5)} | {_us(b['python_p50_ns'])} | {b['python_ratio']:.1f}x "
                     f"| {yn[b['python_5x_bar']]} | {cf} | {reach} | {floor} | {est} |")
    incs = [b for b in doc["bars"] if b.get("complete") and "incremental_p50_ns" in b]
    if incs:
        lines += ["", "Incremental window updates (sliding windows, one snapshot per run; issue 37's bar: the update "
                  "at least 3x faster than the whole-window run and than the fastest peer's whole run):", "",
                  "| model | whole run, sliding, p50 us | incremental update p50 us | whole / incremental "
                  "| fastest peer p50 us | peer / incremental | bar met |", "|---|---:|---:|---:|---|---:|---|"]
        for b in incs:
            lines.append(f"| {b['model']} | {_us(b['slide_whole_p50_ns'])} | {_us(b['incremental_p50_ns'])} "
                         f"| {b['incremental_vs_whole']:.2f}x | {b['fastest_peer']} {_us(b['fastest_peer_p50_ns'])} "
                         f"| {b['incremental_vs_peer']:.2f}x | {yn[b['incremental_3x_bar']]} |")
    lines += _quantization_markdown(doc)
    lines += _gpu_markdown(doc)
    if meta.get("notes"):
        lines += ["", "Notes: " + "; ".join(meta["notes"])]
    if meta.get("failures"):
        lines += ["", "Failures: " + "; ".join(meta["failures"])]
    return "\n".join(lines) + "\n"


def chart(doc, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    results = doc["results"]
    models = list(dict.fromkeys(r["model"] for r in results))
    fig, axes = plt.subplots(len(models), 1, figsize=(10, 2.0 + 0.34 * 11 * len(models) / 1.6), squeeze=False)
    for ax, m in zip(axes[:, 0], models):
        rows = [r for r in results if r["model"] == m and "p50_ns" in r]
        rows.sort(key=lambda r: (r["mode"] != "window", -r["p50_ns"]))
        labels = [r["label"] for r in rows]
        p50 = [r["p50_ns"] / 1e3 for r in rows]
        p99 = [r["p99_ns"] / 1e3 for r in rows]
        colors = ["#d62728" if r["runtime"].startswith("tickinfer") else
                  "#bcbd22" if r.get("precision", "fp32") != "fp32" else "#7f7f7f" for r in rows]
        y = range(len(rows))
        ax.barh(y, p50, color=colors)
        ax.scatter(p99, y, marker="|", color="black", s=120, zorder=3, label="p99")
        ax.set_yticks(list(y), labels, fontsize=7)
        ax.set_xscale("log")
        ax.set_title(f"{m}: p50 per call (bar), p99 (tick); batch 1, one core", fontsize=9)
        ax.set_xlabel("microseconds (log scale)", fontsize=8)
        ax.grid(axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
