#!/usr/bin/env bash
# t82-dropin.sh: the drop-in as its user runs it. A part is judged in the
# layout the program feeds it (a ConvNeXt block's convolution takes a
# channels-last view, and so does its task); the composed program runs its
# parts as straight-line code with one kernel per distinct task, each kernel
# a PyTorch custom operator, so torch.compile traces the drop-in without a
# graph break and computes what the program computes; its kernels run only
# on the inputs they were checked on; and egg optimize --split compares the
# drop-in with the original by the user's clock, writing -o only when the
# drop-in, run its best way, beats the original run its best way.
. "$(dirname "$0")/../lib.sh"

P=$SRC/tests/tasks/programs

# --- the layout a part runs in
run_egg split --device cpu --no-measure "$P/convnext_blocks.py" "$TMP/cn" --json
expect_rc 0 "egg split cuts the ConvNeXt-style blocks"
check "the second block's convolution gets a task whose input is the channels-last view the program gives it" \
	python3 - "$OUT" "$TMP/cn" <<'PY'
import importlib.util, json, os, sys
import torch
plan, d = json.load(open(sys.argv[1])), sys.argv[2]
sg = next(s for s in plan["subgraphs"] if s["name"] == "block2.dwconv+norm")
assert sg["input_layouts"][0]["stride"] == [288, 1, 48, 8], sg["input_layouts"]
first = next(s for s in plan["subgraphs"] if s["name"] == "block1.dwconv+norm")
assert first["input_layouts"][0]["stride"] == [288, 36, 6, 1], first["input_layouts"]
spec = importlib.util.spec_from_file_location("t", os.path.join(d, sg["file"]))
t = importlib.util.module_from_spec(spec)
spec.loader.exec_module(t)
x = t.get_inputs()[0]
assert x.shape == (2, 8, 6, 6) and x.stride() == (288, 1, 48, 8), x.stride()
assert x.is_contiguous(memory_format=torch.channels_last)
PY
check "and the evaluator's varied and fresh inputs keep that layout" python3 - "$TMP/cn" <<'PY'
import importlib.util, json, os, sys
sys.path.insert(0, os.path.join(os.environ["EGG_SOURCE_DIR"], "worker"))
import torch
from egg_worker.protocol.inputs import VARIANTS, fresh_like, trial_inputs
d = sys.argv[1]
plan = json.load(open(os.path.join(d, "plan.json")))
sg = next(s for s in plan["subgraphs"] if s["name"] == "block2.dwconv+norm")
spec = importlib.util.spec_from_file_location("t", os.path.join(d, sg["file"]))
t = importlib.util.module_from_spec(spec)
spec.loader.exec_module(t)
for i, v in enumerate(VARIANTS):
    x = trial_inputs(t, 7, i, torch.device("cpu"), v)[0]
    assert x.stride() == (288, 1, 48, 8), (v, x.stride())
    y = fresh_like([x], 3, torch.device("cpu"))[0]
    assert y.stride() == (288, 1, 48, 8) and y.data_ptr() != x.data_ptr(), (v, y.stride())
PY
run_egg eval --device cpu --iters 2 --warmup 1 --compile-mode none "$TMP/cn/04_block2_dwconv_norm.py"
expect_rc 0 "that task runs as a task"

# --- the composed program: straight-line, one kernel per task, custom operators
run_egg split --device cpu --no-measure "$P/repeated_blocks.py" "$TMP/rb"
expect_rc 0 "egg split cuts the repeated blocks"
up=$(python3 -c "import json,sys; p=json.load(open(sys.argv[1])); print(next(s['task'] for s in p['subgraphs'] if s['name'].endswith('up+act')))" "$TMP/rb/plan.json")
cp "$P/repeated_blocks_up_kernel.py" "$TMP/rb/${up%.py}.kernel.py"
run_egg compose "$P/repeated_blocks.py" "$TMP/rb" -o "$TMP/rb_k.py" --keep-torch --json
expect_rc 0 "compose the repeated blocks with one kernel for the repeated part"
check "the forward is straight-line code that drops each value after its last use" python3 - "$TMP/rb_k.py" <<'PY'
import sys
src = open(sys.argv[1]).read()
fwd = src[src.index("class ModelNew(_EggComposed):"):]
assert "run[0](" in fwd and "\n        del " in fwd and "v = dict" not in fwd, fwd
PY
cat >"$TMP/dropin_check.py" <<'PY'
import importlib.util, sys
import torch

