#!/usr/bin/env python3
"""Turns tools/gpu_check.sh's JSON lines into the text table docs/performance.md records.

Usage: gpu_table.py gpu_check.jsonl
"""
import json
import sys


def us(s, k):
    return f"{s[k]:.2f}" if s and k in s else "-"


def main():
    rows = []
    for line in open(sys.argv[1]):
        line = line.strip()
        if line.startswith("{"):
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    for r in rows:
        if r.get("probe") == "device":
            print(f"device: {r['name']} sm_{r['sm']} {r['multiprocessors']} SMs, L2 {r['l2_bytes'] >> 20} MiB, "
                  f"driver {r['driver']}, runtime {r['runtime']}")
        if r.get("probe") == "host_cpu":
            pinned = f"latency rows pinned to CPU {r['cpu']}" if r["cpu"] else "latency rows not pinned (no taskset)"
            print(f"host: {r['model']}, {r['cpus']} CPUs; {pinned} (GPU-local CPUs: {r['gpu_local_cpus'] or 'unknown'})")
        if r.get("probe") == "nvidia-smi":
            print(f"nvidia-smi {r['when']}: {r['csv']}")
        if r.get("probe") == "torch":
            print("PyTorch for the peer rows: " + (f"{r['version']} (CUDA {r['cuda']}, sees the GPU: {r['available']})"
                                                   if "version" in r else f"none ({r.get('none', '?')})"))
    for r in rows:
        if "test" in r:
            print(f"gpu test {r['test']}: {r['passed']} passed, {r['failed']} failed, {r['skipped']} skipped (exit {r['exit']})")
    print("\nfloors (host to host, us)          p50     p99   p99.9     max")
    for r in rows:
        p = r.get("probe")
        if p and "us" in r:
            what = p + "".join(f" {k}={r[k]}" for k in ("nodes", "bytes", "request_units", "reply_units") if k in r)
            what += " [" + r.get("sync", "spin") + "]" if "sync" in r else ""
            s = r["us"]
            print(f"{what:34s} {us(s,'p50'):>7s} {us(s,'p99'):>7s} {us(s,'p999'):>7s} {us(s,'max'):>7s}")
        if p == "cluster_sync":
            print(f"cluster.sync() cluster={r['cluster']:<2d}            {r['ns_per_sync']:.0f} ns each")
    print("\nmodel              form                             cl  thr  fail  worst      p50     p99   p99.9     max  kernel p50")
    for r in rows:
        if "host_to_host_us" not in r:
            if "error" in r:
                print(f"error: {r}")
            continue
        s = r["host_to_host_us"]
        if "cluster" not in r:
            form, cl, thr, worst, kern = r["form"], "-", "-", f"{r['worst_excess']:.1e}", "-"
        else:
            form = "resident_" + r.get("form", "shared") + (f"/{r['lanes']}" if r.get("lanes") else "")
            if r.get("tuned"):
                form = "tuned: " + form
            if r.get("form") == "registers":
                form += f" a{r.get('activations', 2)}" + (" fast" if r.get("fast_math") else "")
            cl, thr = str(r["cluster"]), str(r["threads"])
            worst = f"{r['worst_rel_vs_double']:.1e}"
            kern = f"{r['kernel_recurrence_us']['p50'] + r['kernel_head_us']['p50']:.2f}"
            if "sm_mhz_p50" in r:
                kern += f" {r['sm_mhz_p50']:.0f}MHz"
            c = r.get("cycles_p50")
            if c and c.get("dot"):
                kern += f" cyc dot {c['dot']:.0f} act {c['activation']:.0f} cell {c['cell_work']:.0f} bar {c['barrier']:.0f} head {r['head_cycles_p50']:.0f}"
        print(f"{r['name']:18s} {form:32s} {cl:>2s} {thr:>4s} {r['failures']:5d} {worst:>8s} {us(s,'p50'):>7s} "
              f"{us(s,'p99'):>7s} {us(s,'p999'):>7s} {us(s,'max'):>7s} {kern:>10s}")
    tuning(rows)
    window_ratios(rows)
    crossover(rows)
    int8_programs(rows)
    serving(rows)
    wall_times(rows)


def tuning(rows):
    """Every resident shape the compile-time choice timed (median host to host, zero input), or why
    it was refused (its probe reply disagreed with the host's reference, or never came)."""
    got = [r for r in rows if "tuning_candidate" in r]
    if not got:
        return
    print("\nresident shapes timed at compile (median us)")
    for name in dict.fromkeys(r["name"] for r in got):
        shapes = [f"{r['tuning_candidate']}{'/' + str(r['lanes']) if r['lanes'] else ''} x{r['cluster']}: "
                  + (f"refused ({r['refused']})" if r.get("refused") else f"{r['median_us']:.2f}")
                  for r in got if r["name"] == name]
        print(f"  {name}: " + ", ".join(shapes))


