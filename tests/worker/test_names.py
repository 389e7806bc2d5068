"""test_names.py: the names a model spec's file defines at its top level
(program/names.py, what egg checks FILE.py:NAME against before any worker
starts): definitions inside if, try and with blocks count, a function's or
a class's own names do not, and a file that may define names its text does
not show is "open" (the check then leaves it to the import). In-process,
through the `names` mode's main; t87 runs it through egg."""
from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wlib import ROOT, Tap  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "worker"))
from egg_worker.program import names  # noqa: E402

FILE = '''import torch
import torch.nn as nn
from collections import OrderedDict as OD, deque
try:
    from fast import Net
except ImportError as missing:
    class Net(nn.Module):
        width = 4
        def forward(self, x):
            inner = x
            return inner
if torch.cuda.is_available():
    device = "cuda"
else:
    device = "cpu"
with open(__file__) as handle:
    pass
for step in range(2):
    pass
a, (b, *rest) = 1, (2, 3, 4)
total: int = 0
def build(width=8):
    hidden = width
    return Net()
'''


def answer(text: str) -> dict:
    """What `egg-worker.py names FILE` prints for a file holding `text`."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(text)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            rc = names.main([f.name])
    finally:
        os.unlink(f.name)
    assert rc == 0, rc
    return json.loads(out.getvalue())


def main() -> int:
    tap = Tap()
    got = answer(FILE)
    want = ["Net", "OD", "a", "b", "build", "deque", "device", "handle", "missing", "nn", "rest", "step", "torch", "total"]
    tap.ok(got == {"names": want, "open": False},
           "top-level names, those in if, try, with and for blocks too; imports by the name they bind", got)
    tap.ok(not {"forward", "inner", "hidden", "width", "nn.Module"} & set(got["names"]),
           "a function's or a class's own names are not the file's")
    tap.ok(answer("from torch.nn import *\n")["open"], "a star import makes the list open")
    tap.ok(answer("globals()['Net'] = object\n")["open"], "so does globals()")
    bad = answer("class Net(:\n    pass\n")
    tap.ok(bad.get("error", "").startswith("line 1: "), "a syntax error is said with its line", bad)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