def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m

prog, composed = load("prog", sys.argv[1]), load("composed", sys.argv[2])
what = sys.argv[3]
torch.manual_seed(0)
ref = prog.Model(*prog.get_init_inputs()).eval()
new = composed.ModelNew(*prog.get_init_inputs())
new.load_state_dict(ref.state_dict())
new.eval()
xs = prog.get_inputs()
def count_runs(model, into):
    """Each kernel run of `model`'s parts appends to `into` (its own part's
    call: a copied model's copied counting wrapper is dropped first)."""
    for p in model._egg_parts:
        if hasattr(p, "_egg_kernel"):
            p.__dict__.pop("_egg_call", None)
            call = p._egg_call
            p._egg_call = lambda xs, call=call: into.append(1) or call(xs)

calls = []
count_runs(new, calls)
with torch.no_grad():
    want = ref(*xs)
    got = new(*xs)
assert torch.allclose(want, got, atol=1e-5), (want - got).abs().max()
if what == "one-kernel":
    # One kernel instance per occurrence (nothing rebound per call), all of
    # one source module: one Triton function, compiled and tuned once.
    kernels = [p for p in new._egg_parts if hasattr(p, "_egg_kernel")]
    assert len(kernels) == 3 and len({id(p._egg_kernel) for p in kernels}) == 3, kernels
    assert len({type(p._egg_kernel).__module__ for p in kernels}) == 1, kernels
    assert len({p._egg_index for p in kernels}) == 1 and len(calls) == 3, len(calls)
elif what == "guard":
    n = len(calls)
    x = xs[0]
    strided = torch.empty(x.shape[::-1], dtype=x.dtype).t().copy_(x) if x.dim() == 2 else x.transpose(-1, -2).contiguous().transpose(-1, -2)
    assert strided.stride() != x.stride()
    with torch.no_grad():
        assert torch.allclose(new(strided), want, atol=1e-5)
        assert len(calls) == n, "a kernel ran on an input of another layout"
        new.double(), ref.double()
        assert torch.allclose(new(x.double()), ref(x.double()))
    assert len(calls) == n, "a kernel ran on an input of another dtype"
elif what == "compile":
    import torch._dynamo
    torch._dynamo.reset()
    with torch.no_grad():
        ex = torch._dynamo.explain(new)(*xs)
    assert ex.graph_break_count == 0 and ex.graph_count == 1, [str(r.reason) for r in ex.break_reasons]
    torch._dynamo.reset()
    n = len(calls)
    with torch.no_grad():
        out = torch.compile(new)(*xs)
    assert torch.allclose(want, out, atol=1e-5), (want - out).abs().max()
    assert len(calls) > n, "the compiled drop-in did not run egg's kernel"
elif what == "two":
    # Two drop-ins in one process: each compiled forward runs its own
    # kernel instance (the operator is shared; the call names its owner).
    import torch._dynamo
    other = composed.ModelNew(*prog.get_init_inputs())
    other.load_state_dict(ref.state_dict())
    other.eval()
    mine = []
    count_runs(other, mine)
    torch._dynamo.reset()
    n = len(calls)
    with torch.no_grad():
        out = torch.compile(new)(*xs)
        assert len(calls) > n and not mine, ("the first drop-in ran the other's kernel", len(calls) - n, len(mine))
        n = len(calls)
        out2 = torch.compile(other)(*xs)
        assert mine and len(calls) == n, ("the second drop-in ran the first's kernel", len(calls) - n, len(mine))
    assert torch.allclose(want, out, atol=1e-5) and torch.allclose(want, out2, atol=1e-5)