def int8_programs(rows):
    """Per int8 model: the integer program on the card against this host's int8 CPU plan, requests
    interleaved; failures count rows that differ from the CPU plan's bits."""
    got = [r for r in rows if r.get("form") == "int8" and "cpu_host_to_host_us" in r]
    if not got:
        return
    print("\nint8 model         fail   GPU p50     p99   CPU p50     p99   CPU kernels")
    for r in got:
        g, c = r["host_to_host_us"], r["cpu_host_to_host_us"]
        print(f"{r['name']:18s} {r['failures']:4d} {g['p50']:9.2f} {g['p99']:7.2f} {c['p50']:9.2f} {c['p99']:7.2f}   {r['cpu_isa']}")


def crossover(rows):
    """The hardware table: per window model and batch size, one call of N rows on the GPU's graph
    form and on one core of this host's CPU plan, p50/p99 per call and rows per second."""
    batch = [r for r in rows if "batch" in r and "gpu_us" in r]
    if not batch:
        return
    # PyTorch's CUDA-graph form at the same batch (torch_graph_peer.py --batches; batch 1: its
    # one-request row, host to host).
    # Kept where its replies miss Keras's tolerance (cuDNN sums differently; 19 outputs of lstm_tiny
    # on 2026-12-04), marked *: the peer's speed is what the row is for.
    mark = lambda r: "*" if r.get("failures") else ""
    torch = {(r["name"], r["batch"]): f"{round(r['torch_rows_per_s'])}{mark(r)}" for r in rows if "torch_rows_per_s" in r}
    for r in rows:
        if r.get("form") == "torch_cuda_graph" and "host_to_host_us" in r:
            torch[(r["name"], 1)] = f"{round(1e6 / r['host_to_host_us']['p50'])}{mark(r)}"
    print("\nmodel              batch  GPU p50/p99 us per call   CPU p50/p99 us per call   GPU rows/s   CPU rows/s  GPU/CPU  PyTorch rows/s  fail")
    for r in batch:
        g, c = r["gpu_us"], r["cpu_us"]
        t = torch.get((r["name"], r["batch"]))
        print(f"{r['name']:18s} {r['batch']:5d}  {g['p50']:10.1f} /{g['p99']:10.1f}   {c['p50']:10.1f} /{c['p99']:10.1f}  "
              f"{r['gpu_rows_per_s']:11.0f} {r['cpu_rows_per_s']:11.0f} {r['gpu_rows_per_s'] / r['cpu_rows_per_s']:7.2f}x"
              f"  {'-' if t is None else t:>14}  {r['failures']}/{r['cpu_failures']}")
    if any(v.endswith("*") for v in torch.values()):
        print("  * PyTorch's replies missed Keras's tolerance on some outputs (its gpu_check.jsonl row says how many)")
    # What each plan chose for run() and per batch size (the variants are named in the line: per
    # row or tiles, with or without dependent launch; the times are each variant's median host to
    # host when the graphs were captured).
    for r in rows:
        w = r.get("where", "")
        if "batches_reserved" in r and "timed: " in w:
            legend = w.split("batches by variant (", 1)[1].split(")", 1)[0] if "batches by variant (" in w else ""
            run = w.split("; run(): ", 1)[1].split(";", 1)[0] if "; run(): " in w else "?"
            print(f"  {r['name']}: run() {run}; batches by variant ({legend}): {w.split('timed: ', 1)[1]}")


def serving(rows):
    """Batched serving: every load step, then the rate each server held at p99 <= the bound."""
    steps = [r for r in rows if "serving" in r]
    held = [r for r in rows if "serving_capacity" in r]
    if not steps and not held:
        return
    print("\nserving (REST, 1 row/request, open loop)   req/s      p50 us     p99 us   p99.9 us  errors")
    for r in steps:
        if "error" in r:
            print(f"{r['serving']:14s} {r['device']:5s} {r['rate']:>21d}   error: ...{' '.join(r['error'].split())[-150:]}")
            continue
        if "skipped" in r:
            print(f"{r['serving']:14s} {r['device']:5s} {r['rate']:>21d}   skipped: {r['skipped']}")
            continue
        print(f"{r['serving']:14s} {r['device']:5s} {r['rate']:>21d} {r['p50']:11.1f} {r['p99']:10.1f} {r['p999']:10.1f} {r['errors']:7d}")
    by = {}
    for r in held:
        by.setdefault(r["serving_capacity"], {})[r["device"]] = r["rate_held"]
    for model, d in by.items():
        gpu, cpu = d.get("cuda", 0), d.get("cpu", 0)
        ratio = f"{gpu / cpu:.2f}x" if cpu else "-"
        print(f"{model}: rate held at p99 <= 1 ms: GPU {gpu} req/s, CPU ({held[0]['cpus']} cores) {cpu} req/s: {ratio}")


