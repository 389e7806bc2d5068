#!/usr/bin/env bash
# varied-constants-gpu.sh: ConvNeXt-T's stage-1 block task before and after
# a split draws its constant parameters (model_runtime _egg_varied_constants):
# each KERNELS/*.py is judged by `egg eval` against OLD_SPLIT's block task
# (the layer scale at the program's 1e-6) and against the block task of a
# split made now (bf16, eval, batch 32; its program draws the layer scale
# too, so the task copies the program's drawn values), one line per pair
# in OUT/pairs.txt.
#
#   bash bench/varied-constants-gpu.sh OLD_SPLIT KERNELS OUT
set -u
old=$1; kernels=$2; out=$3
cd "$(dirname "$0")/.."
mkdir -p "$out"
export EGG_STORE=$out/store
build/egg split torchvision.models:convnext_tiny "$out/split" --inputs 32x3x224x224 --dtype bf16 --no-measure \
	--json >"$out/split.json" 2>"$out/split.err" || { tail -3 "$out/split.err"; exit 1; }
for k in "$kernels"/*.py; do
	for side in old new; do
		dir=$old
		[ "$side" = new ] && dir=$out/split
		task=$(ls "$dir"/block01_*.py | head -1)
		timeout 200 build/egg eval "$task" "$k" --no-baseline --iters 20 --warmup 3 --trials 3 --json \
			>"$out/eval.json" 2>"$out/eval.err"
		python3 - "$out/eval.json" "$(basename "$k")" "$side" "$?" "$out/eval.err" <<'PY' | tee -a "$out/pairs.txt"
import json, sys
path, kernel, side, rc, err = sys.argv[1:]
try:
    r = json.load(open(path))
except Exception:
    print(f"{kernel:22} {side:3} no result: {open(err).read().strip().splitlines()[-1:]}")
    sys.exit()
print(f"{kernel:22} {side:3} {r.get('verdict')} at {r.get('stage')}; kernel_ms={r.get('kernel_ms')} "
      f"max_abs_err={r.get('max_abs_err')} {str(r.get('reason') or '')[:240]}")
PY
	done
done
