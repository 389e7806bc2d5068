"""noise.py: when a split's time is noisy, said in words (egg split marks
the subgraph and its share: noisy shares pick parts by chance).

A time is noisy when its slowest measurement took more than NOISY times its
fastest (of rounds, once the single slowest and fastest are set aside), by
more than NOISY_FLOOR_MS (below that a spread is the clock's
grain and moves no share): the rounds of one subgraph in the program
(measure.py), or the repeats of one task, which compute the same thing on
the same shapes (repeats.py). A busy or shared CPU does this: its intra-op
threads wait for cores that other work holds, and one call takes tens of ms
that the next takes in a tenth of one.
"""
from __future__ import annotations

NOISY = 2.0
NOISY_FLOOR_MS = 0.02


def noise_words(samples_ms: list, what: str, trim: bool = False) -> str | None:
    """Why the measurements are noisy ("its 5 rounds in the program took
    0.0873 to 11.3300 ms"), or None when their spread is within NOISY.
    With `trim` (rounds, of which egg takes the median), the fastest and the
    slowest of four or more are set aside first: one stall the median
    ignores is not noise; two are."""
    xs = sorted(x for x in samples_ms if x is not None)
    if len(xs) < 2:
        return None
    inner = xs[1:-1] if trim and len(xs) >= 4 else xs
    lo, hi = inner[0], inner[-1]
    if hi > NOISY * lo and hi - lo > NOISY_FLOOR_MS:
        return f"{what} took {xs[0]:.4f} to {xs[-1]:.4f} ms"
    return None
