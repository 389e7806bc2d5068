#!/usr/bin/env bash
# t85-compose-variants.sh: the composed file is built from data, whatever
# the plan holds: an input no part reads, a tuple output, a plan written
# before the output was a tree (and one from a newer egg, refused), a
# repeated part; its forward takes inputs by name too; one kernel instance
# per occurrence, so two threads share a drop-in without getting each
# other's weights; and a train-mode part that updates a batch norm's
# running statistics updates the program's own, plain and compiled.
. "$(dirname "$0")/../lib.sh"

P=$SRC/tests/tasks/programs
EVAL=(eval --device cpu --allow-torch --iters 2 --warmup 1 --trials 2 --compile-mode none)

# --- an unused input and a tuple output
run_egg split --device cpu --no-measure "$P/two_inputs_tuple.py" "$TMP/two"
expect_rc 0 "egg split of a program with an unused input and a tuple output"
check "the plan is versioned and its output is a tree over value names" python3 - "$TMP/two/plan.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
assert p["plan_version"] == 2 and "output" not in p, p.keys()
assert p["output_tree"] == {"tuple": [{"value": "relu"}, {"value": "sum_1"}]}, p["output_tree"]
PY
run_egg compose "$P/two_inputs_tuple.py" "$TMP/two" -o "$TMP/two.py" --keep-torch
expect_rc 0 "compose it"
check "the tables are one JSON document read by json.loads, not JSON written as Python" python3 - "$TMP/two.py" <<'PY'
import sys
src = open(sys.argv[1]).read()
assert "_EGG_PLAN = _egg_json.loads('''" in src, "no JSON document"
assert "null]" not in src.split("_EGG_PLAN = ")[0], "JSON text before the tables"
PY
run_egg "${EVAL[@]}" "$P/two_inputs_tuple.py" "$TMP/two.py"
expect_rc 0 "the composition of a program with an unused input passes (it imports)"
cat >"$TMP/call.py" <<'PY'
import importlib.util, sys
import torch

def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m

prog, composed = load("prog", sys.argv[1]), load("composed", sys.argv[2])
torch.manual_seed(0)
ref = prog.Model().eval()
new = composed.ModelNew()
new.load_state_dict(ref.state_dict())
new.eval()
x, u = prog.get_inputs()
runs = []
part = new._egg_parts[0]
forward = part.forward
part.forward = lambda *a: runs.append(1) or forward(*a)
new._egg_run = (part.forward,)
with torch.no_grad():
    want = ref(x, u)
    for got in (new(x, u), new(x=x, unused=u), new(x, unused=u)):
        assert isinstance(got, tuple) and len(got) == 2, type(got)
        assert all(torch.equal(a, b) for a, b in zip(want, got))
    assert len(runs) == 3, ("a call by name did not run the parts", len(runs))
    # another name than the program's: the program's own forward says so
    try:
        new(x, other=u)
        raise SystemExit("a call with an unknown name passed")
    except TypeError:
        pass
print("ok")
PY
check "the drop-in takes its inputs by position or by the program's names, and returns the same tuple" \
	python3 "$TMP/call.py" "$P/two_inputs_tuple.py" "$TMP/two.py"

# --- a plan from before the output tree (output as text, no layouts, no shapes)
cp -r "$TMP/two" "$TMP/old"
python3 - "$TMP/old/plan.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
for k in ("plan_version", "output_tree", "input_shapes"):
    del p[k]
for sg in p["subgraphs"]:
    sg.pop("output_layouts", None)
p["output"] = "(v['relu'], v['sum_1'])"
json.dump(p, open(sys.argv[1], "w"))
PY
run_egg compose "$P/two_inputs_tuple.py" "$TMP/old" -o "$TMP/old.py" --keep-torch
expect_rc 0 "compose a plan written before the output tree"
run_egg "${EVAL[@]}" "$P/two_inputs_tuple.py" "$TMP/old.py"
expect_rc 0 "and it passes"
python3 - "$TMP/old/plan.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["plan_version"] = 99
json.dump(p, open(sys.argv[1], "w"))
PY
run_egg compose "$P/two_inputs_tuple.py" "$TMP/old" -o "$TMP/newer.py" --keep-torch
expect_rc 2 "a plan from a newer egg is refused"
expect_err "^egg: error: .*plan.json' was written by a newer egg \(plan version 99; this one reads up to 2\)" \
	"in one line that says so"

