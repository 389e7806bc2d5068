#!/usr/bin/env bash
# gpu-multi.sh: the multi-GPU acceptance of egg bench (a machine with 2+ GPUs).
#
#   bash bench/gpu-multi.sh OUT KB one       the 8 tasks on cuda:0 alone
#   bash bench/gpu-multi.sh OUT KB all       the same 8 tasks on every GPU
#   bash bench/gpu-multi.sh OUT KB compare   the two runs side by side
#
# KB is a copy of the KernelBench repository's KernelBench/ folder (or a
# folder with its level1/). The tasks: two copies each of the three scripted
# GPU pipeline tasks (bench/gpu_pipeline) and two full-size KernelBench tasks
# whose input alone is 6.4 GB (level 1 25_Swish and 21_Sigmoid), so that
# memory admission decides how evaluations share each device. The scripted
# mock LLM answers every agent (for the KernelBench tasks with honest flat
# elementwise kernels of three block shapes). Each run writes OUT/run-MODE.txt
# (wall time, tasks per hour) and its store OUT/store-MODE; `compare` prints
# tasks per hour and their ratio, whether timing or profiling ever overlapped
# on one device (from the lock timestamps the store keeps), whether every
# task's verdict and final kernel match, and each device's admitted peak.
set -u
out=$1; kb=$2; mode=$3
cd "$(dirname "$0")/.."
mkdir -p "$out/tasks"
export PYTHONUNBUFFERED=1 EGG_MODEL=scripted-mock EGG_API_KEY=sk-unused

if [ "$mode" = compare ]; then
	python3 - "$out" <<'PY'
import glob, json, os, sqlite3, sys
out = sys.argv[1]
def load(mode):
    db = sqlite3.connect(os.path.join(out, f"store-{mode}", "egg.db"))
    res = {}
    for task, r in db.execute("select task_id, result from tasks"):
        r = json.loads(r)
        k = open(r["final_kernel"]).read() if r.get("final_kernel") and os.path.exists(r["final_kernel"]) else None
        res[task] = (r.get("found"), k, r.get("device"), r.get("speedup_eager"))
    spans = {}
    for (e,) in db.execute("select eval from candidates"):
        t = (json.loads(e) or {}).get("timing") or {}
        if t.get("lock"):
            spans.setdefault(t["lock"], []).append((t["locked_at"], t["released_at"], "timing"))
    for (p,) in db.execute("select data from profiles"):
        p = json.loads(p)
        if p.get("lock"):
            spans.setdefault(p["lock"], []).append((p["locked_at"], p["released_at"], "profile"))
    overlaps = {}
    for lock, v in spans.items():
        v.sort()
        overlaps[lock] = (len(v), sum(1 for a, b in zip(v, v[1:]) if b[0] < a[1]))
    devs = json.load(open(glob.glob(os.path.join(out, f"store-{mode}", "runs", "*", "devices.json"))[0]))
    wall = float(open(os.path.join(out, f"run-{mode}.txt")).read().split()[0])
    return res, overlaps, devs, wall
r1, ov1, d1, w1 = load("one")
r2, ov2, d2, w2 = load("all")
n = len(r1)
print(f"tasks: {n}; one GPU: {w1:.1f} s, {n / w1 * 3600:.0f} tasks/hour; "
      f"all GPUs: {w2:.1f} s, {n / w2 * 3600:.0f} tasks/hour; ratio {w1 / w2:.2f}")
for name, ov in (("one", ov1), ("all", ov2)):
    for lock, (spans, bad) in sorted(ov.items()):
        print(f"{name}: lock {lock}: {spans} timed or profiled spans, {bad} overlapping")
for name, d in (("one", d1), ("all", d2)):
    for x in d:
        print(f"{name}: {x['device']}: {x['jobs']} jobs, admitted peak {x['admitted_peak_bytes'] / 1e9:.1f} GB")
print("devices used (all GPUs):", sorted({v[2] for v in r2.values()}))
for t in sorted(r1):
    a, b = r1[t], r2.get(t)
    same = b is not None and a[:2] == b[:2]
    print(f"{t}: found {a[0]} / {b and b[0]}, speedup over eager {a[3]} / {b and b[3]}, "
          f"{'same final kernel' if same else 'another final kernel'}")
