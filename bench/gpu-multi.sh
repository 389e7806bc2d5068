#!/usr/bin/env bash
# gpu-multi.sh: the multi-GPU acceptance of egg bench (needs a machine with 2+ GPUs).
# Runs 8 tasks (copies of the three scripted GPU tasks) once on one GPU and once on
# all GPUs, then reports tasks per hour on each, the speedup, whether timing or
# profiling ever overlapped on one GPU (from the store's lock timestamps), and
# whether every task's result matches between the two runs.
# usage: bash bench/gpu-multi.sh OUTDIR
set -u
out=${1:-/tmp/egg-multi}
mkdir -p "$out/tasks"
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 EGG_MODEL=scripted-mock EGG_API_KEY=sk-unused
for i in 1 2 3; do mkdir -p "$out/tasks/g$i"; cp bench/gpu_pipeline/{ew,softmax,matmul}.py "$out/tasks/g$i/"; done
rm -f "$out/tasks/g3/matmul.py"     # 8 tasks
python3 - bench/gpu_pipeline/script.json "$out/script.json" <<'PY'
import json, os, sys
s = json.load(open(sys.argv[1])); base = os.path.dirname(os.path.abspath(sys.argv[1]))
for e in s:
    e["repeat"] = True
    if "reply_file" in e:
        e["reply_file"] = os.path.join(base, e["reply_file"])
json.dump(s, open(sys.argv[2], "w"))
PY
python3 tests/mock/mockllm.py --script "$out/script.json" --port-file "$out/port" >/dev/null 2>&1 &
mock=$!
for _ in $(seq 50); do [ -s "$out/port" ] && break; sleep 0.1; done
export EGG_BASE_URL=http://127.0.0.1:$(cat "$out/port")
ngpu=$(python3 -c 'import torch; print(torch.cuda.device_count())')
for mode in one all; do
	devs=cuda:0
	[ "$mode" = all ] && devs=$(python3 -c "print(','.join(f'cuda:{i}' for i in range($ngpu)))")
	ndev=$(echo "$devs" | tr ',' '\n' | wc -l)
	s=$(date +%s.%N)
	EGG_STORE=$out/store-$mode timeout 1500 build/egg bench -q --no-cache --devices "$devs" --jobs $((3 * ndev)) \
		--workers-per-device 3 --iters 30 --warmup 3 --dir "$out/tasks" >"$out/bench-$mode.txt" 2>&1
	rc=$?
	e=$(date +%s.%N)
	echo "$mode ($devs): exit $rc, $(python3 -c "print(f'{$e-$s:.1f} s, {8/($e-$s)*3600:.0f} tasks/hour')")"
done
kill $mock
python3 - "$out" <<'PY'
import json, os, sqlite3, sys
out = sys.argv[1]
def load(mode):
    db = sqlite3.connect(os.path.join(out, f"store-{mode}", "egg.db"))
    res = {}
    for task, r in db.execute("select task_id, result from tasks"):
        r = json.loads(r)
        res[task] = (r.get("found"), open(r["final_kernel"]).read() if r.get("final_kernel") else None, r.get("device"))
    spans = {}
    for (e,) in db.execute("select eval from candidates"):
        t = json.loads(e).get("timing") or {}
        if t.get("lock"):
            spans.setdefault(t["lock"], set()).add((t["locked_at"], t["released_at"]))
    for (p,) in db.execute("select data from profiles"):
        p = json.loads(p)
        if p.get("lock"):
            spans.setdefault(p["lock"], set()).add((p["locked_at"], p["released_at"]))
    overlaps = {k: sum(1 for a, b in zip(sorted(v), sorted(v)[1:]) if b[0] < a[1]) for k, v in spans.items()}
    return res, overlaps
one, ov1 = load("one"); allr, ov2 = load("all")
print("overlaps per device lock:", ov1, ov2)
print("devices used (all GPUs):", sorted({d for _, _, d in allr.values()}))
same = all(one[t][:2] == allr[t][:2] for t in one)
print("every task's result matches between the runs:", same)
PY
