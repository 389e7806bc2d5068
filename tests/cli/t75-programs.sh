#!/usr/bin/env bash
# t75-programs.sh: whole programs on the CPU. egg split cuts a small CNN and
# a transformer block written for the tests (tests/tasks/programs) into
# subgraph tasks named by what they compute; composing them back with every
# subgraph in PyTorch gives a program that passes egg eval --allow-torch
# (split and compose keep the program's semantics, its parameters
# included) and fails without it (the rule stands); a composition with a
# Triton kernel for one subgraph passes; egg optimize --split with the
# scripted mock model runs to a composed program; a program that cannot be
# traced gets one line naming the construct and its line.
. "$(dirname "$0")/../lib.sh"

P=$SRC/tests/tasks/programs
EV=(eval --device cpu --iters 2 --warmup 1 --trials 2 --compile-mode none)

# --- split
run_egg split --device cpu "$P/small_cnn.py" "$TMP/cnn" --json
expect_rc 0 "egg split cuts the small CNN"
check "into the subgraphs a reader expects, named by what they compute, with their shares" python3 - "$OUT" "$TMP/cnn" <<'PY'
import json, os, sys
plan, d = json.load(open(sys.argv[1])), sys.argv[2]
names = [s["name"] for s in plan["subgraphs"]]
assert names == ["conv1+bn1+relu", "conv2+bn2+add+relu+adaptive_avg_pool2d", "fc"], names
assert abs(sum(s["share"] for s in plan["subgraphs"]) - 1) < 1e-6 and all(s["share"] > 0 for s in plan["subgraphs"])
assert plan["measured_on"] == "cpu" and plan["eager_ms"] > 0 and plan["program"] == "small_cnn.py"
assert json.load(open(os.path.join(d, "plan.json")))["subgraphs"][0]["file"] == "01_conv1_bn1_relu.py"
s1 = plan["subgraphs"][0]
assert s1["params"] == {"conv1.weight": "conv1.weight", "bn1.weight": "bn1.weight", "bn1.bias": "bn1.bias",
                        "bn1.running_mean": "bn1.running_mean", "bn1.running_var": "bn1.running_var",
                        "bn1.num_batches_tracked": "bn1.num_batches_tracked"}, s1["params"]
# The third takes the second's output: non-negative (after a ReLU) and pooled.
src2 = open(os.path.join(d, plan["subgraphs"][1]["file"])).read()
assert "torch.relu(torch.randn(2, 8, 8, 8))" in src2, src2
PY
bad=0
for f in "$TMP"/cnn/0*.py; do
	run_egg eval --device cpu --iters 2 --warmup 1 --compile-mode none "$f"
	if [ "$RC" -ne 0 ]; then bad=1; not_ok "subgraph task $(basename "$f") runs as a task"; diag "$ERR"; fi
done
[ "$bad" -eq 0 ] && ok "every subgraph task of the CNN runs as a task (egg eval measures its baselines)"
run_egg split --device cpu --no-measure --mode eval "$P/small_cnn.py" "$TMP/cnne"
expect_rc 0 "egg split cuts the small CNN in eval mode"
check "an eval-mode task draws its batch norm's statistics at random, by the program runtime's own function" \
	python3 - "$TMP/cnne/01_model_conv1_bn1_relu.py" "$SRC/worker/egg_worker/program/model_runtime.py" <<'PY'
import ast, importlib.util, sys
import torch
task = open(sys.argv[1]).read()
runtime = open(sys.argv[2]).read()
for name in ("_egg_has_statistics", "_egg_random_statistics"):
    node = next(n for n in ast.parse(runtime).body if isinstance(n, ast.FunctionDef) and n.name == name)
    assert ast.get_source_segment(runtime, node) in task, name
