"""pass@k ("can it?") and pass^k ("does it, every time?") per task and over a suite.

Each task uses its own n: a task with fewer finished trials (infra errors excluded) is not scored as
if the missing trials failed. k larger than a task's n is refused, never silently extrapolated.
"""

from __future__ import annotations

from math import comb
from typing import Sequence


def _check(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n):
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if k > n:
        raise ValueError(f"k={k} exceeds the {n} trials of this task")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Chen et al.'s unbiased estimator 1 - C(n-c, k) / C(n, k), in the stable product form."""
    _check(n, c, k)
    if n - c < k:
        return 1.0
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
    return 1.0 - prod


def pass_hat_k(n: int, c: int, k: int) -> float:
    """tau-bench's pass^k = C(c, k) / C(n, k): the chance that k fresh trials all pass."""
    _check(n, c, k)
    return comb(c, k) / comb(n, k)


def _suite(counts: Sequence[tuple[int, int]], k: int, fn) -> float:
    if not counts:
        raise ValueError("no tasks")
    return sum(fn(n, c, k) for n, c in counts) / len(counts)


def suite_pass_at_k(counts: Sequence[tuple[int, int]], k: int) -> float:
    """Mean pass@k over tasks given (n, c) per task."""
    return _suite(counts, k, pass_at_k)


def suite_pass_hat_k(counts: Sequence[tuple[int, int]], k: int) -> float:
    """Mean pass^k over tasks given (n, c) per task."""
    return _suite(counts, k, pass_hat_k)