def window_ratios(rows):
    """Per window model: tickinfer's graph form, program form, the form compile(device="cuda")
    keeps by timing (auto; the resident kernel where the model is an LSTM stack) against PyTorch's
    CUDA-graph form on the same card, p50 and p99 (issue 36's window bar: 2x), fp32 rows only."""
    best, kept, torch_missed = {}, {}, {}
    for r in rows:
        s = r.get("host_to_host_us")
        # A tickinfer row that missed Keras is no result; PyTorch's is kept (the bar is its speed)
        # and its misses said below the table.
        peer = r.get("form") == "torch_cuda_graph"
        if not s or (r.get("failures") and not peer) or r.get("precision", "fp32") not in ("", "fp32"):
            continue
        form = r.get("form") if r.get("form") in ("graph", "program", "auto") else "resident" if r.get("tuned") else r.get("form")
        if form in ("graph", "program", "auto", "resident", "torch_cuda_graph") and r["name"] not in ("lstm_tiny_stream", "lstm_window_stream"):
            # Of two rows of one form (the batch sweep's short latency row), the one with more requests.
            have = best.setdefault(r["name"], {}).get(form)
            if have is None or s.get("n", 0) >= have.get("n", 0):
                best[r["name"]][form] = s
            if form == "auto":
                kept[r["name"]] = r.get("kept", "?").replace("cuda-", "")
            if peer and r.get("failures"):
                torch_missed[r["name"]] = r["failures"]
    if not best:
        return
    print("\nwindow model       graph p50/p99      program p50/p99    as compiled p50/p99 (kept)   resident p50/p99   "
          "PyTorch CUDA graph p50/p99   PyTorch / as compiled (p50, p99)   PyTorch / best tickinfer")
    cell = lambda s: f"{s['p50']:8.2f} /{s['p99']:8.2f}" if s else f"{'-':>18s}"
    ratio = lambda t, o: f"{t['p50'] / o['p50']:.2f}x, {t['p99'] / o['p99']:.2f}x" if t and o else "-"
    for name, f in best.items():
        t = f.get("torch_cuda_graph")
        # As compiled: the auto row; an LSTM stack's plan is the resident kernel.
        compiled = f.get("auto") or f.get("resident")
        ours = [f[k] for k in ("graph", "program", "auto", "resident") if k in f]
        top = {"p50": min(o["p50"] for o in ours), "p99": min(o["p99"] for o in ours)} if ours else None
        as_compiled = f"{cell(compiled)} ({kept.get(name, 'resident' if f.get('resident') else '-')})"
        print(f"{name:18s} {cell(f.get('graph'))} {cell(f.get('program'))} {as_compiled:28s} {cell(f.get('resident'))} "
              f"{cell(t):>28s}   {ratio(t, compiled):>32s}   {ratio(t, top)}")
    for name, n in torch_missed.items():
        print(f"  {name}: PyTorch's CUDA graph missed Keras's tolerance on {n} outputs (its times kept above)")


def wall_times(rows):
    """Where the run's time went: the whole run, the slowest rows, and the rows the budget left out."""
    walls = [r for r in rows if "wall_s" in r]
    if not walls:
        return
    whole = [r for r in walls if r["command"] == "the whole run"]
    print(f"\nwall time: {whole[0]['wall_s'] if whole else '?'} s in all; slowest rows:")
    for r in sorted((r for r in walls if r["command"] != "the whole run"), key=lambda r: -r["wall_s"])[:12]:
        print(f"  {r['wall_s']:4d} s  {r['command'][:150]}")
    left_out = [r for r in rows if r.get("skipped") == "over the time budget"]
    if left_out:
        print(f"left out, over the time budget: {len(left_out)} rows, from: {left_out[0]['command'][:150]}")
    # Rows gpu_check itself skipped for another reason (a resident kernel lost earlier, a gate that
    # failed).
    for r in (r for r in rows if r.get("by") == "gpu_check"):
        print(f"skipped by gpu_check: {str(r['skipped'])[:150]}")


if __name__ == "__main__":
    main()
