"""names.py: the names a Python file defines at its top level, read with ast
and never run: egg's check of a model spec (FILE.py:NAME) before it starts
anything (`egg-worker.py names FILE`, src/program/model.c), so that a typo
in NAME is one line at once, not an import error once the worker is up.

It prints one JSON line: {"names": [...], "open": bool}, "open" when the
file may define names the text does not show (a star import, or globals(),
vars(), exec() or setattr() anywhere in it); or {"error": "..."} when the
file cannot be read or parsed. Only the standard library: it runs before
torch is imported, and may run where torch is not.
"""
from __future__ import annotations

import ast
import json
import sys

_DYNAMIC = {"globals", "vars", "exec", "setattr"}


def _targets(node: ast.AST, out: set) -> None:
    """The names an assignment target binds (a, (a, b), [a, *b])."""
    if isinstance(node, ast.Name):
        out.add(node.id)
    elif isinstance(node, (ast.Tuple, ast.List)):
        for e in node.elts:
            _targets(e, out)
    elif isinstance(node, ast.Starred):
        _targets(node.value, out)


def _top_level(body: list, out: set) -> bool:
    """Adds the names `body` binds at module level (into if, try, with and
    loop blocks, not into functions or classes); whether a star import
    makes the list open."""
    open_ = False
    for st in body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(st.name)
        elif isinstance(st, ast.Assign):
            for t in st.targets:
                _targets(t, out)
        elif isinstance(st, (ast.AnnAssign, ast.AugAssign)):
            _targets(st.target, out)
        elif isinstance(st, ast.Import):
            for a in st.names:
                out.add(a.asname or a.name.split(".")[0])
        elif isinstance(st, ast.ImportFrom):
            for a in st.names:
                if a.name == "*":
                    open_ = True
                else:
                    out.add(a.asname or a.name)
        elif isinstance(st, (ast.For, ast.AsyncFor)):
            _targets(st.target, out)
        elif isinstance(st, (ast.With, ast.AsyncWith)):
            for item in st.items:
                if item.optional_vars is not None:
                    _targets(item.optional_vars, out)
        for block in ("body", "orelse", "finalbody"):
            if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and hasattr(st, block):
                open_ |= _top_level(getattr(st, block), out)
        for h in getattr(st, "handlers", []):
            if h.name:
                out.add(h.name)
            open_ |= _top_level(h.body, out)
    return open_


def top_level_names(source: str, filename: str) -> dict:
    """{"names": sorted names, "open": bool} of `source`."""
    tree = ast.parse(source, filename)
    names: set = set()
    open_ = _top_level(tree.body, names)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _DYNAMIC:
            open_ = True
    return {"names": sorted(names), "open": open_}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: egg-worker.py names FILE\n")
        return 2
    try:
        with open(argv[0], encoding="utf-8") as f:
            source = f.read()
        out = top_level_names(source, argv[0])
    except SyntaxError as e:
        out = {"error": f"line {e.lineno}: {e.msg}"}
    except (OSError, UnicodeDecodeError, ValueError) as e:
        out = {"error": str(e)}
    sys.stdout.write(json.dumps(out) + "\n")
    return 0
