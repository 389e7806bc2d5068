#!/usr/bin/env bash
# gpu-sol.sh: the speed of light of 20 KernelBench tasks on a GPU: the
# device's calibrated peaks next to its data sheet's, and for each task the
# roofline bound with PyTorch eager's and torch.compile's %SOL
# (`egg eval TASK.py`, no kernel: the baselines and the bound).
#
#   bash bench/gpu-sol.sh KB OUT      (KB: KernelBench's task folder)
set -u
kb=$1; out=$2
cd "$(dirname "$0")/.."
mkdir -p "$out"
export EGG_STORE=$out/store
tasks=(level1/1_Square_matrix_multiplication_.py level1/2_Standard_matrix_multiplication_.py
	level1/3_Batched_matrix_multiplication.py level1/4_Matrix_vector_multiplication_.py level1/19_ReLU.py
	level1/23_Softmax.py level1/26_GELU_.py level1/33_BatchNorm.py level1/36_RMSNorm_.py level1/40_LayerNorm.py
	level1/42_Max_Pooling_2D.py level1/47_Sum_reduction_over_a_dimension.py
	level1/63_conv_standard_2D__square_input__square_kernel.py level1/88_MinGPTNewGelu.py
	level2/1_Conv2D_ReLU_BiasAdd.py level2/12_Gemm_Multiply_LeakyReLU.py level2/14_Gemm_Divide_Sum_Scaling.py
	level2/17_Conv2d_InstanceNorm_Divide.py level2/29_Matmul_Mish_Mish.py level2/30_Gemm_GroupNorm_Hardtanh.py)
# The first calibrates the device (cached in the store); the rest run four at a time.
build/egg eval "$kb/${tasks[0]}" --json >"$out/row-0.json" 2>"$out/err-0.txt"
for i in "${!tasks[@]}"; do [ "$i" -gt 0 ] && echo "$i ${tasks[$i]}"; done |
	xargs -P 4 -L 1 sh -c 'build/egg eval "'"$kb"'/$1" --json >"'"$out"'/row-$0.json" 2>"'"$out"'/err-$0.txt"'
python3 - "$out" "${tasks[@]}" <<'PY'
import glob, json, math, os, sys
out, tasks = sys.argv[1], sys.argv[2:]
cal = [json.load(open(p)) for p in glob.glob(os.path.join(out, "store", "eval-cache", "calibration-*.json"))]
sheet = {"bandwidth_bytes_s": 4.8e12, "fp32_flops_s": 67e12, "tf32_flops_s": 495e12, "bf16_flops_s": 989e12}
if cal:
    c = cal[0]
    print("calibrated peaks vs the H200 data sheet (dense):")
    for k, v in sheet.items():
        unit, scale = ("TB/s", 1e12) if "bytes" in k else ("TFLOP/s", 1e12)
        print(f"  {k:18s} {c[k] / scale:8.2f} {unit}  data sheet {v / scale:7.1f}  ({100 * c[k] / v:.0f}%)")
    print("  methods:", json.dumps(c.get("method")))
print(f"{'task':58s} {'eager ms':>9s} {'compile':>9s} {'bound ms':>9s} {'bound':>7s} {'eager%':>7s} {'comp%':>7s}")
lv = {}
for i, t in enumerate(tasks):
    try:
        r = json.load(open(os.path.join(out, f"row-{i}.json")))
    except Exception:
        print(f"{t:58s} failed: {open(os.path.join(out, f'err-{i}.txt')).read().strip()[-200:]}")
        continue
    rl = r.get("roofline") or {}
    es, cs = r.get("eager_sol_pct"), r.get("compile_sol_pct")
    print(f"{t:58s} {r['eager_ms']:9.4f} {r.get('compile_ms') or float('nan'):9.4f} {r.get('roofline_ms') or float('nan'):9.4f} "
          f"{rl.get('bound', '-'):>7s} {es or float('nan'):6.1f}% {cs or float('nan'):6.1f}%")
    if es:
        lv.setdefault(t.split("/")[0], []).append((r["eager_ms"] / r["roofline_ms"], r.get("compile_ms") and r["compile_ms"] / r["roofline_ms"]))
for level, xs in sorted(lv.items()):
    e = [a for a, _ in xs]
    c = [b for _, b in xs if b]
    g = lambda v: math.exp(sum(map(math.log, v)) / len(v))
    print(f"{level}: eager above the bound: mean {sum(e) / len(e):.2f}x, geomean {g(e):.2f}x (n={len(e)}); "
          f"torch.compile: mean {sum(c) / len(c):.2f}x, geomean {g(c):.2f}x (n={len(c)})")
PY