spec = importlib.util.spec_from_file_location("t", sys.argv[1])
t = importlib.util.module_from_spec(spec)
spec.loader.exec_module(t)
m = t.Model()
bn = next(x for x in m.modules() if isinstance(x, torch.nn.BatchNorm2d))
assert not m.training and bn.running_mean.abs().sum() > 0 and (bn.running_var != 1).any() and (bn.weight != 1).any()
PY
run_egg split --device cpu --no-measure "$P/transformer_block.py" "$TMP/tb" --json
expect_rc 0 "egg split cuts the transformer block"
check "into layer norm + projection, attention, and the MLP's parts; the mask buffer is the program's" python3 - "$OUT" "$TMP/tb" <<'PY'
import json, os, sys
plan, d = json.load(open(sys.argv[1])), sys.argv[2]
names = [s["name"] for s in plan["subgraphs"]]
assert names == ["ln1+qkv", "attention", "proj+add+ln2", "fc1+gelu", "fc2+add"], names
att = open(os.path.join(d, plan["subgraphs"][1]["file"])).read()
assert "torch.tril(torch.ones(8, 8" in att and "mask" in plan["subgraphs"][1]["params"], plan["subgraphs"][1]
assert all(s["share"] is None for s in plan["subgraphs"]) and plan["measured_on"] is None
PY

# --- compose: every subgraph in PyTorch; then one through a Triton kernel
run_egg compose "$P/small_cnn.py" "$TMP/cnn" -o "$TMP/cnn_torch.py"
expect_rc 2 "compose without kernels and without --keep-torch is refused"
expect_err "^egg: error: subgraph 1 \(conv1\+bn1\+relu\) has no kernel: write .*01_conv1_bn1_relu.kernel.py, or pass --keep-torch" \
	"naming the subgraph and the kernel file it needs"
