"""identity_kernels.py DIR: each distinct task of a split (DIR/plan.json)
gets its own file as its "kernel" (DIR/STEM.kernel.py: its PyTorch Model
renamed ModelNew, the same computation), so that a composition runs every
occurrence through its task's file with its own weights bound. Used by
bench/repeats-identity.sh and bench/models-h200.sh."""
import json
import os
import sys

d = sys.argv[1]
plan = json.load(open(os.path.join(d, "plan.json")))
for task in {s["task"] for s in plan["subgraphs"] if not s.get("glue")}:
    src = open(os.path.join(d, task)).read().replace("class Model(nn.Module):", "class ModelNew(nn.Module):")
    open(os.path.join(d, task[:-3] + ".kernel.py"), "w").write(src)