elif what == "copy":
    # A deep copy is a drop-in of its own: compiled, it runs its own kernel instance.
    import copy
    import torch._dynamo
    twin = copy.deepcopy(new)
    mine = []
    count_runs(twin, mine)
    torch._dynamo.reset()
    n = len(calls)
    with torch.no_grad():
        out = torch.compile(twin)(*xs)
    assert mine and len(calls) == n, ("the copy ran the original's kernel", len(calls) - n, len(mine))
    assert torch.allclose(want, out, atol=1e-5)
print("ok")
PY
check "each occurrence runs its own instance of its task's one kernel, on its own weights" \
	env TRITON_INTERPRET=1 python3 "$TMP/dropin_check.py" "$P/repeated_blocks.py" "$TMP/rb_k.py" one-kernel
check "an input of another layout or dtype runs the program's own forward, no kernel" \
	env TRITON_INTERPRET=1 python3 "$TMP/dropin_check.py" "$P/repeated_blocks.py" "$TMP/rb_k.py" guard
run_egg split --device cpu --no-measure "$P/small_cnn.py" "$TMP/cnn"
cp "$P/small_cnn_fc_kernel.py" "$TMP/cnn/03_fc.kernel.py"
run_egg compose "$P/small_cnn.py" "$TMP/cnn" -o "$TMP/cnn_k.py" --keep-torch
expect_rc 0 "compose the small CNN with a Triton kernel for its classifier"
check "torch.compile traces the drop-in with no graph break (torch._dynamo.explain) and runs egg's kernel" \
	env TRITON_INTERPRET=1 python3 "$TMP/dropin_check.py" "$P/small_cnn.py" "$TMP/cnn_k.py" compile
check "two drop-ins in one process, compiled: each runs its own kernel instance" \
	env TRITON_INTERPRET=1 python3 "$TMP/dropin_check.py" "$P/small_cnn.py" "$TMP/cnn_k.py" two
check "a deep copy of a drop-in, compiled, runs its own kernel instance" \
	env TRITON_INTERPRET=1 python3 "$TMP/dropin_check.py" "$P/small_cnn.py" "$TMP/cnn_k.py" copy

# --- egg's own code is not judged as a model's: the identity composition (a
# model spec's program, so both of egg's runtimes are in it) gets no static
# flag, and PyTorch timed against PyTorch claims no speedup; a part that
# calls exec is still flagged.
run_egg split --device cpu --no-measure "$SRC/tests/tasks/models/tiny_resnet.py:tiny_resnet" "$TMP/tr" --inputs 2x3x16x16 --json
expect_rc 0 "egg split of a model spec"
trprog=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["program_file"])' "$OUT")
run_egg compose "$trprog" "$TMP/tr" -o "$TMP/tr_id.py" --keep-torch
run_egg eval --device cpu --allow-torch --iters 2 --warmup 1 --trials 2 --compile-mode none "$trprog" "$TMP/tr_id.py"
expect_rc 0 "the identity composition passes"
check "with no static flag and no speedup claimed (no kernel ran)" bash -c "
	! grep -q 'static:' '$OUT' && ! grep -qE 'speedup [0-9]' '$OUT' && grep -q 'no_kernel: no Triton kernel ran' '$OUT'"
first=$(python3 -c 'import json,sys; print(next(s["file"] for s in json.load(open(sys.argv[1]))["subgraphs"] if not s.get("glue")))' "$TMP/tr/plan.json")
{ sed 's/^class Model(/class ModelNew(/' "$TMP/tr/$first"; echo 'exec("x = 1")'; } >"$TMP/tr/${first%.py}.kernel.py"
run_egg compose "$trprog" "$TMP/tr" -o "$TMP/tr_exec.py" --keep-torch
run_egg eval --device cpu --allow-torch --iters 2 --warmup 1 --trials 2 --compile-mode none "$trprog" "$TMP/tr_exec.py"
expect_out "static: dynamic code execution" "a part that calls exec is still flagged"

