#!/usr/bin/env bash
# Creates the Python environment that tools/make_fixtures.py runs in.
#   tools/setup_venv.sh [VENV_DIR]      (default: .venv in the repository root)
# Installs the pinned tools/requirements.txt. Idempotent: a stamp file inside the venv holds the
# hash of the requirements it was built from, so a second run with unchanged pins returns at once.
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

if [[ ! -x "${venv_dir}/bin/python" ]]; then
  python3 -m venv "${venv_dir}"
fi
"${venv_dir}/bin/python" -m pip install -q --upgrade pip
"${venv_dir}/bin/python" -m pip install -q -r "${requirements}"
echo "${want_hash}" > "${stamp}"
echo "setup_venv: ready: ${venv_dir}/bin/python tools/make_fixtures.py --help"
