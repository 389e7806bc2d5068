#!/usr/bin/env python3
"""mutants.py: proves that egg's tests can fail. Each mutation in the catalog
(tests/mutants/) breaks one piece of product code on purpose (a check
skipped, a bound moved, a defence removed); the tests named for it must then
fail. A mutation they do not notice SURVIVED: a test is missing or blind.

    python3 scripts/mutants.py            # the whole catalog
    python3 scripts/mutants.py --ci       # the fixed subset `make test` runs
    python3 scripts/mutants.py NAME...    # chosen mutations
    python3 scripts/mutants.py --list     # the catalog, without running it

It works on a copy of the tree (tracked and untracked files, as they are now,
in a temporary folder), never on the tree itself: each mutation is applied,
egg rebuilt when a C file changed, the tests run, the file restored. Before
any mutation, every test used must pass on the unmutated copy, or a catch
would mean nothing. A mutation whose text is no longer found in its file is
STALE (the code moved on; the catalog must follow) and fails the run like a
survivor. Exit 0 when every mutation was caught; 1 otherwise.

With --tap each mutation also prints a TAP line (what tests/run.sh counts).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "mutants"))
from catalog import MUTANTS  # noqa: E402


def copy_tree(dest: str) -> None:
    """The files git tracks or would track (not ignored), as they are now;
    without git (a copy of the tree on a GPU machine), every file but build
    outputs and run stores."""
    try:
        files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                               capture_output=True, check=True).stdout.split(b"\0")
    except (OSError, subprocess.CalledProcessError):
        skip = shutil.ignore_patterns(".git", "build", "build-*", "egg-runs*", "__pycache__", ".kb")
        shutil.copytree(ROOT, dest, ignore=skip, dirs_exist_ok=True)
        return
    for f in files:
        if not f:
            continue
        src = os.path.join(ROOT, f.decode())
        if not os.path.isfile(src):
            continue  # deleted in the working tree
        dst = os.path.join(dest, f.decode())
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst)


def test_command(spec: str, tree: str) -> tuple[list, dict]:
    """The command line and environment of one named test:
    unit:SUITE, cli:tNN-name, worker:test_name [ARGS], adv:PREFIX,... (adv-gpu:
    the same on cuda), layers, harness."""
    env = dict(os.environ, EGG_SOURCE_DIR=tree, EGG_BUILD="build", EGG_BIN=os.path.join(tree, "build", "egg"))
    kind, _, arg = spec.partition(":")
    if kind == "unit":
        return [os.path.join(tree, "build", "egg-unit"), arg], env
    if kind == "cli":
        return ["bash", os.path.join(tree, "tests", "cli", f"{arg}.sh")], env
    if kind == "worker":
        name, *args = arg.split()
        return [sys.executable, os.path.join(tree, "tests", "worker", f"{name}.py"), *args], env
    if kind in ("adv", "adv-gpu"):
        env["EGG_ADV_ONLY"] = arg.replace(",", " ")
        return [sys.executable, os.path.join(tree, "tests", "worker", "test_adversarial.py"),
                "cuda" if kind == "adv-gpu" else "cpu"], env
    if kind == "layers":
        return ["bash", os.path.join(tree, "tests", "check_layers.sh")], env
    if kind == "harness":
        return ["bash", os.path.join(tree, "tests", "check_harness.sh")], env
    raise SystemExit(f"mutants: unknown test '{spec}' (use unit:, cli:, worker:, adv: or layers)")


def run_test(spec: str, tree: str, timeout: float) -> tuple[bool, str]:
    """(passed, the failing lines) of one test run."""
    argv, env = test_command(spec, tree)
    try:
        p = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, "timed out"
    failing = [line for line in p.stdout.splitlines() if line.startswith("not ok")]
    return p.returncode == 0 and not failing, "\n".join(failing[:3]) or p.stdout[-300:] + p.stderr[-300:]


def build(tree: str) -> tuple[bool, str]:
    p = subprocess.run(["make", "-s", "-j2", "all"], cwd=tree, capture_output=True, text=True)
    return p.returncode == 0, p.stderr[-2000:]


def stale_entries() -> list[str]:
    """Every catalog entry whose text is not in its file exactly once, or
    whose test does not exist: a mutation that would read STALE when run.
    Cheap (no build), so CI checks the whole catalog, not only its subset."""
    problems = []
    for m in MUTANTS:
        path = os.path.join(ROOT, m["file"])
        count = open(path).read().count(m["find"]) if os.path.exists(path) else 0
        if count != 1:
            problems.append(f"{m['name']}: its text occurs {count} times in {m['file']}")
        for spec in m["tests"]:
            kind, _, arg = spec.partition(":")
            named = {"cli": f"tests/cli/{arg}.sh", "worker": f"tests/worker/{arg.split(' ')[0]}.py"}.get(kind)
            if named and not os.path.exists(os.path.join(ROOT, named)):
                problems.append(f"{m['name']}: no test {named}")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description="Mutation testing of egg's tests.")
    ap.add_argument("names", nargs="*", help="mutations to run (default: all)")
    ap.add_argument("--ci", action="store_true", help="only the fixed subset marked for CI")
    ap.add_argument("--list", action="store_true", help="print the catalog and exit")
    ap.add_argument("--tap", action="store_true", help="also print one TAP line per mutation")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per test run")
    ap.add_argument("--gpu", action="store_true", help="also run the mutations marked gpu (needs a GPU)")
    args = ap.parse_args()

    chosen = [m for m in MUTANTS if (not args.names or m["name"] in args.names) and (not args.ci or m.get("ci"))]
    unknown = set(args.names) - {m["name"] for m in MUTANTS}
    if unknown:
        print(f"mutants: no mutation named {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    if args.list:
        for m in chosen:
            print(f"{m['name']:<34} {m['point']:<22} {m['file']}  -> {', '.join(m['tests'])}")
        return 0

    tree = tempfile.mkdtemp(prefix="egg-mutants-")
    t_start = time.monotonic()
    try:
        copy_tree(tree)
        # egg is built only when a mutation is in C or a test runs egg (the
        # worker and adversarial tests do not: a GPU machine may lack the
        # headers to build).
        runnable = [m for m in chosen if args.gpu or not m.get("gpu")]
        needs_egg = any(m["file"].endswith((".c", ".h")) or
                        any(t.split(":")[0] in ("unit", "cli", "layers", "harness") for t in m["tests"])
                        for m in runnable)
        ok, why = build(tree) if needs_egg else (True, "")
        if not ok:
            print(f"mutants: the unmutated tree does not build:\n{why}", file=sys.stderr)
            return 1
        # Every test used must pass before anything is mutated.
        for spec in sorted({t for m in chosen for t in m["tests"] if args.gpu or not m.get("gpu")}):
            passed, why = run_test(spec, tree, args.timeout)
            if not passed:
                print(f"mutants: '{spec}' fails on the unmutated tree, so it proves nothing:\n{why}", file=sys.stderr)
                return 1
        rows, bad = [], 0
        for i, m in enumerate(chosen, 1):
            path = os.path.join(tree, m["file"])
            original = open(path).read()
            count = original.count(m["find"])
            t0 = time.monotonic()
            if m.get("gpu") and not args.gpu:
                rows.append((m["name"], m["point"], "GPU-ONLY", "not run here: its tests need a GPU (--gpu)", 0.0))
                if args.tap:
                    print(f"ok {i} - mutation {m['name']} ({m['point']}) # SKIP its tests need a GPU", flush=True)
                continue
            if count != 1:
                result, by = "STALE", f"its text occurs {count} times in {m['file']} (must be once)"
            else:
                open(path, "w").write(original.replace(m["find"], m["replace"]))
                built, why = build(tree) if m["file"].endswith((".c", ".h")) else (True, "")
                if not built:
                    result, by = "STALE", f"the mutated code does not build: {why.splitlines()[-1:]}"
                else:
                    caught = []
                    for spec in m["tests"]:
                        passed, _ = run_test(spec, tree, args.timeout)
                        if not passed:
                            caught.append(spec)
                    result, by = ("caught", ", ".join(caught)) if caught else ("SURVIVED", "")
                open(path, "w").write(original)
                if m["file"].endswith((".c", ".h")):
                    build(tree)
            bad += result != "caught"
            rows.append((m["name"], m["point"], result, by, time.monotonic() - t0))
            if args.tap:
                status = "ok" if result == "caught" else "not ok"
                print(f"{status} {i} - mutation {m['name']} ({m['point']}): {result}"
                      f"{' by ' + by if result == 'caught' else ': ' + by if by else ''}", flush=True)
        print(f"\n{'mutation':<34} {'point':<30} {'result':<9} {'seconds':>7}  caught by")
        for name, point, result, by, secs in rows:
            print(f"{name:<34} {point:<30} {result:<9} {secs:7.1f}  {by}")
        gpu_only = sum(r[2] == "GPU-ONLY" for r in rows)
        print(f"\n{len(rows) - bad - gpu_only} of {len(rows)} mutation(s) caught, {gpu_only} not run (GPU only), "
              f"in {time.monotonic() - t_start:.0f} s")
        stale = stale_entries() if args.ci else []
        if args.ci and args.tap:
            print(f"{'not ok' if stale else 'ok'} {len(rows) + 1} - every mutation of the whole catalog "
                  f"still finds its text once and names tests that exist", flush=True)
            for line in stale:
                print(f"#   {line}")
        if args.tap:
            print(f"1..{len(rows) + (1 if args.ci else 0)}")
        return 1 if bad or stale else 0
    finally:
        shutil.rmtree(tree, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
