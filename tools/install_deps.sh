#!/usr/bin/env bash
# Installs the Debian 12 packages tickinfer builds and tests with. Idempotent: apt is only
# called when something is missing. Needs root (or sudo) on a fresh machine.
set -euo pipefail
pkgs=(build-essential cmake pkg-config g++ clang libclang-rt-14-dev
      libgtest-dev libgmock-dev libbenchmark-dev
      libhdf5-dev libzip-dev nlohmann-json3-dev
      libtomlplusplus-dev flatbuffers-compiler libflatbuffers-dev
      python3 python3-venv python3-pip unzip
      libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc libssl-dev openssl)
pkgs+=(python3-dev)  # Python headers: the Python module (python/, make python-test)
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
