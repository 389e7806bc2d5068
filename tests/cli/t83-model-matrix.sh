#!/usr/bin/env bash
# t83-model-matrix.sh: the models people run, as they come (transformers'
# default configurations at small sizes, tests/tasks/models/decoders.py),
# in fp32 and bf16: each splits (a Llama-family decoder's RMSNorm keeps the
# program's dtype; a model that takes use_cache runs without its cache) and
# its identity composition passes egg eval; an encoder-decoder (T5) takes its
# two inputs by name. A user's own mistake in
# --inputs is exit 2 in PyTorch's words with a hint, never egg's failure.
. "$(dirname "$0")/../lib.sh"

M=$SRC/tests/tasks/models/decoders.py
row() { # row MODEL DTYPE INPUTS SUBGRAPHS DISTINCT
	local d=$TMP/$1-$2
	run_egg split --device cpu --no-measure "$M:$1" "$d" --inputs "$3" --dtype "$2" --json
	if [ "$RC" -ne 0 ]; then
		not_ok "$1 in $2 splits"
		diag "$(tail -1 "$ERR")"
		return
	fi
	local prog counts
	prog=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["program_file"])' "$OUT")
	counts=$(python3 -c 'import json,sys; s=[x for x in json.load(open(sys.argv[1]))["subgraphs"] if not x.get("glue")]; print(len(s), sum(1 for x in s if x.get("occurrences")))' "$OUT")
	check "$1 in $2 splits into $4 subgraphs, $5 distinct tasks (got $counts)" test "$counts" = "$4 $5"
	run_egg compose "$prog" "$d" -o "$d/composed.py" --keep-torch
	# Correctness is the point here: no baseline (its calibration and timing
	# are the slowest part of a row on the CPU).
	run_egg eval --device cpu --allow-torch --iters 2 --warmup 1 --trials 2 --compile-mode none --no-baseline \
		"$prog" "$d/composed.py"
	expect_rc 0 "$1 in $2: the identity composition passes egg eval"
}
for dtype in fp32 bf16; do
	row llama $dtype 2x16:int64:512 18 11
	row mistral $dtype 2x16:int64:512 18 11
	row qwen2 $dtype 2x16:int64:512 18 11
	row gpt2 $dtype 2x16:int64:512 13 9
	row bert $dtype 2x16:int64:512 18 10
done
grep -q "use_cache=False" "$TMP/llama-bf16/llama_bf16.py" &&
	grep -q "runs without it" "$TMP/llama-bf16/llama_bf16.py"
check "the program egg wrote says the model runs without its cache" test $? -eq 0

# egg compose takes the model spec egg split took (the program beside the parts).
run_egg compose "$M:llama" "$TMP/llama-bf16" -o "$TMP/llama_spec.py" --keep-torch
expect_rc 0 "egg compose takes the model spec egg split took"
check "and composes the program egg wrote for it" grep -q "_EGG_PLAN = _egg_json.loads" "$TMP/llama_spec.py"
# A mistyped callable: did-you-mean, and nothing left behind.
run_egg split --device cpu --no-measure "$M:lama" "$TMP/typo" --inputs 2x16:int64:512
expect_rc 2 "a mistyped callable is the user's input (exit 2)"
expect_err "^egg: error: the model '.*decoders.py:lama': '.*decoders.py' has no top-level 'lama'; did you mean 'llama'\?$" \
	"with the nearest name, found in the file's text before any worker starts"
check "and leaves nothing behind" test ! -e "$TMP/typo"

# T5Model's forward takes (input_ids, attention_mask, decoder_input_ids, ...):
# an encoder-decoder's inputs go by name (NAME=SHAPE); by position the
# decoder gets none, and egg says so in transformers' words, with the hint.
for dtype in fp32 bf16; do
	row t5 $dtype input_ids=2x16:int64:512,decoder_input_ids=2x8:int64:512 42 23
done
run_egg split --device cpu --no-measure "$M:t5" "$TMP/t5" --inputs 2x16:int64:512,2x8:int64:512
expect_rc 2 "T5 with two inputs by position is the user's input (exit 2)"
expect_err "^egg: error: cannot split .*: the program fails on its inputs: ValueError: You must specify exactly one of input_ids or inputs_embeds .*give each as NAME=SHAPE" \
	"in transformers' own words, with the hint to name them"
run_egg split --device cpu --no-measure "$M:t5" "$TMP/t5-badname" --inputs 1d=2x16:int64:512
expect_rc 2 "an input name that is not a Python name is refused (exit 2)"
expect_err "^egg: error: --inputs: '1d=2x16:int64:512' names its input with '1d', which is not a Python name" "naming it"

# A decision on a dtype or a rank is settled while tracing, never called
# data-dependent.
run_egg split --device cpu --no-measure "$SRC/tests/tasks/programs/dtype_check.py" "$TMP/dc"
expect_rc 0 "a forward that tests its input's dtype and rank splits"

# A layer's output read only for its device is no extra output of its part.
run_egg split --device cpu --no-measure --json "$SRC/tests/tasks/programs/device_read.py" "$TMP/devread"
expect_rc 0 "a forward that reads an embedding's device splits"
check "the embedding's part writes only the sum the next part reads, not the embedding" python3 - "$OUT" <<'PY'
import json, sys
subs = json.load(open(sys.argv[1]))["subgraphs"]
assert [s["outputs"] for s in subs] == [["add"], ["fc"]], [s["outputs"] for s in subs]
PY
prog=$SRC/tests/tasks/programs/device_read.py
run_egg compose "$prog" "$TMP/devread" -o "$TMP/devread/composed.py" --keep-torch
run_egg eval --device cpu --allow-torch --iters 2 --warmup 1 --trials 2 --compile-mode none "$prog" "$TMP/devread/composed.py"
expect_rc 0 "and its identity composition passes egg eval"

# Casts, clone, cat and pad move data: a subgraph of them is a task, not glue.
run_egg split --device cpu --no-measure --json "$SRC/tests/tasks/programs/copies_only.py" "$TMP/copies"
expect_rc 0 "a forward of a pad, a cast, a clone and a cat splits"
check "its one subgraph is a task (copies write memory), not views-only glue" python3 - "$OUT" <<'PY'
import json, sys
subs = json.load(open(sys.argv[1]))["subgraphs"]
assert len(subs) == 1 and not subs[0]["glue"], subs
assert all(w in subs[0]["name"] for w in ("pad", "cat")), subs[0]["name"]
PY

# A user's own mistake: exit 2 in PyTorch's words, with a hint.
run_egg split --device cpu "$M:bert" "$TMP/bad-ids" --inputs 2x16:int64:50000
expect_rc 2 "token ids above the vocabulary are the user's input (exit 2)"
expect_err "^egg: error: cannot split .*: the program fails on its inputs: IndexError: index out of range in self \(token ids at or above the vocabulary: give their bound, SHAPE:int64:HIGH" \
	"in PyTorch's words with the hint"
run_egg split --device cpu --no-measure "$M:bert" "$TMP/bad-float" --inputs 2x16
expect_rc 2 "a floating input where the model takes ids is the user's input (exit 2)"
expect_err "the program fails on its inputs: RuntimeError: .*indices.* \(a floating input where the model takes token ids" \
	"with the hint"
finish
