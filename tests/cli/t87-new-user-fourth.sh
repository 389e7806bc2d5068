#!/usr/bin/env bash
# t87-new-user-fourth.sh: what a new user met a fourth time (issue 59):
#  1. a reply that leaves out a required field is never read as a default: a
#     tuning plan without "change" and a reply without JSON are malformed,
#     asked once more (then discarded), each said in one line on stderr;
#  2. the spool's waiting line names scripts/spool-render.py, and the first
#     wait says how to ask for fewer requests;
#  4. a model spec whose import fails as torchvision's does with a torch it
#     was not built for ("operator torchvision::nms does not exist") is one
#     line naming the torchvision build to install for the installed torch;
#  5. egg optimize --llm-spool needs no --model (nor a key), egg doctor says a
#     spool is set and that optimize will wait on it, and spool replies are
#     not priced as the named model's (cost unknown, said so);
#  3+6. egg split's table and egg optimize --split's summary: one row per
#     distinct task with how many subgraphs it stands for (twelve layers are
#     not twelve rows, nor one pending path twelve times), names cut in the
#     middle so that a layer's q, k, v and o read apart, each time labelled
#     (inside the program, or the task alone), and a noisy time marked with
#     a word, its share said to be rough (on a scripted plan: the noise
#     itself is measured by the worker, tests/worker/test_noise.py);
#  7. a typo in a model spec's FILE.py:NAME (or --inputs FILE.py:FN) is one
#     line before any worker starts, with the nearest name; the -o file is
#     named in the last line; the composed drop-in run on the CPU without
#     TRITON_INTERPRET=1 says so in one line, not Triton's "0 active drivers".
. "$(dirname "$0")/../lib.sh"

export EGG_API_KEY=sk-test EGG_LLM_RETRY_BASE_MS=10
TASK=$SRC/tests/tasks/bias_relu_scale.py
FAKE="python3 $SRC/tests/mock/fakeworker.py"
FAKE_FLAGS=(--device cuda --worker-cmd "$FAKE" --seeds 1 --no-refine --stages mapping --ask-every-stage)

# --- 1. a reply without a required field is malformed, and said so
python3 - "$SRC/tests/pipeline/refined.py" >"$TMP/nochange.json" <<'PY'
import json, sys
plan = json.dumps({"bottleneck": "the grid is small", "modification_plan": "keep the grid"})
print(json.dumps([{"match": ["mode: seed"], "reply_file": sys.argv[1], "wrap": "python"},
                  {"match": ["Role: profile agent, mode: parallel mapping"], "reply": plan, "repeat": True},
                  {"match": ["mode: hardware tuning"], "reply_file": sys.argv[1], "wrap": "python"}]))
PY
start_mock "$TMP/nochange.json"
EGG_MODEL=mock-model run_egg optimize "${FAKE_FLAGS[@]}" --no-cache "$TASK"
expect_rc 0 "a run whose tuning plans leave out 'change' ends"
check "the plan without 'change' is not taken as a yes: no tuning kernel is asked for" \
	bash -c "! grep -q 'mode: hardware tuning' '$MOCK_LOG'"
check "it is asked once more, told what was missing, then discarded" python3 - "$MOCK_LOG" <<'PY'
import json, sys
users = [json.loads(json.loads(l)["body"])["messages"][1]["content"] for l in open(sys.argv[1])]
asks = [u for u in users if "Name the main obstacle" in u or "grid mapping" in u]
assert len(asks) == 2, len(asks)
assert "could not be used: the JSON reply has no 'change'" in asks[1], asks[1][-400:]
PY
expect_err "^egg: \\[mapping\\] the profile.mapping reply about seed1 could not be used: the JSON reply has no 'change'; asked once more, told what was wrong$" \
	"the terminal says what was missing and that egg asks again"
expect_err "^egg: \\[mapping\\] the profile.mapping reply about seed1 could not be used: the JSON reply has no 'change'; discarded, the current best kept$" \
	"and, the second time, that the reply was discarded"

