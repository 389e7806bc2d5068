"""static_scan.py: advisory text checks of a candidate's source. They only add
flags: evasions are caught by the run-time checks, not here."""
from __future__ import annotations

import os
import re

PATTERNS = [
    # The builtins, not a method of the same name (a module's .eval(), re.compile).
    (r"(?<![\w.])(exec|eval|compile)\s*\(", "dynamic code execution (exec/eval/compile)"),
    (r"\b__import__\s*\(|\bimportlib\b", "dynamic imports"),
    (r"\bctypes\b|\bcffi\b", "foreign function calls (ctypes/cffi)"),
    (r"\bsubprocess\b|\bos\.system\b|\bos\.popen\b|\bos\.fork\b|\bos\.exec", "process creation"),
    (r"\bsocket\b|\burllib\b|\brequests\b|\bhttp\.client\b", "networking"),
    (r"\bgc\.get_objects\b|\bgc\.get_referrers\b|\bsys\._getframe\b|\binspect\.stack\b", "introspection of other objects or frames"),
    (r"\bthreading\b|\bmultiprocessing\b|\bconcurrent\.futures\b", "threads or processes"),
    (r"torch\.backends\.[a-z.]*allow_tf32|set_float32_matmul_precision|allow_fp16_reduced", "changes global precision settings"),
    (r"\bbase64\b|\bcodecs\.decode\b|\bzlib\.decompress\b", "decoding of embedded data"),
    (r"\bos\._exit\b|\batexit\b|\bsignal\.", "process exit or signal handling"),
    (r"cuda\.Event|synchronize\s*=|time\.perf_counter\s*=|elapsed_time\s*=", "touches timing functions"),
    (r"\bgetattr\s*\(\s*(torch|F|nn)\b", "looks up torch functions by name"),
]


# egg's own runtimes, which egg compose and a model spec's program copy into
# the files they write (less their first comment lines): egg's code, not
# the model's, so not scanned. A model-written kernel inside a composed
# program (a part's source) is scanned as any kernel is.
_RUNTIMES = ("program/compose_runtime.py", "program/model_runtime.py")
_runtime_texts: list | None = None


def _egg_runtimes() -> list:
    """egg's runtimes as their top-level blocks (a def, a class, an import
    and the lines under it): egg compose copies a program's source less its
    get_inputs, so a runtime is matched block by block, each block whole."""
    global _runtime_texts
    if _runtime_texts is None:
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        _runtime_texts = []
        for rel in _RUNTIMES:
            try:
                lines = open(os.path.join(here, rel)).read().splitlines(True)
            except OSError:
                continue
            block: list = []
            for line in lines:
                if line[:1] not in (" ", "\t", "\n", "#", "") and block:
                    _runtime_texts.append("".join(block))
                    block = []
                if block or not line.startswith("#"):
                    block.append(line)
            if block:
                _runtime_texts.append("".join(block))
        _runtime_texts = [t for t in _runtime_texts if t.strip()]
    return _runtime_texts


def scan(source: str) -> list[str]:
    for text in _egg_runtimes():
        source = source.replace(text, "")
    return [f"static: {what}" for pat, what in PATTERNS if re.search(pat, source)]