# Verdicts must match; the final kernel may differ where two candidates
# time within noise of each other (the choice between them is a timing call).
print("every task's verdict matches:", all(r2.get(t) and r1[t][0] == r2[t][0] for t in r1))
PY
	exit $?
fi

# KB_ONLY=1 (smoke runs on the CPU): only the two KernelBench tasks.
[ -z "${KB_ONLY:-}" ] && for i in 1 2; do
	mkdir -p "$out/tasks/g$i"; cp bench/gpu_pipeline/{ew,softmax,matmul}.py "$out/tasks/g$i/"
done
mkdir -p "$out/tasks/kb"
cp "$kb"/level1/25_Swish.py "$kb"/level1/21_Sigmoid.py "$out/tasks/kb/" || exit 2
python3 - bench/gpu_pipeline/script.json "$out/script.json" <<'PY'
import json, os, sys
s = json.load(open(sys.argv[1])); base = os.path.dirname(os.path.abspath(sys.argv[1]))
for e in s:
    e["repeat"] = True
    if "reply_file" in e:
        e["reply_file"] = os.path.join(base, e["reply_file"])

def flat(expr, block, warps):
    """An honest flat elementwise kernel: one program per BLOCK elements."""
    return f'''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def ew(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, {expr}, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        ew[(triton.cdiv(n, {block}),)](x, out, n, BLOCK={block}, num_warps={warps})
        return out
'''

analysis = json.dumps({"worth_optimizing": "yes", "change": "yes", "bottleneck": "memory bandwidth: one read and one write per element",
                       "modification_plan": "try another block size and warp count"})
# Code agents see the task (marker); the tuning stages' profile agents see
# only the kernel (kmark).
for marker, expr, kmark in (("return x * torch.sigmoid(x)", "x * tl.sigmoid(x)", ", x * tl.sigmoid(x), mask"),
                            ("return torch.sigmoid(x)", "tl.sigmoid(x)", ", tl.sigmoid(x), mask")):
    s += [
        dict(match=["Role: code agent, mode: seed", "seed 1 of 2", marker], reply=flat(expr, 4096, 8), wrap="python"),
        dict(match=["Role: code agent, mode: seed", "seed 2 of 2", marker], reply=flat(expr, 1024, 4), wrap="python"),
        dict(match=["Role: code agent, mode: algorithmic refinement", marker], reply=flat(expr, 2048, 4), wrap="python"),
        dict(match=["Role: code agent", marker], reply=flat(expr, 8192, 8), wrap="python"),
        dict(match=["Role: profile agent", kmark], reply=analysis),
    ]
for e in s:
    e["repeat"] = True
json.dump(s, open(sys.argv[2], "w"))
PY

python3 tests/mock/mockllm.py --script "$out/script.json" --port-file "$out/port-$mode" >/dev/null 2>&1 &
mock=$!
for _ in $(seq 50); do [ -s "$out/port-$mode" ] && break; sleep 0.1; done
export EGG_BASE_URL=http://127.0.0.1:$(cat "$out/port-$mode")
# DEVICES overrides the devices: a smoke run without a GPU is
#   KB_ONLY=1 DEVICES=cpu bash bench/gpu-multi.sh OUT SMALL_KB one
# (and DEVICES=cpu,cpu ... all), SMALL_KB holding shrunken copies of the tasks.
if [ -n "${DEVICES:-}" ]; then
	devs=$DEVICES
else
	ngpu=$(python3 -c 'import torch; print(torch.cuda.device_count())')
	devs=cuda:0
	[ "$mode" = all ] && devs=$(python3 -c "print(','.join(f'cuda:{i}' for i in range($ngpu)))")
fi
ndev=$(echo "$devs" | tr ',' '\n' | wc -l)
rm -rf "$out/store-$mode"
s=$(date +%s.%N)
EGG_STORE=$out/store-$mode timeout "${LIMIT:-3000}" build/egg bench -q --no-cache --devices "$devs" \
	--jobs $((4 * ndev)) --workers-per-device 3 --iters 30 --warmup 3 --dir "$out/tasks" >"$out/bench-$mode.txt" 2>&1
rc=$?
e=$(date +%s.%N)
kill $mock
python3 -c "print(f'{$e - $s:.1f} s wall, exit $rc, devices $devs')" | tee "$out/run-$mode.txt"
exit $rc
