#!/usr/bin/env bash
# ncu_agreement.sh: egg's kernel time (CUDA events, median of 100 calls) vs
# Nsight Compute's gpu__time_duration.sum for the same kernels (aim: within 3%).
# usage: bash bench/ncu_agreement.sh [EGG_BINARY] TASK...   (tasks under bench/tasks)
set -u
EGG=${1:-build/egg}; shift
printf '%-12s %12s %12s %8s\n' task egg_ms ncu_ms ratio
for t in "$@"; do
	e=$("$EGG" eval --device cuda --no-baseline --json "bench/tasks/$t.py" "bench/tasks/${t}_kernel.py" 2>/dev/null |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["kernel_ms"])')
	n=$("$EGG" profile --device cuda --json "bench/tasks/$t.py" "bench/tasks/${t}_kernel.py" 2>/dev/null |
		python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["aggregate"]["duration_ns"]/1e6 if j.get("available") else "n/a: " + j.get("reason",""))')
	python3 -c "import sys; e,n=sys.argv[1],sys.argv[2]; print(f'{sys.argv[3]:12s} {float(e):12.4f} {float(n):12.4f} {float(e)/float(n):8.3f}')" "$e" "$n" "$t" 2>/dev/null ||
		echo "$t egg=$e ncu=$n"
done
