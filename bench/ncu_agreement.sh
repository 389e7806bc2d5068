#!/usr/bin/env bash
# ncu_agreement.sh: egg's kernel time (CUDA events, median of 100 calls) under
# both clocks vs Nsight Compute's gpu__time_duration.sum for the same kernels
# (aim: --clock gpu within 3% of ncu; --clock latency adds the launch path).
# usage: bash bench/ncu_agreement.sh [EGG_BINARY] TASK...   (tasks under bench/tasks)
set -u
EGG=${1:-build/egg}; shift
kernel_ms() {
	"$EGG" eval --device cuda --no-baseline --json --clock "$1" "$2" "$3" 2>/dev/null |
		python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["kernel_ms"] if j.get("kernel_ms") else "n/a:" + str(j.get("reason")))'
}
printf '%-12s %10s %10s %10s %9s %9s\n' task gpu_ms latency_ms ncu_ms gpu/ncu lat/ncu
for t in "$@"; do
	task=bench/tasks/$t.py kern=bench/tasks/${t}_kernel.py
	g=$(kernel_ms gpu "$task" "$kern")
	l=$(kernel_ms latency "$task" "$kern")
	n=$("$EGG" profile --device cuda --json "$task" "$kern" 2>/dev/null |
		python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["aggregate"]["duration_ns"]/1e6 if j.get("available") else "n/a: " + j.get("reason",""))')
	python3 -c "import sys; t,g,l,n=sys.argv[1:]; g,l,n=float(g),float(l),float(n); print(f'{t:12s} {g:10.4f} {l:10.4f} {n:10.4f} {g/n:9.3f} {l/n:9.3f}')" "$t" "$g" "$l" "$n" 2>/dev/null ||
		echo "$t gpu=$g latency=$l ncu=$n"
done
