#!/usr/bin/env python3
"""What a build without nvcc (TICKINFER_CUDA=OFF) carries of the CUDA backend: issue 36's bar "the
CPU-only build unchanged in size and test count".

Configures and builds BUILD without CUDA (or, with --existing, reads a build already there, with
or without CUDA), links the `tickinfer` binary once more with a linker map, and sums the bytes
of code and data each object file puts into it: the CUDA module (libtickinfer_cuda.a), the
engine's side of the backend (engine/cuda_*.cpp, program_plan_device.cpp), the options every
build checks (engine/device_options.cpp) and the refusals (gpu_backend_absent.cpp,
cuda_absent.cpp, cli/cuda_precision_*.cpp). Also counts ctest's cases and the GPU test binaries
(tests/cuda_*_test, none in a CPU-only build). Exit status 1 when a CPU-only build links any of
the backend itself (anything GPU-related beyond the options and the refusals).

    tools/check_cpu_only_build.py BUILD [--jobs N] [--existing]

Uses only the Python standard library, cmake, ctest and the C++ toolchain of the build.
"""
import argparse
import collections
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Input sections that become the binary's code and data (debug and symbol tables aside).
LOADED = re.compile(r"\.(text|rodata|data|bss|gcc_except_table|eh_frame|init_array|fini_array)")
# A line of a GNU ld map naming one input section: [name] address size object.
SECTION = re.compile(r"^\s*(\.\S+)?\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S+\.o\)?)$")
KEPT = re.compile(r"(device_options|gpu_backend_absent|cuda_absent|cuda_precision_(parser|absent))\.cpp\.o")
# The module's whole archive (kernels included), the engine's GPU objects as the map names archive
# members, and the CLI's report command.
BACKEND = re.compile(r"libtickinfer_cuda\.a|\((cuda_[a-z_]+|program_plan_device)\.cpp\.o\)|cuda_precision_command\.cpp\.o")


def bytes_per_object(map_path):
    sizes = collections.Counter()
    pending = None  # a section name on its own line: its size and object follow on the next
    for line in open(map_path, errors="replace"):
        m = SECTION.match(line.rstrip("\n"))
        if m:
            name = m.group(1) or pending
            if name and LOADED.match(name):
                sizes[m.group(3)] += int(m.group(2), 16)
            pending = None
        else:
            stripped = line.strip()
            pending = stripped if re.fullmatch(r"\.\S+", stripped) and line.startswith(" ") else None
    return sizes


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--existing", action="store_true", help="read BUILD as it is (no configure, no build)")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    if not args.existing:
        subprocess.run(["cmake", "-S", ROOT, "-B", build, "-DTICKINFER_CUDA=OFF"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["cmake", "--build", build, f"-j{args.jobs}"], check=True, stdout=subprocess.DEVNULL)
    cache = open(os.path.join(build, "CMakeCache.txt")).read()
    with_cuda = re.search(r"^TICKINFER_CUDA:BOOL=(ON|TRUE|1)$", cache, re.M) is not None
    # The binary's own link line, once more, with a map (the built binary is left as it is).
    link = open(os.path.join(build, "CMakeFiles", "tickinfer.dir", "link.txt")).read().strip()
    words = shlex.split(link)
    out = words.index("-o")
    map_path = os.path.join(build, "tickinfer.map")
    words[out + 1] = os.path.join(build, "tickinfer.mapped")
    subprocess.run(words + [f"-Wl,-Map={map_path}"], check=True, cwd=build)
    sizes = bytes_per_object(map_path)
    os.remove(os.path.join(build, "tickinfer.mapped"))
    total = sum(sizes.values())
    kept = {o: n for o, n in sizes.items() if KEPT.search(o)}
    backend = {o: n for o, n in sizes.items() if BACKEND.search(o) and not KEPT.search(o)}
    listed = subprocess.run(["ctest", "-N"], cwd=build, capture_output=True, text=True, check=True).stdout
    cases = int(re.search(r"Total Tests: (\d+)", listed).group(1))
    gpu_binaries = sorted(f for f in os.listdir(os.path.join(build, "tests")) if re.fullmatch(r"cuda_[a-z_]+_test", f))
    short = lambda o: re.sub(r"^.*/", "", o.replace("(", " (")).strip()

    print(f"build: {build} ({'with' if with_cuda else 'without'} CUDA)")
    print(f"tickinfer binary: {os.path.getsize(os.path.join(build, 'tickinfer'))} bytes on disk, "
          f"{total} bytes of code and data linked\n")
    print("| what | bytes linked | share |")
    print("|---|---:|---:|")
    print(f"| the CUDA backend (kernels, device programs, host executors, the engine's GPU plans) "
          f"| {sum(backend.values())} | {100 * sum(backend.values()) / total:.2f}% |")
    print(f"| options every build checks, and the refusals | {sum(kept.values())} | {100 * sum(kept.values()) / total:.2f}% |")
    print(f"\nctest cases: {cases}; GPU test binaries built: {len(gpu_binaries)}")
    for o, n in sorted({**backend, **kept}.items(), key=lambda kv: -kv[1])[:12]:
        print(f"  {n:9d}  {short(o)}")
    if not with_cuda and (backend or gpu_binaries):
        print("\nFAIL: a build without nvcc links the CUDA backend or builds its tests")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
