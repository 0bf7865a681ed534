#!/bin/bash
# Packs what tools/gpu_check.sh runs on a GPU machine that has no build tree: the GPU test and
# bench binaries of BUILD, the shared libraries they load that are not the C library's own
# (that machine may run another distribution), and the LSTM weights the PyTorch peer reads
# (bench/gpu/export_lstm_stack.py, through the project's Keras venv) and the window models'
# TorchScript ports.
# Usage: tools/gpu_bundle.sh [BUILD] [OUTDIR]     (defaults: build, build/gpu-bundle; also writes
#        OUTDIR.tar.xz)
set -euo pipefail
build=${1:-build}
out=${2:-$build/gpu-bundle}
root=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/weights"
for b in bench/gpu_probes bench/resident_bench bench/graph_form_bench tests/cuda_resident_test \
         tests/cuda_graph_lstm_stack_test tests/cuda_graph_form_test tests/cuda_integer_program_test \
         tests/cuda_half_activations_test tests/cuda_form_choice_test \
         tests/serving_batching_test bench/serve_load tickinfer; do
  [ -x "$build/$b" ] || { echo "gpu_bundle: $build/$b not built (configure with nvcc: TICKINFER_CUDA=ON)" >&2; exit 1; }
  cp "$build/$b" "$out/bin/"
done
# Every resolved library except the C runtime's (glibc's own: libc, libm, libpthread, libdl, librt,
# libresolv and the rest, and the loader): they use glibc's private symbols, so a copy from this
# machine fails to load beside another glibc.
for b in "$out"/bin/*; do
  ldd "$b" | awk '/=> \// {print $3}'
done | sort -u | grep -vE '/(libc|libm|libpthread|libdl|librt|libresolv|libnss_[^/]*|libmvec|libutil|libanl|libthread_db|ld-linux[^/]*)\.so' | while read -r lib; do
  cp -L "$lib" "$out/lib/"
done
strip --strip-unneeded "$out"/bin/* "$out"/lib/* 2>/dev/null || true
# The bench models' int8 files (make test writes them with `tickinfer quantize`), for the int8 rows.
mkdir -p "$out/quantized"
for m in tcn mlp_large mlp_small lstm_window lstm_tiny; do
  [ -f "$build/bench_quantized/$m.int8.tkq" ] && cp "$build/bench_quantized/$m.int8.tkq" "$out/quantized/"
done
for m in lstm_tiny lstm_window; do
  "$root/.venv/bin/python" "$root/bench/gpu/export_lstm_stack.py" "$root/bench/models/$m/model.keras" \
    "$out/weights/$m.tiw" 2>/dev/null
done
# The window models as TorchScript for the PyTorch peer (bench/gpu/export_torchscript.py, through
# the compare venv, which has Keras and PyTorch; each port checked against Keras first). A bundle
# for a GPU machine must carry them (the window bar is measured against them), so it installs
# PyTorch into the venv where it is missing (PyPI, the first time) and stops if a port fails; the
# dry run in make test (GPU_BUNDLE_TAR=0) makes do with what is installed.
real=$([ "${GPU_BUNDLE_TAR:-1}" != 0 ] && echo 1 || echo 0)
[ "$real" = 1 ] && { "$root/bench/compare/setup_venv.sh" --with-torch || exit 1; }
for m in models/tcn models/gru_window models/mlp_large models/lstm_window book_models/deeplob_small \
         book_models/deeplob book_models/translob book_models/tiny_transformer; do
  "$root/.venv-compare/bin/python" "$root/bench/gpu/export_torchscript.py" "$root/bench/$m/model.keras" \
    "$root/bench/$m/in0.npy" "$root/bench/$m/out0.npy" "$out/weights/$(basename $m).pt" 2>/dev/null && continue
  echo "gpu_bundle: no TorchScript peer for $m (bench/compare/setup_venv.sh --with-torch makes .venv-compare)" >&2
  [ "$real" = 1 ] && exit 1
done
# One compressed file as well: what travels to a GPU machine (gpu_check.sh takes either);
# GPU_BUNDLE_TAR=0 skips it (the dry run in make test reads the folder).
if [ "${GPU_BUNDLE_TAR:-1}" != 0 ]; then
  # xz -9's 64 MiB window spans several of the binaries, which share most of their code: about
  # half the size of the default preset's (23 MB against 53 MB), well inside the 64 MiB a GPU run carries.
  tar -C "$(dirname "$out")" -cf - "$(basename "$out")" | xz -9 -T1 >"$out.tar.xz" || exit 1
  du -sh "$out" "$out.tar.xz"
fi
