#!/usr/bin/env bash
# Installs the Debian 12 packages tickinfer builds and tests with. Idempotent: apt is only
# called when something is missing. Needs root (or sudo) on a fresh machine.
# Usage: tools/install_deps.sh [--demo]
#   --demo: only what `make demo`'s reduced build needs (no model server, no SavedModel/ONNX
#           readers, no tests): no gRPC, protobuf, clang, test frameworks or Python packages.
set -euo pipefail
# What the CLI's engine, formats (.keras is a ZIP holding HDF5 weights; TFLite is a flatbuffer),
# feed, features and pipeline compile against.
pkgs=(build-essential cmake pkg-config g++
      libhdf5-dev libzip-dev nlohmann-json3-dev
      libtomlplusplus-dev flatbuffers-compiler libflatbuffers-dev
      zlib1g-dev libpcap-dev                    # ITCH day files (gzip) and pcap/pcapng captures
      python3)                                  # the demo's ITCH day (tools/itch/make_itch_day.py, stdlib only)
if [ "${1:-}" != "--demo" ]; then
  pkgs+=(clang libclang-rt-14-dev                # the fuzzers (libFuzzer)
         ccache                                  # the demo and Python builds reuse the main build's objects
         libgtest-dev libgmock-dev libbenchmark-dev
         python3 python3-venv python3-pip unzip  # the reference scripts' virtual environments
         libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc libssl-dev openssl
         python3-dev)                            # Python headers: the Python module (python/)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing: ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