# A reply with no JSON at all, answered by hand through the spool: the
# terminal says so before the wait for the request that asks again.
SP=$TMP/spool1
spool_answer() { # spool_answer TEXT_FOR_PROFILE: answers every pending request
	python3 - "$SP" "$SRC/tests/pipeline/refined.py" "$1" <<'PY'
import glob, json, os, sys
spool, kernel, profile = sys.argv[1:]
for path in glob.glob(f"{spool}/pending/*.json"):
    req = json.load(open(path))
    agent = req["context"]["agent"]
    text = "```python\n" + open(kernel).read() + "```\n" if agent.startswith("code.") else profile
    open(f"{spool}/replies/{req['key']}.txt", "w").write(text)
PY
}
EGG_MODEL=mock-model run_egg optimize "${FAKE_FLAGS[@]}" --llm-spool "$SP" "$TASK"
expect_rc 4 "a spool run waits for its seed"
# --- 2. the waiting line names the script that renders a request, and the
# first wait says how to ask for fewer requests
render=$(sed -n 's/^egg: waiting: .* (as text: python3 \([^ ]*\) .* OUT); write each reply to .*/\1/p' "$ERR")
check "the waiting line names scripts/spool-render.py by a path that runs" \
	test "$render" = "$(realpath "$SRC/scripts/spool-render.py")"
check "the waiting line is the last line" bash -c "tail -1 '$ERR' | grep -q '^egg: waiting: 1 request(s) await a reply in $SP/pending'"
expect_err "^egg: each request is one model call, .*; to answer fewer by hand, ask for fewer: --no-multi-seed --no-refine --no-hw-tune .*--split --max-subgraphs 1$" \
	"before any reply is written, one line says how to ask for fewer requests"
python3 "$render" "$SP" "$TMP/rendered" >/dev/null
check "the command it names renders the request" test "$(ls "$TMP/rendered" | wc -l)" -eq 1
spool_answer "unused"
EGG_MODEL=mock-model run_egg optimize "${FAKE_FLAGS[@]}" --llm-spool "$SP" "$TASK"
expect_rc 4 "then for the mapping stage's plan"
check "once a reply is written, the hint is not said again" bash -c "! grep -q 'ask for fewer' '$ERR'"
check "the waiting line names the script again" grep -q "spool-render.py $SP OUT" "$ERR"
check "no unusable reply so far, and none said" bash -c "! grep -q 'could not be used' '$ERR'"
spool_answer "The grid looks fine to me."
EGG_MODEL=mock-model run_egg optimize "${FAKE_FLAGS[@]}" --llm-spool "$SP" "$TASK"
expect_rc 4 "with the plan answered in prose, it waits again"
expect_err "^egg: \\[mapping\\] the profile.mapping reply about seed1 could not be used: the reply holds no JSON object; asked once more, told what was wrong$" \
	"the reply without JSON is said, not re-asked silently"
check "the request that asks again is pending" python3 - "$SP" <<'PY'
import glob, json, sys
reqs = [json.load(open(p)) for p in glob.glob(sys.argv[1] + "/pending/*.json")]
assert len(reqs) == 1 and reqs[0]["context"]["agent"] == "profile.mapping", reqs
assert "the reply holds no JSON object" in reqs[0]["messages"][-1]["content"]
PY

# --- 4. torchvision built for another torch: what to install, in one line.
# The model's file fails on import as `import torchvision` does with the
# CPU torch and PyPI's wheel (that torchvision is not installed here).
cat >"$TMP/vision4.py" <<'PY'
import torch
raise RuntimeError("operator torchvision::nms does not exist")
def resnet():
    return torch.nn.Identity()
