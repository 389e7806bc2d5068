#!/usr/bin/env bash
# kb-sidebyside.sh: egg's evaluator and KernelBench's own harness on the same
# honest and hostile kernels (tests/adversarial), side by side (issue "Kernels
# made elsewhere"). Needs a GPU.
#
#   bash bench/kb-sidebyside.sh OUT KB_SRC [egg|kb|table|all]
#
# egg: `egg eval --batch` (limit SBS_EGG_TIMEOUT s, default 560) of every tests/adversarial candidate on cuda, one run,
#      its wall time (OUT/egg.json, OUT/egg.wall);
# kb:  bench/kb_harness.py per pair, each in its own process with a 180 s limit,
#      as KernelBench's eval_from_generations runs samples (OUT/kb.jsonl);
# table: OUT/table.md, which exploits each accepts and the kernels per hour.
# KB_SRC: the src folder of a KernelBench checkout (fetch it; never commit it).
set -u
out=${1:?OUT}; kbsrc=${2:?KB_SRC}; what=${3:-all}
cd "$(dirname "$0")/.."
mkdir -p "$out"
A=tests/adversarial T=tests/tasks
export EGG_STORE=$out/store PYTHONUNBUFFERED=1
list=$out/pairs.txt
: >"$list"
for f in "$A"/[ch][0-9]*.py; do
	name=$(sed -n 's/^# task: //p' "$f")
	if [ -e "$T/$name.py" ]; then t=$T/$name.py; else t=$A/task_$name.py; fi
	echo "$PWD/$t $PWD/$f" >>"$list"
done
echo "pairs: $(wc -l <"$list")"

if [ "$what" = egg ] || [ "$what" = all ]; then
	t0=$(date +%s.%N)
	timeout "${SBS_EGG_TIMEOUT:-560}" build/egg eval --batch "$list" --device cuda --json >"$out/egg.json" 2>"$out/egg.err"
	echo "egg exit $?" >>"$out/egg.err"
	echo "$(date +%s.%N) $t0" | awk '{printf "%.1f\n", $1-$2}' >"$out/egg.wall"
	echo "egg: $(cat "$out/egg.wall") s; $(tail -1 "$out/egg.err")"
fi

if [ "$what" = kb ] || [ "$what" = all ]; then
	: >"$out/kb.jsonl"
	t0=$(date +%s.%N)
	while read -r task kernel; do
		s=$(date +%s.%N)
		timeout 180 python3 bench/kb_harness.py "$kbsrc" "$task" "$kernel" >"$out/kb.one" 2>"$out/kb.one.err"
		rc=$?
		e=$(date +%s.%N)
		python3 - "$out/kb.one" "$out/kb.one.err" "$task" "$kernel" "$rc" "$s" "$e" >>"$out/kb.jsonl" <<'PY'
import json, sys
one, err, task, kernel, rc, s, e = sys.argv[1:8]
rows = [l[6:] for l in open(one, errors="replace") if l.startswith("KBROW ")]
row = json.loads(rows[-1]) if rows else {"task": task, "kernel": kernel, "compiled": False, "correctness": False,
                                          "no_row": open(err, errors="replace").read()[-300:]}
row["rc"], row["process_wall_s"] = int(rc), round(float(e) - float(s), 2)
print(json.dumps(row))
PY
	done <"$list"
	echo "$(date +%s.%N) $t0" | awk '{printf "%.1f\n", $1-$2}' >"$out/kb.wall"
	echo "kb: $(cat "$out/kb.wall") s"
fi

if [ "$what" = table ] || [ "$what" = all ]; then
	python3 - "$out" <<'PY' >"$out/table.md"
import json, os, re, sys
out = sys.argv[1]
egg = {os.path.basename(r["kernel"]): r for r in json.load(open(f"{out}/egg.json"))["results"]}
kb = {os.path.basename(r["kernel"]): r for r in map(json.loads, open(f"{out}/kb.jsonl"))}
ew, kw = float(open(f"{out}/egg.wall").read()), float(open(f"{out}/kb.wall").read())
print("| candidate | class | expected | egg verdict | KernelBench eval | KB ref/kernel time | KB static check |")
print("|---|---|---|---|---|---|---|")
eggok = kbok = kbstatic = 0
cheats = 0
for name in sorted(egg, key=lambda n: (not n.startswith("h"), n)):
    head = {m.group(1): m.group(2).strip() for m in re.finditer(r"^# (\w+): (.*)$", open(f"tests/adversarial/{name}").read(), re.M)}
    e, k = egg[name], kb.get(name, {})
    hostile = not head["expect"].startswith("pass")
    cheats += hostile
    ev = "pass" if e["verdict"] == "pass" else f"fail ({e['stage']})"
    accepted = bool(k.get("compiled") and k.get("correctness"))
    kv = "accepts" if accepted else ("rejects" + (" (process died)" if "no_row" in k else ""))
    sp = (k["ref_runtime_us"] / k["runtime_us"]) if accepted and k.get("runtime_us", -1) > 0 and k.get("ref_runtime_us", -1) > 0 else None
    st = "—" if "static_valid" not in k else ("clean" if k["static_valid"] else "flags: " + "; ".join(k["static_errors"])[:60])
    if hostile:
        eggok += e["verdict"] == "pass"
        kbok += accepted
        kbstatic += accepted and k.get("static_valid", False)
    print(f"| {name} | {head.get('class', '')[:48]} | {head['expect']} | {ev} | {kv} | "
          f"{'%.2fx' % sp if sp else '—'}{' (flagged >10x)' if k.get('excessive_speedup') else ''} | {st} |")
n = len(egg)
print()
print(f"Hostile candidates accepted: egg {eggok} of {cheats}; KernelBench's eval {kbok} of {cheats}; "
      f"KernelBench's eval and its static checker together {kbstatic} of {cheats}.")
print(f"Wall time for all {n} pairs: egg {ew:.0f} s ({3600 * n / ew:.0f} kernels per hour, baselines included); "
      f"KernelBench's harness {kw:.0f} s ({3600 * n / kw:.0f} kernels per hour, one process per pair).")
PY
	cat "$out/table.md"
fi
