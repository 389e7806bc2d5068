#!/usr/bin/env bash
# gpu-kernelbench.sh KB OUT PART...: egg's evaluator on KernelBench's own task
# files at full size, on a GPU machine. KB is a copy of the KernelBench
# repository's KernelBench/ folder (fetch it; it is not part of egg). PARTs:
#   smoke    egg doctor; honest kernels of our own on 25_Swish (6.4 GB of
#            input) and 98_KLDivLoss (a 0-dim output); the sandbox attacks on
#            cuda as root and as an ordinary user; the GPU-only adversarial
#            candidates; a selfcheck of six hard tasks
#   level1 | level2 | level3   egg selfcheck over that level
#   dirs     egg selfcheck over the folders named in DIRS, as one queue
# Results land in OUT: selfcheck-*.json (summary and rows), *.jsonl (rows as
# they finished: a part cut short by a time limit keeps its finished rows),
# and logs. Build egg first (make) and run from the repository root.
set -u
KB=$1; OUT=$2; shift 2
EGG=${EGG:-build/egg}
export EGG_STORE=${EGG_STORE:-$PWD/egg-runs-gpu}
export PYTHONUNBUFFERED=1
mkdir -p "$OUT"
status=0

selfcheck() { # selfcheck NAME ARGS...
	local name=$1; shift
	rm -f "$OUT/$name.jsonl"
	# LIMIT (seconds) cuts a long part short; its finished rows stay in the .jsonl.
	timeout "${LIMIT:-86400}" "$EGG" selfcheck --json --rows "$OUT/$name.jsonl" --workers-per-device 4 --jobs 4 "$@" \
		>"$OUT/$name.json" 2>"$OUT/$name.log"
	local rc=$?
	echo "== $name: exit $rc, $(wc -l <"$OUT/$name.jsonl") rows"
	python3 - "$OUT/$name.json" "$OUT/$name.jsonl" <<'PY' || true
import json, sys
try:
    s = json.load(open(sys.argv[1]))["summary"]
except ValueError:  # cut short: summarise the rows that finished
    rows = [json.loads(line) for line in open(sys.argv[2])]
    secs = sorted(r["eval_s"] for r in rows if r.get("phases_s"))
    muls = sorted(r["peak_multiple"] for r in rows if r.get("peak_multiple"))
    s = {"ok": sum(r["ok"] for r in rows), "tasks": f"{len(rows)} finished",
         "eval_s_median": secs[len(secs) // 2] if secs else None, "eval_s_max": secs[-1] if secs else None,
         "eval_s_max_task": "-", "peak_multiple_median": muls[len(muls) // 2] if muls else None,
         "peak_multiple_max": muls[-1] if muls else None, "peak_multiple_max_task": "-", "admitted_peak_bytes": [],
         "failed": [r for r in rows if not r["ok"]], "ill_conditioned": [r["task"] for r in rows if r.get("ill_conditioned")],
         "ran_alone": [r["task"] for r in rows if r.get("ran_alone")]}
def f(v):
    return "-" if v is None else f"{v:.2f}"
print(f"ok {s['ok']}/{s['tasks']}; eval s median {f(s['eval_s_median'])} max {f(s['eval_s_max'])} ({s['eval_s_max_task']});"
      f" peak multiple median {f(s['peak_multiple_median'])} max {f(s['peak_multiple_max'])} ({s['peak_multiple_max_task']});"
      f" admitted peak {[round(b / 1e9, 1) for b in s['admitted_peak_bytes']]} GB")
for f in s["failed"]:
    print("FAILED", f["task"], "|", f.get("result"), "|", (f.get("reason") or "")[:300])
for t in s["ill_conditioned"]:
    print("ILL-CONDITIONED", t)
for t in s["ran_alone"]:
    print("RAN ALONE", t)
PY
	[ "$rc" -le 1 ] || status=1
}

for part in "$@"; do
	case $part in
	smoke)
		"$EGG" doctor >"$OUT/doctor.txt" 2>&1
		echo "== doctor: exit $?"; grep -E "^(gpu|sandbox|ncu|note|missing)" "$OUT/doctor.txt"
		for k in 25_Swish:kb1_25_swish 98_KLDivLoss:kb1_98_kldiv; do
			t=${k%%:*}; kern=${k#*:}
			/usr/bin/time -v "$EGG" eval "$KB/level1/$t.py" "bench/kernels/$kern.py" --json \
				>"$OUT/eval-$t.json" 2>"$OUT/eval-$t.err"
			echo "== eval $t: exit $?"
			python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['verdict'], r['stage'], r.get('reason'), 'kernel_ms', r.get('kernel_ms'), 'eager_ms', r.get('eager_ms'), 'compile_ms', r.get('compile_ms'), 'speedup', r.get('speedup_eager'), r.get('speedup_compile'), 'phases', r.get('phases_s'), 'memory', r.get('memory'), 'flags', r.get('flags'))" "$OUT/eval-$t.json"
			grep -E "Maximum resident|Elapsed" "$OUT/eval-$t.err"
		done
		;;&
	smoke | sandbox)
		EGG_SANDBOX_DEVICE=cuda bash tests/run.sh t27 >"$OUT/sandbox.txt" 2>&1
		echo "== sandbox on cuda: exit $?"; grep -E "^(ok|not ok|#)|passed" "$OUT/sandbox.txt"
		;;&
	smoke)
		EGG_SOURCE_DIR=$PWD EGG_ADV_ONLY="c06 c14 h04 h00 c09 c11" python3 tests/worker/test_adversarial.py cuda \
			>"$OUT/adversarial.txt" 2>&1
		echo "== adversarial (GPU classes): exit $?"; grep -E "^(ok|not ok)|^# c|^# h" "$OUT/adversarial.txt" | tail -20
		selfcheck selfcheck-smoke "$KB/level1/25_Swish.py" "$KB/level1/98_KLDivLoss.py" \
			"$KB/level2/4_Conv2d_Mish_Mish.py" "$KB/level3/49_Mamba2ReturnFinalState.py" \
			"$KB/level1/1_Square_matrix_multiplication_.py" "$KB/level3/11_VGG16.py"
		;;
	timing)
		# The timing figures of the honest GPU-sized controls, in full.
		EGG_SOURCE_DIR=$PWD python3 - >"$OUT/timing.txt" 2>&1 <<'PY'
