#!/usr/bin/env bash
# Creates the virtual environment bench/compare/run.py runs in: the pinned peers of
# bench/compare/requirements.txt (plus requirements-torch.txt with --with-torch).
#   bench/compare/setup_venv.sh [VENV_DIR] [--with-torch]     (default VENV_DIR: .venv-compare)
# Idempotent: a stamp holds the hash of the requirements the venv was built from. Needs network
# access to PyPI the first time (about 3 GB installed, 7 GB with PyTorch; a few minutes).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(cd "${here}/../.." && pwd)"
venv_dir="${repo_root}/.venv-compare"
with_torch=0
for arg in "$@"; do
  case "${arg}" in
    --with-torch) with_torch=1 ;;
    *) venv_dir="${arg}" ;;
  esac
done
reqs=("${here}/requirements.txt")
[[ ${with_torch} -eq 1 ]] && reqs+=("${here}/requirements-torch.txt")
stamp="${venv_dir}/.compare-requirements.sha256"
want_hash="$(cat "${reqs[@]}" | sha256sum | cut -d' ' -f1)"
if [[ -x "${venv_dir}/bin/python" && -f "${stamp}" && "$(cat "${stamp}")" == "${want_hash}" ]]; then
  exit 0
fi
if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
  "${repo_root}/tools/install_deps.sh"  # python3-venv
fi
[[ -x "${venv_dir}/bin/python" ]] || python3 -m venv "${venv_dir}"
"${venv_dir}/bin/python" -m pip install -q --upgrade pip
for r in "${reqs[@]}"; do
  "${venv_dir}/bin/python" -m pip install -q -r "${r}"
done
echo "${want_hash}" > "${stamp}"
echo "setup_venv: ready: ${venv_dir}"
