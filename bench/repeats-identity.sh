#!/usr/bin/env bash
# repeats-identity.sh KB OUT TASK...: repeated subgraphs as one task, checked
# at full size without a model. Each level 3 TASK is split; each distinct
# task's file becomes its own "kernel" (its PyTorch Model renamed ModelNew:
# the same computation), so that every occurrence runs through its task's
# file with its own weights bound by task_params; the composition is then
# evaluated end to end against the program (egg eval --allow-torch). A
# repeat bound to another occurrence's weights fails it. One line per task.
set -u
kb=${1:?KB}; out=${2:?OUT}; shift 2
EGG=${EGG:-build/egg}
export EGG_STORE=$out/store
mkdir -p "$out"
for t in "$@"; do
	name=$(basename "$t" .py); d=$out/$name
	"$EGG" split --device "${DEVICE:-cuda}" --no-measure --json "$kb/$t" "$d" >"$d.split.json" 2>"$d.split.err" || {
		echo "$name: split failed: $(tail -1 "$d.split.err")"; continue; }
	python3 bench/identity_kernels.py "$d"
	"$EGG" compose "$kb/$t" "$d" -o "$d/program.py" --json >"$d.compose.json" 2>"$d.compose.err" || {
		echo "$name: compose failed: $(tail -1 "$d.compose.err")"; continue; }
	"$EGG" eval --device "${DEVICE:-cuda}" --allow-torch --no-baseline --no-timing --json "$kb/$t" "$d/program.py" \
		>"$d.eval.json" 2>"$d.eval.err"
	python3 - "$name" "$d/plan.json" "$d.compose.json" "$d.eval.json" <<'PY'
import json, sys
name, plan, comp, ev = sys.argv[1], *(json.load(open(p)) for p in sys.argv[2:])
subs = [s for s in plan["subgraphs"] if not s.get("glue")]
print(f"{name}: {len(subs)} subgraphs, {len({s['task'] for s in subs})} distinct tasks, "
      f"{comp['kernel_parts']} parts through a task's file; end to end {ev.get('verdict')} "
      f"(max rel err {ev.get('max_rel_err')}) {ev.get('reason') or ''}")
PY
done
