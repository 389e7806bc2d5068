#!/usr/bin/env python3
"""check_layers.py: egg's C modules form layers; this checks that no file
includes a module above its own, and that no header include cycle exists.

The layers, lowest first (a module may include its own layer and any below):

    util < config < llm, store < eval < profile < agents < pipeline
         < report < program < run < cli

Run from the repository root: `python3 scripts/check_layers.py [--print]`.
Exit 0 when the graph keeps to the layers, 1 with one line per breach
otherwise. --print also prints the module graph: each module, its layer, and
the modules it includes (with the number of include lines).
"""
import pathlib
import re
import sys

LAYERS = [["util"], ["config"], ["llm", "store"], ["eval"], ["profile"], ["agents"],
          ["pipeline"], ["report"], ["program"], ["run"], ["cli"]]
RANK = {module: rank for rank, group in enumerate(LAYERS) for module in group}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def includes(path):
    """The repository-relative files `path` includes with quotes."""
    for name in INCLUDE.findall(path.read_text()):
        target = (path.parent / name).resolve()
        yield target


def print_graph(root, graph):
    """module (layer N): other (count), ... for every module, top layer first."""
    edges = {}
    for f, targets in graph.items():
        a = f.relative_to(root).parts[0]
        for t in targets:
            b = t.relative_to(root).parts[0]
            if a != b:
                edges.setdefault(a, {}).setdefault(b, 0)
                edges[a][b] += 1
    for module in sorted(RANK, key=lambda m: (-RANK[m], m)):
        deps = ", ".join(f"{b} ({n})" for b, n in sorted(edges.get(module, {}).items(), key=lambda e: -RANK[e[0]]))
        print(f"{module:<9} layer {RANK[module]}: {deps or '-'}")


def main():
    root = pathlib.Path("src").resolve()
    files = sorted(p.resolve() for p in root.rglob("*.[ch]"))
    problems = []
    graph = {}
    for f in files:
        module = f.relative_to(root).parts[0]
        if module not in RANK:
            problems.append(f"{f.relative_to(root)}: module '{module}' has no layer (add it to LAYERS)")
            continue
        graph[f] = []
        for target in includes(f):
            if not target.is_relative_to(root):
                problems.append(f"{f.relative_to(root)}: includes a file outside src/: {target}")
                continue
            if not target.exists():
                problems.append(f"{f.relative_to(root)}: includes missing {target.relative_to(root)}")
                continue
            graph[f].append(target)
            other = target.relative_to(root).parts[0]
            if RANK.get(other, -1) > RANK[module]:
                problems.append(f"{f.relative_to(root)}: includes {target.relative_to(root)}, "
                                f"a higher layer ({other} is above {module})")
    # Header cycles: a depth-first search over header-to-header edges.
    state = {}

    def visit(h, stack):
        state[h] = 1
        for t in graph.get(h, []):
            if t.suffix != ".h":
                continue
            if state.get(t) == 1:
                cycle = stack[stack.index(t):] + [t] if t in stack else [h, t]
                problems.append("header cycle: " + " -> ".join(str(c.relative_to(root)) for c in cycle))
            elif not state.get(t):
                visit(t, stack + [t])
        state[h] = 2

    for h in graph:
        if h.suffix == ".h" and not state.get(h):
            visit(h, [h])
    if "--print" in sys.argv:
        print_graph(root, graph)
    for p in problems:
        print("check_layers: " + p)
    if not problems:
        print(f"check_layers: {len(files)} files keep to the layers")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
