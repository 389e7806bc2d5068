"""summary.py: the side-by-side table of h200.sh's evaluations (one
`egg eval --json` per operator in OUT): the existing kernel's verdict and
time against eager PyTorch and torch.compile, its errors and %SOL.

    python3 bench/tritonbench/summary.py OUT"""
from __future__ import annotations

import json
import os
import sys

NAMES = ["flash_attention", "rope", "int8_dequant_matmul"]


def ms(v) -> str:
    return f"{v:.4f}" if isinstance(v, (int, float)) else "-"


def ratio(v) -> str:
    return f"{v:.2f}x" if isinstance(v, (int, float)) else "-"


def main(out: str) -> int:
    print("| operator | existing kernel | existing ms | eager ms | torch.compile ms | existing vs eager "
          "| existing vs compile | %SOL (existing) | max abs err | flags |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in NAMES:
        path = os.path.join(out, name + ".json")
        try:
            j = json.load(open(path))
        except (OSError, ValueError) as e:
            print(f"| {name} | no result ({e}) | | | | | | | | |")
            continue
        verdict = j.get("verdict", "?") if j.get("verdict") == "pass" else \
            f"{j.get('verdict')} at {j.get('stage')}: {(j.get('reason') or '')[:120]}"
        flags = "; ".join(f.split(":")[0] for f in j.get("flags", []))
        sol = j.get("sol_pct")
        print(f"| {name} | {verdict} | {ms(j.get('kernel_ms'))} | {ms(j.get('eager_ms'))} | {ms(j.get('compile_ms'))} "
              f"| {ratio(j.get('speedup_eager'))} | {ratio(j.get('speedup_compile'))} "
              f"| {f'{sol:.1f}%' if isinstance(sol, (int, float)) else '-'} "
              f"| {j.get('max_abs_err') if j.get('max_abs_err') is not None else '-'} | {flags} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