# --- a repeated part, shared by two threads
run_egg split --device cpu --no-measure "$P/repeated_blocks.py" "$TMP/rb"
up=$(python3 -c "import json,sys; p=json.load(open(sys.argv[1])); print(next(s['task'] for s in p['subgraphs'] if s['name'].endswith('up+act')))" "$TMP/rb/plan.json")
cp "$P/repeated_blocks_up_standin.py" "$TMP/rb/${up%.py}.kernel.py"
run_egg compose "$P/repeated_blocks.py" "$TMP/rb" -o "$TMP/rb.py" --keep-torch
expect_rc 0 "compose the repeated blocks with a kernel for the repeated part"
check "two threads sharing one drop-in: 400 of 400 forwards right" python3 - "$P/repeated_blocks.py" "$TMP/rb.py" <<'PY'
import importlib.util, sys, threading
import torch

def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m

prog, composed = load("prog", sys.argv[1]), load("composed", sys.argv[2])
torch.manual_seed(0)
ref = prog.Model(*prog.get_init_inputs()).eval()
new = composed.ModelNew(*prog.get_init_inputs())
new.load_state_dict(ref.state_dict())
new.eval()
assert sum(hasattr(p, "_egg_kernel") for p in new._egg_parts) == 3
inputs = [prog.get_inputs()[0] for _ in range(2)]
with torch.no_grad():
    wants = [ref(x) for x in inputs]
right, wrong, errors = [0], [0], []

def worker(k):
    try:
        with torch.no_grad():
            for _ in range(200):
                if torch.allclose(new(inputs[k]), wants[k], atol=1e-5):
                    right[0] += 1
                else:
                    wrong[0] += 1
    except Exception as e:
        errors.append(repr(e))

threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert not errors and right[0] == 400, (right[0], wrong[0], errors[:1])
print("ok: %d of 400 right" % right[0])
PY

# --- a train-mode part that updates the program's buffers
run_egg split --device cpu --no-measure "$P/bn_train.py" "$TMP/bn"
cp "$P/bn_train_standin_kernel.py" "$TMP/bn/01_fc_bn_relu.kernel.py"
run_egg compose "$P/bn_train.py" "$TMP/bn" -o "$TMP/bn.py"
expect_rc 0 "compose the train-mode program with its kernel"
cat >"$TMP/bn_check.py" <<'PY'
import importlib.util, sys
import torch

def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m

prog, composed = load("prog", sys.argv[1]), load("composed", sys.argv[2])
how = sys.argv[3]
torch.manual_seed(0)
ref = prog.Model().train()
new = composed.ModelNew()
new.load_state_dict(ref.state_dict())
new.train()
if how == "moved":
    # a cast converts the program's buffers and the parts' copies apart:
    # the part must be bound to the program's own again
    ref.double(), new.double()
run = new if how != "compiled" else torch.compile(new)
xs = [prog.get_inputs()[0] for _ in range(3)]
with torch.no_grad():
    for x in xs:
        x = x.double() if how == "moved" else x
        assert torch.allclose(ref(x), run(x), atol=1e-5)
for key in ("bn.running_mean", "bn.running_var", "bn.num_batches_tracked"):
    a, b = ref.state_dict()[key], new.state_dict()[key]
    assert torch.allclose(a.double(), b.double(), atol=1e-6), (key, a, b)
part = new._egg_parts[0]
assert part._egg_kernel.bn.running_mean is new.bn.running_mean, "the kernel holds a copy of the buffer"
print("ok")
PY
check "plain: the kernel's update of the running statistics is the program's" \
	python3 "$TMP/bn_check.py" "$P/bn_train.py" "$TMP/bn.py" plain
check "after a cast, the kernel is bound to the program's own buffers again" \
	python3 "$TMP/bn_check.py" "$P/bn_train.py" "$TMP/bn.py" moved
check "under torch.compile too: the operator declares that it updates the part's buffers" \
	python3 "$TMP/bn_check.py" "$P/bn_train.py" "$TMP/bn.py" compiled
finish
