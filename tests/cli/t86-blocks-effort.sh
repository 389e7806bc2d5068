#!/usr/bin/env bash
# t86-blocks-effort.sh: where the time is. The split offers, beside its
# subgraphs, the residual blocks (several anchors as one task) found from
# the traced graph: a decoder's attention block and MLP (gate, up,
# SiLU*mul, down, the residual), a ConvNeXt-style block; egg compose puts
# either cut together; egg optimize --split chooses per block by what each
# cut can win, runs a chosen block as a task, keeps its kernel only where
# it beats its subgraphs run their best way, and spreads one budget of
# model calls over the tasks by the time each can still win (a scripted
# network on the fake worker: the figures are exact).
. "$(dirname "$0")/../lib.sh"

P=$SRC/tests/tasks/programs
EV=(eval --device cpu --allow-torch --iters 2 --warmup 1 --trials 2 --compile-mode none)

# --- the blocks of a ConvNeXt-style program, and both cuts composed
run_egg split --device cpu --no-measure "$P/convnext_blocks.py" "$TMP/cn" --json
expect_rc 0 "egg split of two ConvNeXt-style blocks"
check "each block (depthwise conv, LayerNorm, fc1, GELU, fc2, scale, residual) is offered as one task" \
	python3 - "$TMP/cn/plan.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
b = p["blocks"]
assert [x["replaces"] for x in b] == [[0, 1, 2], [3, 4, 5]] and all(x["anchors"] == 3 for x in b), b
ops = b[0]["ops"]
assert ops[0] == "conv2d" and "layernorm" in ops and "gelu" in ops and ops.count("linear") == 2 and "add" in ops, ops
assert b[0]["inputs"] == ["x"] and len(b[0]["outputs"]) == 1, b[0]
PY
for f in "$TMP"/cn/block0*.py; do sed 's/^class Model(/class ModelNew(/' "$f" >"${f%.py}.kernel.py"; done
run_egg compose "$P/convnext_blocks.py" "$TMP/cn" -o "$TMP/cn_blocks.py" --keep-torch --json
expect_rc 0 "compose the blocks' cut"
check "each block runs in place of its three subgraphs" test \
	"$(json_get "$OUT" '[p["kind"] for p in j["parts"]]')" = "['kernel', 'kernel']"
run_egg "${EV[@]}" "$P/convnext_blocks.py" "$TMP/cn_blocks.py"
expect_rc 0 "the blocks' composition passes end to end"
rm "$TMP"/cn/block0*.kernel.py
run_egg compose "$P/convnext_blocks.py" "$TMP/cn" -o "$TMP/cn_fine.py" --keep-torch --json
check "without a block's kernel, its subgraphs" test "$(json_get "$OUT" 'len(j["parts"])')" = 6
run_egg "${EV[@]}" "$P/convnext_blocks.py" "$TMP/cn_fine.py"
expect_rc 0 "the fine cut's composition passes end to end"

# --- a block as torchvision builds it before training (layer scale 1e-6, a
# new LayerNorm): its task draws those constants, so that a kernel skipping
# the MLP fails (with the program's own values its error was 7e-7), and the
# block's own code as a kernel still passes (it gets the task's values).
run_egg split --device cpu --no-measure "$P/convnext_init.py" "$TMP/ci" --json
expect_rc 0 "egg split of ConvNeXt-style blocks at their initial values"
blk=$(ls "$TMP"/ci/block01_*.py)
run_egg eval --device cpu --iters 2 --warmup 1 --trials 2 --compile-mode none --json "$blk" "$P/convnext_init_skip_kernel.py"
expect_rc 1 "a block kernel that skips the MLP fails its task"
check "at correctness" test "$(json_get "$OUT" 'j["verdict"] + " " + j["stage"]')" = "fail correctness"
python3 - "$blk" >"$TMP/ci/own.kernel.py" <<'PY'
import sys
text = open(sys.argv[1]).read()
print(text[:text.index("\ndef get_inputs")].replace("\nclass Model(", "\nclass ModelNew("))
PY
run_egg eval --device cpu --iters 2 --warmup 1 --trials 2 --compile-mode none --allow-torch "$blk" "$TMP/ci/own.kernel.py"
expect_rc 0 "the block's own code, drawing its constants afresh, passes (the candidate takes the task's values)"
# The program itself: a model spec's program (here the same file in eval
# mode) draws its constant parameters when it builds its model, so that the
# end-to-end check sees each block's MLP too. A drop-in whose two block
# kernels skip the MLP (each binding the block's weights, as a real kernel
# does) fails egg eval against the program; with the program's own values
# (before) it passed, with an error of 1e-6.
run_egg split --device cpu --no-measure --mode eval "$P/convnext_init.py" "$TMP/ce" --json
expect_rc 0 "egg split of the same blocks as a program of egg's own (eval mode)"
for b in "$TMP"/ce/block0?_*.py; do
	python3 - "$b" "$P/convnext_init_skip_kernel.py" >"${b%.py}.kernel.py" <<'PY'
