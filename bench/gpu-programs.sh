#!/usr/bin/env bash
# gpu-programs.sh: every task of KernelBench level 3 as a whole program
# (issue "Whole programs"): egg split on the GPU (shares measured there),
# egg compose with every subgraph in PyTorch, and egg eval --allow-torch of
# that composition against the program at full size: does the split keep
# the program's semantics? One JSON row per task.
#
#   bash bench/gpu-programs.sh KB OUT [JOBS]     (KB: KernelBench's folder; JOBS at once, default 4)
set -u
kb=${1:?KB}; out=${2:?OUT}; jobs=${3:-4}
cd "$(dirname "$0")/.."
mkdir -p "$out/rows"
export EGG_STORE=$out/store PYTHONUNBUFFERED=1
one() {
	local task=$1 name
	name=$(basename "$task" .py)
	local d=$out/split/$name row=$out/rows/$name.json t0 t1 rc_split rc_eval=-1 n=0
	t0=$(date +%s.%N)
	timeout 300 build/egg split --device "${DEVICE:-cuda}" --json "$task" "$d" >"$out/rows/$name.split.json" 2>"$out/rows/$name.split.err"
	rc_split=$?
	t1=$(date +%s.%N)
	if [ "$rc_split" -eq 0 ]; then
		timeout 60 build/egg compose "$task" "$d" -o "$d/program.py" --keep-torch >/dev/null 2>"$out/rows/$name.compose.err" &&
			timeout 420 build/egg eval --device "${DEVICE:-cuda}" --allow-torch --no-baseline --no-timing --json "$task" "$d/program.py" \
				>"$out/rows/$name.eval.json" 2>"$out/rows/$name.eval.err"
		rc_eval=$?
	fi
	python3 - "$name" "$rc_split" "$rc_eval" "$t0" "$t1" "$out/rows" >"$row" <<'PY'
import json, os, sys
name, rc_split, rc_eval, t0, t1, d = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
def load(p):
    try:
        return json.load(open(p))
    except (OSError, ValueError):
        return {}
def last(p):
    try:
        lines = [l for l in open(p).read().splitlines() if l.startswith("egg: error") or l.startswith("egg: rejected")]
        return lines[-1] if lines else None
    except OSError:
        return None
plan = load(os.path.join(d, name + ".split.json"))
ev = load(os.path.join(d, name + ".eval.json"))
subs = plan.get("subgraphs") or []
print(json.dumps({"task": name, "split": rc_split == 0, "split_error": last(os.path.join(d, name + ".split.err")),
                  "split_s": round(float(t1) - float(t0), 1), "subgraphs": sum(not s.get("glue") for s in subs),
                  "glue": sum(bool(s.get("glue")) for s in subs), "eager_ms": plan.get("eager_ms"),
                  "top": sorted(((round(s["share"], 3), s["name"]) for s in subs if s.get("share") is not None),
                                reverse=True)[:3],
                  "identity": ev.get("verdict"), "identity_reason": ev.get("reason") or last(os.path.join(d, name + ".eval.err")),
                  "max_rel_err": ev.get("max_rel_err")}))
PY
	cat "$row"
}
export -f one
export out DEVICE
ls ${TASKS:-"$kb"/level3/*.py} | xargs -P "$jobs" -I{} bash -c 'one "$@"' _ {}
python3 - "$out" <<'PY' | tee "$out/programs.md"
import glob, json, os, sys
rows = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(sys.argv[1], "rows", "*.json")))
        if not p.endswith((".split.json", ".eval.json"))]
rows.sort(key=lambda r: int(r["task"].split("_")[0]))
ok = sum(r["split"] for r in rows)
same = sum(r["identity"] == "pass" for r in rows)
print(f"level 3: {len(rows)} tasks, {ok} split, {same} identity compositions pass egg eval --allow-torch\n")
print("| task | subgraphs | glue | eager ms | largest shares | identity | note |")
print("|---|---|---|---|---|---|---|")
for r in rows:
    top = ", ".join(f"{n} {100 * s:.0f}%" for s, n in r["top"])
    note = r["split_error"] if not r["split"] else ("" if r["identity"] == "pass" else (r["identity_reason"] or ""))
    em = f"{r['eager_ms']:.3f}" if r.get("eager_ms") else "-"
    print(f"| {r['task']} | {r['subgraphs']} | {r['glue']} | {em} | {top} | {r['identity'] or '-'} | {(note or '')[:160]} |")
PY