import json, os, sys
sys.path.insert(0, "tests/worker")
from wlib import Worker
w = Worker("cuda")
task = open("tests/adversarial/task_ew_big.py").read()
for name in ("h00_ew_big_honest.py", "h04_multistream.py"):
    r = w.call({"op": "eval", "device": "cuda", "task_source": task, "trials": 3, "iters": 50, "warmup": 5,
                "kernel_source": open(f"tests/adversarial/{name}").read()})
    res = r.get("result", r)
    print(name, res.get("verdict"), res.get("reason"), json.dumps(res.get("timing")), res.get("phases_s"))
w.close()
PY
		echo "== timing: exit $?"; cat "$OUT/timing.txt"
		;;
	level1 | level2 | level3)
		selfcheck "selfcheck-$part" --dir "$KB/$part"
		;;
	dirs)
		# One queue over the folders in DIRS (relative to KB), in order.
		files=()
		for d in ${DIRS:-}; do files+=("$KB/$d"/*.py); done
		selfcheck selfcheck-dirs "${files[@]}"
		;;
	verify)
		# After the fixes: the timing phase of a 6.4 GB task, models built on
		# the device, and tasks the wall-clock check used to reject under load.
		/usr/bin/time -v "$EGG" eval "$KB/level1/25_Swish.py" bench/kernels/kb1_25_swish.py --json --compile-mode none \
			>"$OUT/verify-swish.json" 2>"$OUT/verify-swish.err"
		echo "== eval 25_Swish: exit $?"
		python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['verdict'], 'kernel_ms', r.get('kernel_ms'), 'eager_ms', r.get('eager_ms'), 'phases', r.get('phases_s'))" "$OUT/verify-swish.json"
		selfcheck selfcheck-verify "$KB/level3/2_ShallowWideMLP.py" "$KB/level2/55_Matmul_MaxPool_Sum_Scale.py" \
			"$KB/level3/33_VanillaRNN.py" "$KB/level1/31_ELU.py" "$KB/level1/95_CrossEntropyLoss.py" \
			"$KB/level1/44_Average_Pooling_1D.py" "$KB/level1/6_Matmul_with_large_K_dimension_.py" \
			"$KB/level1/12_Matmul_with_diagonal_matrices_.py"
		python3 -c "
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l); print(r['task'], r['result'], round(r['eval_s'], 1), r['phases_s'], r.get('ran_alone'))" "$OUT/selfcheck-verify.jsonl"
		;;
	smoke | sandbox) ;;
	*)
		echo "unknown part '$part'"; status=2 ;;
	esac
done
tar czf "$OUT/logs.tgz" -C "$EGG_STORE" logs 2>/dev/null
# At most eight files come back from a device run: the rest travel packed.
(cd "$OUT" && ls | grep -v -E '^(logs|results)\.tgz$' | tar czf results.tgz -T - && \
	ls | grep -v -E '^(logs|results)\.tgz$' | xargs rm -f)
exit $status
