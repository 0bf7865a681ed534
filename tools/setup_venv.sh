#!/usr/bin/env bash
# Creates the Python environment that tools/make_fixtures.py runs in.
#   tools/setup_venv.sh [VENV_DIR]      (default: .venv in the repository root)
# Installs the pinned tools/requirements.txt. Idempotent: a stamp file inside the venv holds the
# hash of the requirements it was built from, so a second run with unchanged pins returns at once.
#
# The environment itself is built once per machine, in the user's cache
# (${XDG_CACHE_HOME:-~/.cache}/tickinfer/venvs/<python>-<hash of the pins>), and VENV_DIR becomes
# a link to it: a fresh clone (CI's) then skips two minutes of unpacking the same pinned wheels.
# What is installed depends only on the pins and the interpreter, both in the name, so every
# clone sees the same packages it would have installed itself. TICKINFER_SHARED_VENV=0 builds
# the environment inside VENV_DIR instead.
# On a fresh Debian where `python3 -m venv` cannot work (python3-venv missing), it installs
# python3-venv and python3-pip with apt-get; that step needs root.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv_dir="${1:-${repo_root}/.venv}"
requirements="${repo_root}/tools/requirements.txt"
stamp="${venv_dir}/.requirements.sha256"
want_hash="$(sha256sum "${requirements}" | cut -d' ' -f1)"

if [[ -x "${venv_dir}/bin/python" && -f "${stamp}" && "$(cat "${stamp}")" == "${want_hash}" ]]; then
  echo "setup_venv: ${venv_dir} is up to date"
  exit 0
fi

# Debian ships python3 without ensurepip; `python3 -m venv` then fails half-way.
if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
  if [[ "$(id -u)" -ne 0 ]]; then
    echo "setup_venv: python3-venv is missing; run as root or: apt-get install -y python3-venv python3-pip" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q python3-venv python3-pip
fi

build_venv() {  # build_venv DIR: a venv with the pins installed, its stamp written last
  local dir=$1
  if [[ ! -x "${dir}/bin/python" ]]; then
    python3 -m venv "${dir}"
  fi
  "${dir}/bin/python" -m pip install -q --upgrade pip
  "${dir}/bin/python" -m pip install -q -r "${requirements}"
  echo "${want_hash}" > "${dir}/.requirements.sha256"
}

if [[ "${TICKINFER_SHARED_VENV:-1}" == "0" ]]; then
  [[ -L "${venv_dir}" ]] && rm -f "${venv_dir}"
  build_venv "${venv_dir}"
else
  python_tag="$(python3 -c 'import sys; print("py%d.%d.%d" % sys.version_info[:3])')"
  shared_root="${XDG_CACHE_HOME:-${HOME}/.cache}/tickinfer/venvs"
  shared="${shared_root}/${python_tag}-${want_hash:0:16}"
  mkdir -p "${shared_root}"
  # One builder at a time per environment; a half-built one (no stamp) is built again.
  exec 9>"${shared}.lock"
  flock 9
  if [[ ! -x "${shared}/bin/python" || "$(cat "${shared}/.requirements.sha256" 2>/dev/null)" != "${want_hash}" ]]; then
    rm -rf "${shared}"
    build_venv "${shared}"
  fi
  flock -u 9
  if [[ -e "${venv_dir}" || -L "${venv_dir}" ]]; then
    rm -rf "${venv_dir}"  # a link to other pins, or an in-place venv that is out of date
  fi
  ln -s "${shared}" "${venv_dir}"
fi
echo "setup_venv: ready: ${venv_dir}/bin/python tools/make_fixtures.py --help"