import sys
task, skip = open(sys.argv[1]).read(), open(sys.argv[2]).read()
own = task[:task.index("\ndef get_inputs")].replace("\nclass Model(", "\nclass _Own(")
print(own + "\n\n" + skip.replace("class ModelNew(nn.Module):", "class ModelNew(_Own):"))
PY
done
run_egg compose "$TMP/ce/convnext_init_eval.py" "$TMP/ce" -o "$TMP/ce/skip.py"
expect_rc 0 "compose a drop-in whose block kernels skip the MLP"
run_egg eval --device cpu --iters 2 --warmup 1 --trials 2 --compile-mode none --allow-torch --json \
	"$TMP/ce/convnext_init_eval.py" "$TMP/ce/skip.py"
expect_rc 1 "that drop-in fails the program's end-to-end check"
check "at correctness" test "$(json_get "$OUT" 'j["verdict"] + " " + j["stage"]')" = "fail correctness"

# --- a Llama-style decoder: the MLP and the attention block, found from the graph
if python3 -c "import transformers" 2>/dev/null; then
	M=$SRC/tests/tasks/models/decoders.py
	run_egg split --device cpu --no-measure "$M:llama" "$TMP/ll" --inputs 2x16:int64:512 --json
	expect_rc 0 "egg split of a two-layer Llama"
	check "it offers each layer's attention block (5 anchors) and MLP (gate, up, SiLU*mul, down, residual)" \
		python3 - "$TMP/ll/plan.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
b = p["blocks"]
assert [x["anchors"] for x in b] == [5, 3, 5, 3], [(x["name"], x["anchors"]) for x in b]
mlp = b[1]
assert mlp["ops"][:5] == ["linear", "silu", "linear", "mul", "linear"] and "add" in mlp["ops"], mlp["ops"]
assert mlp["name"].startswith("model.model.layers.0.mlp.gate_proj"), mlp["name"]
assert b[2]["task"] == b[0]["file"], "the second layer's attention block is the first's task"
PY
	mlp=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["blocks"][1]["file"])' "$TMP/ll/plan.json")
	sed 's/^class Model(/class ModelNew(/' "$TMP/ll/$mlp" >"$TMP/ll/${mlp%.py}.kernel.py"
	prog=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["program_file"])' "$OUT")
	run_egg compose "$prog" "$TMP/ll" -o "$TMP/ll_mlp.py" --keep-torch --json
	check "the first MLP runs as one part" test \
		"$(json_get "$OUT" 'sum(p["kind"] == "kernel" for p in j["parts"])')" = 1
	run_egg "${EV[@]}" "$prog" "$TMP/ll_mlp.py"
	expect_rc 0 "the decoder with its MLP block composed passes end to end"
else
	ok "a Llama's blocks # SKIP transformers is not installed (scripts/setup.sh --tests installs it)"
fi

# --- egg optimize --split --cut blocks, a real Triton kernel for the block (CPU, interpreter)
export EGG_MODEL=mock-model EGG_API_KEY=sk-test EGG_LLM_RETRY_BASE_MS=10
python3 - "$P/repeated_blocks_block_kernel.py" >"$TMP/script.json" <<'PY'
import json, sys
print(json.dumps([{"match": ["mode: seed", "Task: split__block01"], "repeat": True, "wrap": "python",
                   "reply_file": sys.argv[1]},
                  {"match": ["mode: seed"], "repeat": True, "reply": "no kernel here"}]))
PY
start_mock "$TMP/script.json"
OPT=(optimize --split --min-share 0 --device cpu --seeds 1 --seed-repairs 0 --no-refine --no-hw-tune --iters 2
	--warmup 1 --trials 2 --compile-mode none -q --json)
run_egg "${OPT[@]}" --cut blocks -o "$TMP/rb_blocks.py" "$P/repeated_blocks.py"
expect_rc 0 "egg optimize --split --cut blocks on three repeated blocks"
check "the two blocks of one task run its kernel in the program, in place of their subgraphs" python3 - "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
rows = {r["name"]: r for r in j["subgraphs"]}
blocks = [r for r in j["subgraphs"] if r.get("block")]
used = [r for r in blocks if r["used"]]
assert len(used) == 2 and len({r["task"] for r in used}) == 1 and all(r["status"] == "optimized" for r in used), blocks
assert rows["blocks.0.up+act"]["status"] == "in_block" and rows["blocks.1.down+add+blocks.2.norm"]["status"] == "in_block"
assert all(c["chosen"] == "block" and c["why"] == "--cut blocks" for c in j["cuts"]), j["cuts"]
assert j["end_to_end"]["verdict"] == "pass", j["end_to_end"]
PY
run_egg "${EV[@]}" "$P/repeated_blocks.py" "$TMP/rb_blocks.py"
expect_rc 0 "the drop-in with the block's Triton kernel passes egg eval on its own"
stop_mock
start_mock "$TMP/script.json"
run_egg "${OPT[@]}" "$P/repeated_blocks.py"
check "--cut auto on the CPU keeps the subgraphs, and says why" python3 - "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert all(c["chosen"] == "subgraphs" and "on the CPU" in c["why"] for c in j["cuts"]) and j["cuts"], j.get("cuts")
assert not any(r.get("block") for r in j["subgraphs"]), "a block ran"
PY
stop_mock
run_egg optimize --split --cut coarse "$P/repeated_blocks.py"
expect_rc 2 "an unknown --cut is refused"
expect_err "^egg: error: --cut takes auto, fine or blocks, not 'coarse'" "in one line"

