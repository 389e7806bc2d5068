#!/usr/bin/env bash
# h200.sh: the existing-kernel acceptance on a GPU. Builds the three
# TritonBench-G operators' existing kernels (make_existing.py), then
# `egg eval`s each against its PyTorch reference (tasks/) and writes the
# side-by-side table (existing vs eager vs torch.compile) to OUT/summary.md.
#
#   bash bench/tritonbench/h200.sh TRITONBENCH_DIR OUT
#
# TRITONBENCH_DIR: a checkout of github.com/thunlp/TritonBench (only
# data/TritonBench_G_v1/ is read). OUT gets tasks/ (task + existing kernel
# per operator), NAME.json (egg eval --json) and NAME.err per operator.
set -u
tb=$1; out=$2
cd "$(dirname "$0")/../.."
mkdir -p "$out"
python3 bench/tritonbench/make_existing.py "$tb" "$out/tasks" || exit 1
for name in flash_attention rope int8_dequant_matmul; do
	start=$(date +%s)
	${EGG:-build/egg} eval "$out/tasks/$name.py" "$out/tasks/$name.existing.py" --json ${EGG_EVAL_FLAGS:-} \
		>"$out/$name.json" 2>"$out/$name.err"
	echo "$name: egg eval exit $? after $(($(date +%s) - start)) s" | tee -a "$out/runs.txt"
done
python3 bench/tritonbench/summary.py "$out" | tee "$out/summary.md"
# Everything in one archive too (a device run brings back only a few files).
tar czf "$out.tgz" -C "$(dirname "$out")" "$(basename "$out")"