PY
want=$(python3 -c '
import torch
v = torch.__version__; base, _, local = v.partition("+"); minor = int(base.split(".")[1])
print(f"pip install \x27torchvision==0.{minor + 15}.*\x27" + (f" --index-url https://download.pytorch.org/whl/{local}" if local else ""))')
run_egg split --device cpu --no-measure "$TMP/vision4.py:resnet" --inputs 2x3 "$TMP/split4"
expect_rc 2 "a model whose torchvision import fails is the user's input (exit 2)"
check "one line names the torchvision build to install for this torch ($want)" test \
	"$(grep -c "^egg: error: cannot split '.*vision4.py:resnet': the program does not build: ImportError: torchvision does not import with torch [^ ]* (torchvision::nms does not exist: it was built for another torch); install the build for this torch: $want$" "$ERR")" -eq 1
check "and no traceback" bash -c "! grep -q 'Traceback' '$ERR'"

# --- 5. a spool run needs no model, and its replies are not priced
SP5=$TMP/spool5
run_egg doctor --llm-spool "$SP5" --json
check "doctor with a spool and no model or key: optimize and bench can run" test \
	"$(json_get "$OUT" '(j["commands"]["optimize"], j["commands"]["bench"], j["missing"])')" = "(True, True, [])"
check "and a note says the spool is set and optimize waits on it" test "$(json_get "$OUT" \
	'[n for n in j["notes"] if n.startswith("a reply spool is set") and "wait there (exit 4)" in n and "not priced" in n] != []')" = True
run_egg optimize "${FAKE_FLAGS[@]}" --no-hw-tune --llm-spool "$SP5" "$TASK"
expect_rc 4 "egg optimize --llm-spool with no --model waits for its replies"
check "its request names the model 'spool'" test "$(json_get "$(ls "$SP5"/pending/*.json)" 'j["model"]')" = spool
SP5B=$TMP/spool5b
export EGG_STORE=$TMP/store5
EGG_MODEL=gpt-4.1 run_egg optimize "${FAKE_FLAGS[@]}" --no-hw-tune --llm-spool "$SP5B" "$TASK"
python3 - "$SP5B" "$SRC/tests/pipeline/refined.py" <<'PY'
import glob, json, sys
spool, kernel = sys.argv[1:]
for path in glob.glob(f"{spool}/pending/*.json"):
    key = json.load(open(path))["key"]
    json.dump({"content": "```python\n" + open(kernel).read() + "```\n",
               "usage": {"prompt_tokens": 100000, "completion_tokens": 50000}},
              open(f"{spool}/replies/{key}.json", "w"))
PY
EGG_MODEL=gpt-4.1 run_egg optimize "${FAKE_FLAGS[@]}" --no-hw-tune --llm-spool "$SP5B" "$TASK"
expect_rc 0 "a spool run naming a priced model ends with the reply written for it"
expect_err "^  llm: 1 call\(s\), 100000 prompt tokens, 50000 completion tokens, cost unknown \(every reply came from the spool: not priced\)$" \
	"the reply is not priced as gpt-4.1's, and the usage line says the cost is unknown"
check "the store records the reply with no cost" test "$(python3 -c "
import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute(\"SELECT COUNT(*), SUM(json_extract(data, '\$.cost_usd') IS NULL), \"
      \"SUM(cost_usd) FROM llm_calls WHERE outcome = 'reply'\").fetchone())" "$EGG_STORE/egg.db")" = "(1, 1, 0.0)"

# --- 3 and 6. one row per distinct task, names apart, noise said
unset EGG_STORE; export EGG_STORE=$TMP/store36
NET=$TMP/net; mkdir -p "$NET"
cp "$SRC/tests/pipeline/network/network.py" "$NET/"
python3 - "$NET" "$SRC/tests/pipeline/network/a.py" <<'PY'
import json, shutil, sys
net, part = sys.argv[1:]
lay = {"dtype": "float32", "stride": [16, 1], "offset": 0}
subs, prev = [], "x"
def add(name, file, task, ms, noise=None):
    global prev
    shutil.copy(part, f"{net}/{file}")
    out = file[:-3]
    sg = {"name": name, "file": file, "source_file": file, "ops": ["linear"], "inputs": [prev], "outputs": [out],
          "params": {}, "eager_ms": ms, "glue": False, "task": task, "input_shapes": [[4, 16]],
          "input_layouts": [lay], "output_layouts": [lay], "notes": []}
    if noise:
        sg["noise"] = noise
    subs.append(sg)
    prev = out
pre = "encoder.block.0.layer.0.layer_norm+encoder.block.0.layer.0.SelfAttention."
for x in "qkvo":
    add(pre + x, f"attn_{x}.py", f"attn_{x}.py", 0.1)
for i in range(12):
    add(f"h.{i}.mlp.c_fc+gelu", f"mlp_{i:02d}.py", "mlp_00.py", 0.0873 if i else 11.33,
        "the 12 repeats of its task took 0.0873 to 11.3300 ms")
whole = sum(s["eager_ms"] for s in subs)
for s in subs:
    s["share"] = s["eager_ms"] / whole
    first = next(f for f in subs if f["file"] == s["task"])
    first["occurrences"] = first.get("occurrences", 0) + 1
    first["task_share"] = first.get("task_share", 0) + s["share"]
json.dump({"plan_version": 2, "inputs": ["x"], "input_shapes": [[4, 16]], "input_dtypes": ["float32"],
           "input_floating": [True], "output_tree": {"value": prev}, "subgraphs": subs, "blocks": [],
           "measured_on": "cpu", "eager_ms": whole, "noisy": 12}, open(f"{net}/plan.json", "w"))
PY
export FAKEWORKER_SPLIT=$NET/plan.json
run_egg split --device cuda --worker-cmd "$FAKE" "$NET/network.py" "$TMP/split36"
expect_rc 0 "egg split of a scripted plan: four attention tasks, one MLP task in twelve layers"
check "one row per distinct task: 5 rows for 16 subgraphs" \
	test "$(grep -cE '^  [0-9]+ ' "$ERR")" -eq 5
expect_err "^  5 +h\.0\.mlp\.c_fc\+gelu +x12 +[0-9.]+% +0\.0873 noisy  mlp_00\.py$" \
	"the repeated task's row counts its twelve subgraphs, gives the median of their times and the word noisy"
check "the q, k, v and o rows read apart, cut in the middle" python3 - "$ERR" <<'PY'
import re, sys
rows = [l for l in open(sys.argv[1]) if re.match(r"^  [1-4] ", l)]
names = [l[6:6 + 48].strip() for l in rows]
assert len(set(names)) == 4 and all("..." in n and n.endswith("SelfAttention." + x) for n, x in zip(names, "qkvo")), names
PY
expect_err "^  share: of the program's eager time, all of a task's occurrences together; eager ms: one occurrence inside the program's forward" \
	"the times are labelled: inside the program, not the task alone"
expect_err "^  noisy: 12 subgraph time\(s\) varied more than 2x .*: the shares are rough" "the shares are said to be rough"
expect_err "^    row 5: the 12 repeats of its task took 0\.0873 to 11\.3300 ms$" "with the noisy row's spread"

run_egg optimize --split --min-share 0 --device cuda --worker-cmd "$FAKE" --no-profile --seeds 1 --no-refine \
	--no-hw-tune --llm-spool "$TMP/spool36" "$NET/network.py"
expect_rc 4 "egg optimize --split of the scripted plan waits for its replies"
check "its summary has one row per distinct task, none per repeat" \
	test "$(grep -cE '^  (h\.[0-9]+\.mlp|encoder\.)' "$ERR")" -eq 5
expect_err "^  h\.0\.mlp\.c_fc\+gelu +x12 .* waiting \(noisy share\): " \
	"the twelve waiting occurrences are one row, marked noisy, their pending path said once"
check "the pending path is said once, not twelve times" test "$(grep -c 'mlp_00' "$ERR")" -le 2
expect_err "^  subgraph +times +share +eager ms +alone ms +kernel ms +vs alone" \
	"the summary's times are labelled: in the program, the task alone, and the speedup over it alone"
unset FAKEWORKER_SPLIT

# --- 7. a typo'd callable before the worker; -o named; the drop-in's driver
cat >"$TMP/net7.py" <<'PY'
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        return x * 2
def example_inputs():
    return [torch.randn(2, 3)]
PY
JOBS7=$TMP/jobs7
for cmd in split optimize; do
	args=("$TMP/net7.py:Nett" --inputs 2x3); [ $cmd = split ] && args+=("$TMP/split7")
	[ $cmd = optimize ] && args+=(--split)
	FAKEWORKER_JOBS=$JOBS7 run_egg $cmd --device cuda --worker-cmd "$FAKE" "${args[@]}"
	expect_rc 2 "egg $cmd of a model spec whose callable is mistyped"
	check "in one line naming the file, the name and the nearest one" test "$(wc -l <"$ERR")" -eq 1 -a \
		"$(grep -c "^egg: error: the model '$TMP/net7.py:Nett': '$TMP/net7.py' has no top-level 'Nett'; did you mean 'Net'?$" "$ERR")" -eq 1
	check "before any worker started" test ! -e "$JOBS7"
done
FAKEWORKER_JOBS=$JOBS7 run_egg split --device cuda --worker-cmd "$FAKE" "$TMP/net7.py:Net" --inputs "$TMP/net7.py:example_input" "$TMP/split7"
expect_rc 2 "a mistyped --inputs function is refused the same way"
expect_err "^egg: error: --inputs '$TMP/net7.py:example_input': '$TMP/net7.py' has no top-level 'example_input'; did you mean 'example_inputs'\?$" \
	"naming it"
printf 'import torch\nclass Net(torch.nn.Module:\n    pass\n' >"$TMP/broken7.py"
FAKEWORKER_JOBS=$JOBS7 run_egg split --device cuda --worker-cmd "$FAKE" "$TMP/broken7.py:Net" --inputs 2x3 "$TMP/split7"
expect_rc 2 "a model file that does not parse is refused up front"
expect_err "^egg: error: the model '$TMP/broken7.py:Net': '$TMP/broken7.py' cannot be parsed: line 2: " "with the line"
check "and no worker started for any of them" test ! -e "$JOBS7"
printf 'from torch.nn import *\n' >"$TMP/star7.py"
FAKEWORKER_JOBS=$JOBS7 run_egg split --device cuda --worker-cmd "$FAKE" "$TMP/star7.py:Linear" --inputs 2x3 "$TMP/split7"
check "a name a star import may define is left to the worker (it starts)" test -e "$JOBS7"

start_mock "$SRC/tests/pipeline/minimal.json"
EGG_MODEL=mock-model run_egg optimize --device cuda --worker-cmd "$FAKE" --seeds 1 --no-refine --no-hw-tune \
	-o "$TMP/fast7.py" "$TASK"
expect_rc 0 "egg optimize -o finds a kernel"
check "the -o file is named in the last line on stderr" \
	bash -c "tail -1 '$ERR' | grep -qx \"egg: the kernel is written to '$TMP/fast7.py'\""
check "and is on stdout" test "$(cat "$OUT")" = "$TMP/fast7.py"
stop_mock

P=$SRC/tests/tasks/programs
run_egg split --device cpu --no-measure "$P/repeated_blocks.py" "$TMP/rb7"
up=$(json_get "$TMP/rb7/plan.json" 'next(s["task"] for s in j["subgraphs"] if s["name"].endswith("up+act"))')
cp "$P/repeated_blocks_up_kernel.py" "$TMP/rb7/${up%.py}.kernel.py"
run_egg compose "$P/repeated_blocks.py" "$TMP/rb7" -o "$TMP/rb7_dropin.py" --keep-torch
expect_rc 0 "a drop-in composed with a kernel checked on the CPU"
cat >"$TMP/user7.py" <<'PY'
import importlib.util, sys
def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m
prog, drop = load(sys.argv[1], "prog"), load(sys.argv[2], "dropin")
print(tuple(drop.ModelNew(*prog.get_init_inputs())(*prog.get_inputs()).shape))
PY
env -u TRITON_INTERPRET python3 "$TMP/user7.py" "$P/repeated_blocks.py" "$TMP/rb7_dropin.py" >"$OUT" 2>"$ERR"
check "run on the CPU without TRITON_INTERPRET=1, the drop-in fails in one line saying to set it" bash -c \
	"tail -1 '$ERR' | grep -q \"^RuntimeError: egg drop-in: Triton has no active GPU driver to run the kernel of blocks.0.up+act on cpu: on the CPU set TRITON_INTERPRET=1\""
check "not with Triton's bare words" bash -c "! grep -q '0 active drivers' '$ERR'"
TRITON_INTERPRET=1 python3 "$TMP/user7.py" "$P/repeated_blocks.py" "$TMP/rb7_dropin.py" >"$OUT" 2>"$ERR"
check "with it, the drop-in runs" test "$(cat "$OUT")" = "(4, 3)"

finish