# --- a scripted network on the fake worker: the effort by time at stake,
# and the block chosen by what each cut can win
export FAKEWORKER_SPLIT=$SRC/tests/pipeline/network/plan.json
start_mock "$SRC/tests/pipeline/network/replies.json"
run_egg optimize --split --device cuda --worker-cmd "python3 $SRC/tests/mock/fakeworker.py" --no-profile \
	-o "$TMP/net.py" "$SRC/tests/pipeline/network/network.py"
expect_rc 0 "egg optimize --split of the scripted network"
run=$(ls "$EGG_STORE/runs" | grep network | tail -1)
check "the calls go by time at stake: 60% of it gets more than 21%, and the part at its bound its seeds only" \
	python3 - "$EGG_STORE/runs/$run/program.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
e = {t["task"]: t["effort"] for t in j["effort"]["tasks"]}
assert j["effort"]["budget_calls"] == 48 and j["effort"]["planned_calls"] <= 48, j["effort"]
assert e["a.py"]["planned_calls"] > e["b.py"]["planned_calls"] > e["d.py"]["planned_calls"] == 2, e
assert e["a.py"]["refine_rounds"] > 1 and e["a.py"]["fresh_seeds"] >= 1 and e["d.py"]["at_bound"], e
rows = {r["name"]: r for r in j["subgraphs"]}
used = {n: (rows[n].get("usage") or {}).get("calls", 0) for n in ("a", "b again", "b .. c")}
assert used["a"] > used["b again"] > 0, used
extras = rows["a"]["extras"]
assert [x["kind"] for x in extras].count("fresh_seed") == 1 and all("59%" in x["why"] for x in extras), extras
PY
check "the block that can win 1.29x what its subgraphs can is chosen, and runs in their place" \
	python3 - "$EGG_STORE/runs/$run/program.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
c = j["cuts"][0]
assert c["chosen"] == "block" and abs(c["block_win_ms"] - 0.18) < 1e-9 and abs(c["subgraphs_win_ms"] - 0.14) < 1e-9, c
rows = {r["name"]: r for r in j["subgraphs"]}
assert rows["b"]["status"] == rows["c"]["status"] == "in_block" and rows["b .. c"]["used"], rows
assert abs(rows["b .. c"]["fine_bar_ms"] - 0.2) < 1e-9, rows["b .. c"]
assert rows["b again"]["status"] == "optimized", "the repeat outside the block still runs its task"
PY
expect_err "^  effort by time at stake: 48 model calls spread over 0.9350 ms at stake, 47 planned:" \
	"the report says how the calls were spread"
expect_err "^      fresh seed 3 \(seed3\): gained nothing" "and what each extra round gained"
expect_err "^    b \.\. c \(blk.py, 1 occurrence\(s\)\): block: the block can win 0.1800 ms" "and each block's cut"
stop_mock
# A block's cut is decided by all its subgraphs, c too when --min-share
# leaves c (4.8% of the time) out: its baseline is measured for the cut
# (ConvNeXt-T's residual adds are 1.2% each, and its stage-3 blocks' fc1 is
# a repeat of an earlier block's: their blocks were "not measured").
start_mock "$SRC/tests/pipeline/network/replies.json"
run_egg optimize --split --device cuda --worker-cmd "python3 $SRC/tests/mock/fakeworker.py" --no-profile \
	--min-share 5 -o "$TMP/net5.py" "$SRC/tests/pipeline/network/network.py"
run=$(ls "$EGG_STORE/runs" | grep network | tail -1)
check "a subgraph under --min-share still counts in its block's cut (measured, not 'not measured')" \
	python3 - "$EGG_STORE/runs/$run/program.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
c = j["cuts"][0]
assert c["chosen"] == "block" and abs(c["subgraphs_win_ms"] - 0.14) < 1e-9, c
rows = {r["name"]: r for r in j["subgraphs"]}
assert rows["c"]["status"] == "in_block", rows["c"]
PY
stop_mock
finish
