"""sumlayout.py: the layout the timed outputs' summaries share (checksums.py's
PyTorch path and fastsums.py's one-read kernel): the chunk that an element's
weight repeats over, and the row length summed in the output's own dtype.

Both summers import it, so neither imports the other's module for its
constants (checksums loads fastsums lazily, only for large GPU outputs).
"""
from __future__ import annotations

CPU_CHUNK, GPU_CHUNK = 1 << 21, 1 << 26  # small enough for caches / few launches
ROW = 256  # elements summed in the output's own dtype before float64 takes over
