#!/usr/bin/env bash
# setup.sh [--tests] [--venv DIR] [--replace-torch]: install what egg needs on Debian 12: the build's
# libraries (apt-get) and the worker's Python stack (pip). With --tests, also
# what only the test suite needs: Chromium (the HTML report's rendering test),
# a single-host Slurm cluster's daemons (tests/cli/t70-slurm.sh) and
# transformers (tests/cli/t78-models.sh).
# Idempotent: safe to run again; it only installs what is missing.
#
# --venv DIR puts the Python stack in a virtual environment at DIR (needed
# on Debian's own python3, which refuses pip installs: PEP 668); then
# `. DIR/bin/activate` (or EGG_PYTHON=DIR/bin/python) before running egg.
# A torch egg does not support is replaced only with --replace-torch (or a
# yes at the prompt, on a terminal).
#
# A python3 that already has a CUDA build of torch and a Triton egg supports
# (a GPU machine's own stack) is kept as it is, and said so; otherwise the
# CPU stack the suite is tested with is pinned. EGG_PYTHON picks the Python;
# EGG_SETUP_APT=0 skips apt-get (a machine whose packages are managed
# elsewhere).
set -euo pipefail

tests=0 replace=0 venv=
while [ $# -gt 0 ]; do
	case "$1" in
	--tests) tests=1 ;;
	--replace-torch) replace=1 ;;
	--venv)
		[ $# -ge 2 ] || { echo "setup: --venv needs a folder (--venv .venv)" >&2; exit 2; }
		venv=$2
		shift
		;;
	-h | --help)
		sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "setup: unknown option '$1' (use --tests, --venv DIR, --replace-torch)" >&2
		exit 2
		;;
	esac
	shift
done

APT_PACKAGES=(build-essential pkg-config libcurl4-openssl-dev libjansson-dev libssl-dev
              libsqlite3-dev sqlite3 python3 python3-pip)
TEST_APT_PACKAGES=(chromium slurmctld slurmd slurm-client munge)
# numpy stays below 2.4: Triton 3.6's interpreter converts 1-element arrays to
# Python ints, which numpy 2.4 turned from a deprecation into an error.
PIP_PACKAGES=(torch==2.13.0 triton==3.6.0 numpy==2.3.5)
# With --tests: the model libraries the "your own network" tests build
# models from (tests/cli/t78-models.sh), at a release that works with the
# pinned torch. transformers only: PyPI's torchvision wheel is built against
# CUDA torch and does not import with the CPU build (and timm imports it),
# so a torchvision ResNet and a timm ViT are checked on a GPU machine
# (bench/models-h200.sh); egg itself needs none of them.
TEST_PIP_PACKAGES=(transformers==5.24.0)
# Triton releases egg is tested with on a GPU (with the torch that pins them).
SUPPORTED_TRITON='^3\.6\.'

sudo_if_needed() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

if [ "${EGG_SETUP_APT:-1}" != 0 ]; then
	wanted=("${APT_PACKAGES[@]}")
	[ "$tests" -eq 1 ] && wanted+=("${TEST_APT_PACKAGES[@]}")
	[ -n "$venv" ] && wanted+=(python3-venv)
	missing=()
	for p in "${wanted[@]}"; do
		dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		echo "setup: apt-get install ${missing[*]}"
		sudo_if_needed apt-get update -qq
		sudo_if_needed env DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq --no-install-recommends "${missing[@]}"
	fi
fi

PY=${EGG_PYTHON:-python3}
if [ -n "$venv" ]; then
	if [ ! -x "$venv/bin/python" ]; then
		echo "setup: $PY -m venv $venv"
		"$PY" -m venv "$venv"
	fi
	PY=$venv/bin/python
fi
# Debian's own python3 refuses pip installs outside a virtual environment.
managed=$("$PY" -c 'import os, sys, sysconfig
print(int(sys.prefix == sys.base_prefix and
          os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))))' 2>/dev/null || echo 0)
if [ "$managed" = 1 ]; then
	echo "setup: $PY is managed by the system (PEP 668: pip installs are refused there); run" \
		"'bash scripts/setup.sh --venv .venv' and then '. .venv/bin/activate'" >&2
	exit 2
fi
# What the Python has now: "torch TRITON NUMPY CUDA" ("-" for what is missing).
facts() {
	"$PY" -c '
try:
    import torch
    t, cuda = torch.__version__, (torch.version.cuda or "-")
except Exception:
    t, cuda = "-", "-"
try:
    import triton
    tr = triton.__version__
except Exception:
    tr = "-"
try:
    import numpy
    n = numpy.__version__
except Exception:
    n = "-"
print(t, tr, n, cuda)' 2>/dev/null || echo "- - - -"
}
read -r torch_v triton_v numpy_v cuda_v <<<"$(facts)"
if [ "$cuda_v" != "-" ] && [[ "$triton_v" =~ $SUPPORTED_TRITON ]]; then
	echo "setup: keeping $PY's GPU stack: torch $torch_v (CUDA $cuda_v), triton $triton_v, numpy $numpy_v"
	if [ "$numpy_v" = "-" ]; then
		echo "setup: $PY -m pip install numpy (torch's own numpy is missing)"
		"$PY" -m pip install -q "numpy<2.4"
	fi
	exit 0
fi
if [ "${torch_v%%+*}" != "2.13.0" ] || [ "$triton_v" != "3.6.0" ] || [ "$numpy_v" != "2.3.5" ]; then
	if [ "$torch_v" != "-" ] && [ "${torch_v%%+*}" != "2.13.0" ]; then
		what="torch $torch_v with triton $triton_v"
		[ "$cuda_v" = "-" ] || what="torch $torch_v (CUDA $cuda_v) with triton $triton_v"
		if [ "$replace" -eq 0 ] && [ -t 0 ]; then
			read -r -p "setup: $PY has $what, which egg does not support; install torch 2.13.0 (CPU), triton 3.6.0 and numpy 2.3.5 over it? [y/N] " yes || yes=
			case "$yes" in y | Y | yes) replace=1 ;; esac
		fi
		if [ "$replace" -eq 0 ]; then
			echo "setup: $PY has $what, which egg does not support; left as it is: rerun with --replace-torch" \
				"to install the tested stack over it, or with --venv DIR to install it apart" >&2
			exit 2
		fi
		echo "setup: $PY has $what, which egg does not support; installing the tested stack (--replace-torch)"
	fi
	echo "setup: $PY -m pip install ${PIP_PACKAGES[*]}"
	"$PY" -m pip install -q "${PIP_PACKAGES[@]}"
	read -r torch_v triton_v numpy_v cuda_v <<<"$(facts)"
fi
echo "setup: $PY has torch $torch_v, triton $triton_v, numpy $numpy_v"
if [ "$tests" -eq 1 ] && ! "$PY" -c "import transformers" 2>/dev/null; then
	echo "setup: $PY -m pip install ${TEST_PIP_PACKAGES[*]}"
	"$PY" -m pip install -q "${TEST_PIP_PACKAGES[@]}"
fi
