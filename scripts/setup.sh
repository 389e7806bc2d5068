#!/usr/bin/env bash
# setup.sh: install everything egg's build and test suite need on Debian 12.
# Idempotent: safe to run again; it only installs what is missing.
set -euo pipefail

APT_PACKAGES=(build-essential pkg-config libcurl4-openssl-dev libjansson-dev libssl-dev
              libsqlite3-dev sqlite3 python3 python3-pip chromium
              slurmctld slurmd slurm-client munge)
# slurmctld, slurmd, slurm-client and munge: tests/cli/t70-slurm.sh starts a
# single-host Slurm cluster of its own (egg bench --slurm).
# numpy stays below 2.4: Triton 3.6's interpreter converts 1-element arrays to
# Python ints, which numpy 2.4 turned from a deprecation into an error.
PIP_PACKAGES=(torch==2.13.0 triton==3.6.0 numpy==2.3.5)

sudo_if_needed() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing=()
for p in "${APT_PACKAGES[@]}"; do
	dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup: apt-get install ${missing[*]}"
	sudo_if_needed apt-get update -qq
	sudo_if_needed env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

PY=${EGG_PYTHON:-python3}
if ! "$PY" - <<'PY' >/dev/null 2>&1
import numpy, torch, triton
assert torch.__version__.split("+")[0] == "2.13.0"
assert triton.__version__ == "3.6.0"
assert numpy.__version__ == "2.3.5"
PY
then
	echo "setup: $PY -m pip install ${PIP_PACKAGES[*]}"
	"$PY" -m pip install -q "${PIP_PACKAGES[@]}"
fi
"$PY" -c 'import torch, triton, numpy; print("setup: torch", torch.__version__, "triton", triton.__version__, "numpy", numpy.__version__)'
