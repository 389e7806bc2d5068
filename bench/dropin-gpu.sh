#!/usr/bin/env bash
# dropin-gpu.sh OUT: the drop-in as its user runs it, on a GPU, without a
# model in the loop (issue "faster than torch.compile, whole", the
# mechanics). For ConvNeXt-T (torchvision), ViT-B/16 (timm) and GPT-2 small
# (transformers), bf16, eval: egg split, then two compositions: the identity
# drop-in (every part its own PyTorch) and the drop-in with one Triton kernel
# (the largest distinct task's PyTorch plus a Triton copy, through egg's
# custom operator: bench/dropin_kernel.py). egg's worker times the original
# and both drop-ins plain, under torch.compile and under torch.compile with
# CUDA graphs, by wall clock per forward over 100 calls (launch included)
# and by GPU time; torch._dynamo.explain counts graph breaks
# (bench/dropin_usertime.py). Writes OUT/NAME.json per network.
set -u
out=${1:?OUT}
EGG=${EGG:-build/egg}
export EGG_STORE=$out/store
M=$PWD/tests/tasks/models
mkdir -p "$out"
net() { # net NAME SPEC INPUTS KWARGS
	local name=$1 d=$out/$1
	"$EGG" split --device cuda --json "$2" "$d" --inputs "$3" --model-kwargs "$4" --dtype bf16 \
		>"$d.split.json" 2>"$d.split.err" || { echo "$name: split failed: $(tail -1 "$d.split.err")"; return; }
	prog=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["program_file"])' "$d.split.json")
	"$EGG" compose "$prog" "$d" -o "$d/identity.py" --keep-torch >/dev/null 2>"$d.compose.err" || {
		echo "$name: compose failed: $(tail -1 "$d.compose.err")"; return; }
	echo "$name: kernel for $(python3 bench/dropin_kernel.py "$d")"
	"$EGG" compose "$prog" "$d" -o "$d/dropin.py" --keep-torch >/dev/null 2>>"$d.compose.err"
	"$EGG" eval --device cuda --allow-torch --json "$prog" "$d/dropin.py" >"$d.eval.json" 2>"$d.eval.err"
	echo "$name: egg eval of the drop-in: $(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j.get("verdict"), j.get("kernel_ms"), j.get("eager_ms"), j.get("compile_ms"), j.get("launches_per_call"))' "$d.eval.json" 2>&1)"
	timeout 420 python3 bench/dropin_usertime.py "$prog" "$d/identity.py" "$d/dropin.py" >"$out/$name.json" \
		2>"$d.usertime.err" || echo "$name: usertime failed: $(tail -3 "$d.usertime.err")"
	python3 - "$out/$name.json" <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception as e:
    print("no figures:", e); sys.exit()
for side in ("identity", "dropin"):
    r = j[side]
    cell = lambda w: "%.3f/%.3f" % (w["wall_ms"], w["device_ms"]) if "wall_ms" in w else w.get("error", "?")[:120]
    print(side, "original:", {k: cell(v) for k, v in r["original"].items()} if "error" not in r["original"] else r["original"])
    print(side, "drop-in:", {k: cell(v) for k, v in r["dropin"].items()} if "error" not in r["dropin"] else r["dropin"])
    print(side, "explain:", j[side + "_explain"])
PY
}
net convnext_t torchvision.models:convnext_tiny 32x3x224x224 '{}'
net vit_b16 timm:create_model 32x3x224x224 '{"model_name": "vit_base_patch16_224"}'
net gpt2_small "$M/gpt2_tiny.py:gpt2" 8x1024:int64:50257 \
	'{"n_layer": 12, "n_embd": 768, "n_head": 12, "vocab_size": 50257, "n_positions": 1024}'