EGG_WORKER_DIR=$TMP/no-worker run_egg compose "$P/small_cnn.py" "$TMP/cnn" -o "$TMP/cnn_torch.py" --keep-torch
expect_rc 3 "a worker folder without the compose runtime is egg's own failure (exit 3)"
expect_err "^egg: error: .*cannot read '.*no-worker/egg_worker/program/compose_runtime.py'" "naming the file"
for prog in small_cnn:cnn transformer_block:tb; do
	name=${prog%%:*} dir=$TMP/${prog##*:}
	run_egg compose "$P/$name.py" "$dir" -o "$TMP/${name}_torch.py" --keep-torch --json
	expect_rc 0 "compose $name with every subgraph in PyTorch"
	run_egg "${EV[@]}" --allow-torch --json "$P/$name.py" "$TMP/${name}_torch.py"
	if [ "$RC" -eq 0 ] && [ "$(json_get "$OUT" 'j["verdict"]')" = pass ]; then
		ok "the composition of $name passes egg eval --allow-torch against the program"
	else
		not_ok "the composition of $name passes egg eval --allow-torch against the program (exit $RC)"; diag "$ERR" "$OUT"
	fi
done
check "and the verdict says the rule was waived" sh -c "grep -q 'allow_torch: the rule against PyTorch compute' '$OUT'"
run_egg "${EV[@]}" "$P/transformer_block.py" "$TMP/transformer_block_torch.py"
expect_rc 1 "without --allow-torch the same composition fails the rule against PyTorch compute"
expect_err "forward ran PyTorch compute outside Triton kernels" "saying so"
cp "$P/small_cnn_fc_kernel.py" "$TMP/cnn/03_fc.kernel.py"
run_egg compose "$P/small_cnn.py" "$TMP/cnn" -o "$TMP/cnn_k.py" --keep-torch --json
check "compose takes the kernel beside its subgraph's file" test \
	"$(json_get "$OUT" '[p["kind"] for p in j["parts"]]')" = "['torch', 'torch', 'kernel']"
run_egg "${EV[@]}" --allow-torch --json "$P/small_cnn.py" "$TMP/cnn_k.py"
expect_rc 0 "the composition with a Triton kernel for the classifier passes"
check "and launches that kernel" test "$(json_get "$OUT" 'j["triton_launches"]')" -ge 1

# --- a program that cannot be traced
run_egg split --device cpu "$P/data_dependent.py" "$TMP/dd"
expect_rc 2 "a program with data-dependent control flow cannot be split"
expect_err "^egg: error: cannot split '.*data_dependent.py': the forward cannot be traced: data-dependent control flow \(an .if. or .while. on a tensor's values\) at line 13: .if x.sum\(\) > 0:." \
	"one line naming the construct and the line"
check "on one line (after the split's progress lines), the last" \
	test "$(grep -c '^egg: error:' "$ERR")" -eq 1 -a "$(tail -1 "$ERR" | cut -c1-11)" = "egg: error:"

# --- egg optimize --split with the scripted model: the classifier gets the
# kernel above; the convolutions get it too, fail, and stay PyTorch.
export EGG_MODEL=mock-model EGG_API_KEY=sk-test EGG_LLM_RETRY_BASE_MS=10
python3 - "$P/small_cnn_fc_kernel.py" >"$TMP/script.json" <<'PY'
import json, sys
print(json.dumps([{"match": ["mode: seed"], "repeat": True, "wrap": "python", "reply_file": sys.argv[1]}]))
PY
start_mock "$TMP/script.json"
# --min-share 0: every subgraph is a task, whatever share CPU timings give it.
run_egg optimize --split --min-share 0 --device cpu --seeds 1 --seed-repairs 0 --no-refine --no-hw-tune --iters 2 \
	--warmup 1 --trials 2 --compile-mode none -q -o "$TMP/cnn_fast.py" --json "$P/small_cnn.py"
expect_rc 0 "egg optimize --split runs to a composed program"
check "its summary gives each subgraph's share and outcome and the end-to-end verdict" python3 - "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
rows = {s["name"]: s for s in j["subgraphs"]}
assert rows["fc"]["status"] == "optimized" and rows["fc"]["used"] is True, rows["fc"]
assert all(rows[n]["status"] == "no_kernel" and not rows[n]["used"] for n in rows if n != "fc"), rows
assert j["finished"] and j["end_to_end"]["verdict"] == "pass" and j["end_to_end"]["allow_torch"] is True, j["end_to_end"]
assert j["amdahl"]["parts_speedup"] > 0 and j["amdahl"]["bound_speedup"] is None, j["amdahl"]
assert j["composed"].endswith("cnn_fast.py"), j["composed"]
PY
run_egg "${EV[@]}" --allow-torch "$P/small_cnn.py" "$TMP/cnn_fast.py"
expect_rc 0 "the composed program passes egg eval on its own"
# The program budget: --max-subgraphs 2 optimizes the two distinct tasks of
# largest share (the convolutions, which get no kernel from this script);
# the classifier, the smallest, stays PyTorch and says why. Its own store:
# the report checks below read the run above.
stop_mock
start_mock "$TMP/script.json"
EGG_STORE=$TMP/store-budget run_egg optimize --split --min-share 0 --max-subgraphs 2 --device cpu --seeds 1 \
	--seed-repairs 0 --no-refine --no-hw-tune --iters 2 --warmup 1 --trials 2 --compile-mode none -q --json \
	"$P/small_cnn.py"
expect_rc 1 "egg optimize --split --max-subgraphs 2: the two tasks tried found no kernel (exit 1)"
check "two seed requests: one per task optimized" test "$(mock_requests)" -eq 2
check "the two of largest share were tried, the classifier stays PyTorch beyond the budget" python3 - "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
rows = {s["name"]: s for s in j["subgraphs"]}
assert rows["fc"]["status"] == "skipped" and rows["fc"]["why"].startswith("beyond --max-subgraphs 2"), rows["fc"]
tried = [s for n, s in rows.items() if n != "fc"]
assert all(s["status"] == "no_kernel" for s in tried), tried
assert rows["fc"]["task_share"] <= min(s["task_share"] for s in tried), rows
# The Amdahl line says what the budget left in PyTorch holds.
assert j["amdahl"]["skipped_ms"] == rows["fc"]["eager_ms"] and j["amdahl"]["skipped_share"] > 0, j["amdahl"]
PY
# With torch.compile measured, which tasks go first is decided by the time
# each leaves after torch.compile (its share times torch.compile's ratio in
# its task), each distinct task's baseline measured before the cut.
stop_mock
start_mock "$TMP/script.json"
EGG_STORE=$TMP/store-bar run_egg optimize --split --min-share 0 --max-subgraphs 2 --device cpu --seeds 1 \
	--seed-repairs 0 --no-refine --no-hw-tune --iters 2 --warmup 1 --trials 2 -q --json "$P/small_cnn.py"
# Which two go first follows this machine's CPU timings of torch.compile, so
# the exit code is checked against the cut it made: the script gives only
# the classifier a kernel (exit 0 when it was among the two tried, else 1).
check "egg optimize --split --max-subgraphs 2 with torch.compile measured: its exit code follows the cut (exit $RC)" \
	python3 - "$OUT" "$RC" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
fc = next(s for s in j["subgraphs"] if s["name"] == "fc")
want = 1 if fc["status"] == "skipped" else 0
assert int(sys.argv[2]) == want, (sys.argv[2], fc)
assert fc["status"] in ("skipped", "optimized"), fc
PY
check "the cut goes by the time left after torch.compile, and says so" python3 - "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
rows = [s for s in j["subgraphs"] if s["status"] != "glue"]
assert all(s["task_compile_ratio"] > 0 for s in rows), rows
for s in rows:
    assert abs(s["share_after_compile"] - s["task_share"] * min(1.0, s["task_compile_ratio"])) < 1e-9, s
skipped = [s for s in rows if s["status"] == "skipped"]
assert len(skipped) == 1 and "with the most time left after torch.compile" in skipped[0]["why"], skipped
assert skipped[0]["share_after_compile"] <= min(s["share_after_compile"] for s in rows), rows
PY
run_egg optimize --max-subgraphs 2 --device cpu "$P/small_cnn.py"
expect_rc 2 "--max-subgraphs without --split is refused"
run_egg report latest
expect_out "^program .*small_cnn.py: 3 subgraph\(s\)" "egg report shows the whole program"
expect_out "^  fc .* optimized \(in the program\)" "with each subgraph by name and outcome"
expect_out "^  end to end: pass" "and the end-to-end result"
expect_out "^the parts, each timed alone \(the whole program end to end is below\): [0-9]+ tasks" \
	"its rates (fast_1 and the rest) are named the parts' alone, not the program's"
check "and no 'all:' line reads as the program's" bash -c "! grep -q '^all: ' '$OUT'"
run_egg report latest --html "$TMP/r.html"
check "the HTML report has the whole program too" grep -q "<h2>Whole program</h2>" "$TMP/r.html"
check "and its summary is named the parts' alone" grep -q "<h2>Summary of the parts, each timed alone" "$TMP/r.html"
# --- kernels that pass alone but not together: fc2's kernel is right only
# for the unit-scale inputs its subgraph task draws, and the program feeds it
# values 1000 times larger. The first composition fails; egg then adds the
# kernels one by one in order of share, keeps fc1+mul's, leaves fc2 in
# PyTorch, and says why.
python3 - "$P" >"$TMP/script-mlp.json" <<'PY'
import json, sys
p = sys.argv[1]
print(json.dumps([
    {"match": ["mode: seed", "Task: split__01_fc1_mul."], "repeat": True, "wrap": "python",
     "reply_file": f"{p}/scaled_mlp_fc1_kernel.py"},
    {"match": ["mode: seed", "Task: split__02_fc2."], "repeat": True, "wrap": "python",
     "reply_file": f"{p}/scaled_mlp_fc2_kernel.py"}]))
PY
start_mock "$TMP/script-mlp.json"
run_egg optimize --split --min-share 0 --device cpu --seeds 1 --seed-repairs 0 --no-refine --no-hw-tune --iters 2 \
	--warmup 1 --trials 2 --compile-mode none -q -o "$TMP/mlp.py" --json "$P/scaled_mlp.py"
expect_rc 0 "egg optimize --split composes a program when one kernel fails in it"
check "keeping the kernel that composes and saying why the other stays PyTorch" python3 - "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
rows = {s["name"]: s for s in j["subgraphs"]}
assert rows["fc1+mul"]["status"] == "optimized" and rows["fc1+mul"]["used"] is True, rows["fc1+mul"]
assert rows["fc2"]["status"] == "fails_in_program" and rows["fc2"]["used"] is False, rows["fc2"]
assert rows["fc2"]["why"].startswith("the whole failed with it: "), rows["fc2"]
assert j["first_composition"]["verdict"] == "fail", j.get("first_composition")
assert j["finished"] and j["end_to_end"]["verdict"] == "pass", j["end_to_end"]
PY
run_egg "${EV[@]}" --allow-torch "$P/scaled_mlp.py" "$TMP/mlp.py"
expect_rc 0 "the program it composed passes egg eval on its own"
# The program's record refused (the fault point of src/util/fault.h): the
# run stops (exit 3) and says why, and no report reads a stale record.
EGG_FAULT=program_json run_egg optimize --split --min-share 0 --device cpu --seeds 1 --seed-repairs 0 --no-refine \
	--no-hw-tune --iters 2 --warmup 1 --trials 2 --compile-mode none -q -o "$TMP/mlp-unrecorded.py" "$P/scaled_mlp.py"
expect_rc 3 "a program record that cannot be written stops the run"
expect_err "^egg: error: the program's record could not be written: cannot write '.*program.json'" "and says so"
check "the output was not written as if the run had succeeded" test ! -e "$TMP/mlp-unrecorded.py"
run_egg report latest
expect_out "^run [^ ]+ \(optimize, stopped\)" "egg report shows the run stopped"
expect_out "^run stopped: the program's record could not be written" "and why"
check "and shows no program record" bash -c "! grep -q '^program ' '$OUT'"

# --- a spooled whole program, resumed with the command egg prints: the
# resumed run replays the options it was started with (the spool, the CPU,
# one seed and no repair, -o), so the printed command needs nothing else.
SPOOL=$TMP/spool
export EGG_STORE=$TMP/store-spooled  # its own store: no reply cached by the run above
EGG_BASE_URL=https://api.example.invalid/v1 run_egg optimize --split --min-share 0 --device cpu --seeds 1 \
	--seed-repairs 0 --no-refine --no-hw-tune --iters 2 --warmup 1 --trials 2 --compile-mode none \
	--llm-spool "$SPOOL" -q -o "$TMP/cnn_spooled.py" --json "$P/small_cnn.py"
expect_rc 4 "a spooled egg optimize --split waits for its replies (exit 4)"
expect_err "run 'egg optimize .*small_cnn.py --split --resume [^ ]*'$" "and prints the command that goes on"
RUN=$(json_get "$OUT" 'j["run_id"]')
python3 - "$SPOOL" "$P/small_cnn_fc_kernel.py" <<'PY'
import glob, json, sys
spool, kernel = sys.argv[1], sys.argv[2]
for path in glob.glob(f"{spool}/pending/*.json"):
    key = json.load(open(path))["key"]
    open(f"{spool}/replies/{key}.txt", "w").write("```python\n" + open(kernel).read() + "```\n")
PY
check "one seed request per subgraph waits" test "$(ls "$SPOOL/replies" | wc -l)" -eq 3
EGG_BASE_URL=https://api.example.invalid/v1 run_egg optimize "$P/small_cnn.py" --split --resume "$RUN"
expect_rc 0 "the printed command finishes the run with the spool's replies, no network"
check "with the options it was started with: -o's file is the composed program" \
	grep -q "class ModelNew" "$TMP/cnn_spooled.py"
run_egg report "$RUN" --json
check "its subgraphs ran on the CPU with one seed: fc optimized, the convolutions without a kernel" python3 - "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["all"]["tasks"] == 3 and j["all"]["success"] == 1, j["all"]
PY

# --- repeated subgraphs are one task: the same block at every layer, with
# its own weights, is written once as a task however many layers there are,
# and one kernel serves every occurrence, each binding its own tensors.
export EGG_STORE=$TMP/store-repeats
for layers in 2 4; do
	LAYERS=$layers run_egg split --device cpu --no-measure --json "$P/repeated_blocks.py" "$TMP/rb$layers"
	expect_rc 0 "egg split cuts $layers repeated blocks"
done
check "2 and 4 layers give the same distinct tasks (5), each repeat naming its task and its own tensors" \
	python3 - "$TMP/rb2/plan.json" "$TMP/rb4/plan.json" <<'PY'
import json, sys
p2, p4 = (json.load(open(p)) for p in sys.argv[1:])
assert len(p2["subgraphs"]) == 6 and len(p4["subgraphs"]) == 10, (len(p2["subgraphs"]), len(p4["subgraphs"]))
distinct = lambda p: sorted({s["task"] for s in p["subgraphs"]})
assert len(distinct(p2)) == len(distinct(p4)) == 5, (distinct(p2), distinct(p4))
up = [s for s in p4["subgraphs"] if s["name"].endswith("up+act")]
assert len(up) == 4 and all(s["task"] == up[0]["file"] for s in up) and up[0]["occurrences"] == 4, up
assert up[2]["task_params"] == {"blocks_0_up.weight": "blocks.2.up.weight", "blocks_0_up.bias": "blocks.2.up.bias"}, up[2]
PY
LAYERS=4 run_egg split --device cpu --no-measure "$P/repeated_blocks.py" "$TMP/rb4-text"
expect_err "in 10 subgraph\(s\), 5 distinct task\(s\)" "egg split says how many distinct tasks"
expect_err "^  [0-9]+ +blocks.0.up\+act +x4 +- +- +02_blocks_0_up_act.py$" \
	"one row per distinct task, with how many subgraphs it stands for"
check "and no row for a repeat" bash -c "! grep -q '08_blocks_3_up_act' '$ERR'"
python3 - "$P/repeated_blocks_up_kernel.py" >"$TMP/script-rb.json" <<'PY'
import json, sys
print(json.dumps([{"match": ["mode: seed"], "repeat": True, "wrap": "python", "reply_file": sys.argv[1]}]))
PY
start_mock "$TMP/script-rb.json"
run_egg optimize --split --min-share 0 --device cpu --seeds 1 --seed-repairs 0 --no-refine --no-hw-tune --iters 2 \
	--warmup 1 --trials 2 --compile-mode none -q -o "$TMP/rb_fast.py" --json "$P/repeated_blocks.py"
expect_rc 0 "egg optimize --split on three repeated blocks"
check "one model call per distinct task (5), not per subgraph (8)" test "$(mock_requests)" -eq 5
check "the one up+act kernel serves its three occurrences, and the whole passes" python3 - "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
up = [s for s in j["subgraphs"] if s["name"].endswith("up+act")]
assert len(up) == 3 and all(s["status"] == "optimized" and s["used"] for s in up), up
assert up[0]["occurrences"] == 3 and up[0]["task_share"] > max(s["share"] for s in up), up[0]
assert j["end_to_end"]["verdict"] == "pass", j["end_to_end"]
PY
check "the composed program binds each layer's own weights to its task's kernel" python3 - "$TMP/rb_fast.py" <<'PY'
import ast, json, sys
tree = ast.parse(open(sys.argv[1]).read())
plan = next(json.loads(n.value.args[0].value) for n in tree.body
            if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "_EGG_PLAN")
ups = [p for p in plan["parts"] if p["kind"] == "kernel"]
assert len(ups) == 3 and len({p["task"] for p in ups}) == 1, ups
assert ups[2]["params"] == {"blocks_0_up.weight": "blocks.2.up.weight", "blocks_0_up.bias": "blocks.2.up.bias"}, ups[2]
PY
run_egg "${EV[@]}" --allow-torch "$P/repeated_blocks.py" "$TMP/rb_fast.py"
expect_rc 0 "the composed program passes egg eval on its own"
run_egg report latest
expect_out "^program .*repeated_blocks.py: 8 subgraph\(s\), 5 distinct task\(s\)" "egg report counts the distinct tasks"
expect_out "^  blocks.0.up\+act +x3 +[0-9.]+% .* optimized \(in the program\)" \
	"and one row for the three occurrences of a task, with their summed share"
check "and no row for a repeat" bash -c "! grep -qE '^  blocks\.[12]\.up\+act +x' '$OUT'"
stop_mock
finish
