"""static_scan.py: advisory text checks of a candidate's source. They only add
flags: evasions are caught by the run-time checks, not here."""
from __future__ import annotations

import re

PATTERNS = [
    (r"\bexec\s*\(|\beval\s*\(|\bcompile\s*\(", "dynamic code execution (exec/eval/compile)"),
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


def scan(source: str) -> list[str]:
    return [f"static: {what}" for pat, what in PATTERNS if re.search(pat, source)]
