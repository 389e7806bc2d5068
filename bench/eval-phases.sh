#!/usr/bin/env bash
# eval-phases.sh: where an evaluation's time goes on full-size KernelBench
# tasks, each candidate alone on the GPU, and the wall time of one `egg bench`
# of the same tasks with a scripted model (issue "Faster per task").
#
#   [EGG=path/to/egg] [PROFILE=DIR] bash bench/eval-phases.sh KB OUT LABEL [phases|bench|both]
#
# KB: KernelBench's task folder (level1/...); OUT: where the rows go
# (OUT/phases-LABEL.jsonl, OUT/bench-LABEL.json); LABEL names the egg under
# test ("before", "after"); EGG the binary (default build/egg: an older
# egg's build with its own worker folder beside it measures "before");
# PROFILE a folder for cProfile files of the evaluation processes
# (EGG_WORKER_PROFILE). Needs a GPU.
#
# Per task, `egg eval --json` of an honest kernel (bench/kernels/) gives the
# evaluation's phases (load: processes, imports, model, the first inputs;
# trials: the correctness trials, the first compile included; timing: lock,
# warm-up, calibration, the timed loop and its checks; cleanup) and its
# kernel and eager times, from which the GPU's own share is estimated: the
# reference's and the candidate's forward per trial, the warm-up, timed and
# guarded calls, and the reference's recomputation of checked timed calls.
set -u
kb=${1:?KB}; out=${2:?OUT}; label=${3:?LABEL}; what=${4:-both}
cd "$(dirname "$0")/.."
egg=${EGG:-build/egg}
mkdir -p "$out"
export EGG_STORE=$out/store-$label PYTHONUNBUFFERED=1
TASKS=(level1/19_ReLU:kb1_19_relu level1/23_Softmax:kb1_23_softmax level1/25_Swish:kb1_25_swish
	level1/98_KLDivLoss:kb1_98_kldiv level1/1_Square_matrix_multiplication_:kb1_1_matmul)

if [ "$what" != bench ]; then
	rows=$out/phases-$label.jsonl
	: >"$rows"
	for tk in "${TASKS[@]}"; do
		task=$kb/${tk%%:*}.py kernel=bench/kernels/${tk##*:}.py
		# The baseline first (cached), so that the timed command is the candidate's evaluation alone.
		timeout 300 "$egg" eval --device cuda --compile-mode none "$task" >/dev/null 2>&1
		t0=$(date +%s.%N)
		[ -n "${PROFILE:-}" ] && mkdir -p "$PROFILE/${tk##*:}"
		EGG_WORKER_PROFILE=${PROFILE:+$PROFILE/${tk##*:}} \
			timeout 400 "$egg" eval --device cuda --compile-mode none --json "$task" "$kernel" >"$out/eval.json" 2>"$out/eval.err"
		rc=$?
		t1=$(date +%s.%N)
		python3 - "$out/eval.json" "$task" "$rc" "$t0" "$t1" >>"$rows" <<'PY'
import json, sys
path, task, rc, t0, t1 = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
try:
    j = json.load(open(path))
except ValueError:
    print(json.dumps({"task": task, "rc": rc, "error": "no JSON"}))
    sys.exit()
ph, k, e = j.get("phases_s") or {}, j.get("kernel_ms") or 0, j.get("eager_ms") or 0
t = j.get("timing") or {}
trials, iters, warm = j.get("trials") or 0, t.get("iters") or 0, t.get("warmup") or 0
gpu_trials = trials * (k + e) / 1e3
gpu_timing = ((warm + iters + 2) * k + min(9, iters) * e) / 1e3
busy = sum(ph.get(p, 0) for p in ("load", "trials", "timing"))
print(json.dumps({"task": task.split("/")[-1], "rc": rc, "verdict": j.get("verdict"), "kernel_ms": k, "eager_ms": e,
                  "io_gb": sum((j.get("io_bytes") or {}).values() or [0]) / 1e9, "phases_s": ph,
                  "output_region": j.get("output_region"),
                  "gpu_s_trials": round(gpu_trials, 3), "gpu_s_timing": round(gpu_timing, 3),
                  "load_trials_timing_s": round(busy, 2), "goal_s": round(2 * (gpu_trials + gpu_timing) + 2, 2),
                  "command_s": round(t1 - t0, 2)}))
PY
		tail -1 "$rows"
	done
fi

if [ "$what" != phases ]; then
	# The scripted model: each task's seed is its kernel; refinement says
	# "not worth it", the tuning stages "no change".
	python3 - "$kb" "$out/script.json" "${TASKS[@]}" <<'PY'
import json, os, sys
kb, path, tasks = sys.argv[1], sys.argv[2], sys.argv[3:]
s = []
for tk in tasks:
    name, kernel = tk.split(":")
    s.append({"match": ["mode: seed", "Task: " + name.replace("/", "__") + "."], "repeat": True, "wrap": "python",
              "reply_file": os.path.abspath(f"bench/kernels/{kernel}.py")})
s.append({"match": ["Role: profile agent, mode: algorithmic refinement"], "repeat": True,
          "reply": json.dumps({"worth_optimizing": "no", "bottleneck": "memory bound", "modification_plan": "none"})})
s.append({"match": ["Role: profile agent"], "repeat": True,
          "reply": json.dumps({"change": "no", "bottleneck": "fine", "modification_plan": "keep"})})
json.dump(s, open(path, "w"))
PY
	rm -f "$out/port"
	python3 tests/mock/mockllm.py --script "$out/script.json" --port-file "$out/port" >/dev/null 2>&1 &
	mock=$!
	for _ in $(seq 100); do [ -s "$out/port" ] && break; sleep 0.1; done
	mkdir -p "$out/tasks-$label/level1"
	for tk in "${TASKS[@]}"; do cp "$kb/${tk%%:*}.py" "$out/tasks-$label/level1/"; done
	t0=$(date +%s.%N)
	EGG_BASE_URL=http://127.0.0.1:$(cat "$out/port") EGG_MODEL=mock EGG_API_KEY=sk-mock EGG_STORE=$out/bench-store-$label \
		timeout 900 "$egg" bench --device cuda --seeds 1 --no-cache --no-profile -q --json --dir "$out/tasks-$label/level1" \
		>"$out/bench-$label.json" 2>"$out/bench-$label.err"
	rc=$?
	t1=$(date +%s.%N)
	kill "$mock" 2>/dev/null
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(json.dumps({"label": sys.argv[2], "rc": int(sys.argv[3]), "wall_s": round(float(sys.argv[5])-float(sys.argv[4]),1), "found": sum(t["found"] for t in j["tasks"]), "tasks": len(j["tasks"])}))' \
		"$out/bench-$label.json" "$label" "$rc" "$t0" "$t1" | tee "$out/bench-$label.summary.json"
fi