# --- the user's clock decides: a drop-in slower than the original run its
# best way is exit 1 and no -o. On the CPU interpreted kernels are always
# slower, so the rule is off there unless EGG_JUDGE_CPU_SPEED=1 turns it on.
export EGG_MODEL=mock-model EGG_API_KEY=sk-test EGG_LLM_RETRY_BASE_MS=10
python3 - "$P/small_cnn_fc_kernel.py" >"$TMP/script.json" <<'PY'
import json, sys
print(json.dumps([{"match": ["mode: seed"], "repeat": True, "wrap": "python", "reply_file": sys.argv[1]}]))
PY
start_mock "$TMP/script.json"
OPT=(optimize --split --min-share 0 --device cpu --seeds 1 --seed-repairs 0 --no-refine --no-hw-tune --iters 2
	--warmup 1 --trials 2 --compile-mode none -q)
EGG_JUDGE_CPU_SPEED=1 run_egg "${OPT[@]}" -o "$TMP/slow.py" --json "$P/small_cnn.py"
expect_rc 1 "a drop-in slower than the original by the user's clock is exit 1"
check "and writes no -o, with both sides' figures in the record" python3 - "$OUT" "$TMP/slow.py" <<'PY'
import json, os, sys
j = json.load(open(sys.argv[1]))
u = j["user_clock"]
assert u["judged"] is True and u["faster"] is False, u
assert u["best_original"]["way"] == "eager" and u["best_dropin"]["way"] == "plain", u
assert u["original"]["eager"]["wall_ms"] > 0 and u["dropin"]["plain"]["wall_ms"] > u["original"]["eager"]["wall_ms"], u
assert u["within_noise"] is False, u
# a judged comparison times each way in three rounds; its figure is the median round
for side, way in (("original", "eager"), ("dropin", "plain")):
    r = u[side][way]["wall_rounds_ms"]
    assert len(r) == 3 and u[side][way]["wall_ms"] == sorted(r)[1], (side, u[side][way])
assert u["best_dropin"]["wall_rounds_ms"] == u["dropin"]["plain"]["wall_rounds_ms"], u
assert not os.path.exists(sys.argv[2]), "the slower drop-in was written to -o"
PY
expect_err "^egg: rejected: the drop-in is not faster than the program as its user runs it: .* ms per forward \(plain\) against the original's .* ms \(eager\), by wall clock \('.*slow.py' is not written\)" \
	"one line naming both figures and ways"
stop_mock
start_mock "$TMP/script.json"
run_egg "${OPT[@]}" -o "$TMP/cpu.py" --json "$P/small_cnn.py"
expect_rc 0 "on the CPU the figures are recorded, unjudged (interpreted kernels say nothing of speed)"
check "the record says so, and -o is written" python3 - "$OUT" "$TMP/cpu.py" <<'PY'
import json, os, sys
u = json.load(open(sys.argv[1]))["user_clock"]
assert u["judged"] is False and u["dropin"]["plain"]["wall_ms"] > 0, u
assert len(u["dropin"]["plain"]["wall_rounds_ms"]) == 1, u  # unjudged: one round is enough
assert os.path.exists(sys.argv[2])
PY
run=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$OUT")
run_egg report "$run"
expect_out "^  the user's clock \(wall clock per forward over 100 calls, launch included; device time in brackets\):" \
	"egg report shows the user's clock"
expect_out "^    original +plain [0-9.]+ ms \([0-9.]+\)" "the original's ways"
expect_out "^    drop-in +plain [0-9.]+ ms \([0-9.]+\)" "the drop-in's ways"
expect_out "^    best: the drop-in plain, .* against the original eager, .*not judged" "and the best of each, unjudged on the CPU"
run_egg report "$run" --html "$TMP/prog.html"
check "the HTML report has the user's clock too" grep -q "<h3>The user's clock</h3>" "$TMP/prog.html"
check "each side's way by its name (eager for the original, plain for the drop-in)" sh -c \
	"grep -q '<tr><td>original</td><td>eager</td>' '$TMP/prog.html' && grep -q '<tr><td>drop-in</td><td>plain</td>' '$TMP/prog.html'"
stop_mock
finish
