"""Paired comparison of a candidate against a baseline on the same tasks."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from .distributions import binom_cdf, z_quantile


def mcnemar_exact(b: int, c: int) -> float:
    """Exact two-sided McNemar p: discordant pairs b (baseline pass → candidate fail) and c (the reverse)."""
    n = b + c
    if n == 0:
        return 1.0
    return min(1.0, 2.0 * binom_cdf(min(b, c), n, 0.5))


@dataclass(frozen=True)
class PairedComparison:
    delta: float  # candidate mean - baseline mean
    se: float
    low: float
    high: float
    rho: float | None  # correlation of the paired scores
    n: int


def _sd(xs: Sequence[float]) -> float:
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def paired_difference(candidate: Sequence[float], baseline: Sequence[float], confidence: float = 0.95) -> PairedComparison:
    """Paired mean difference over tasks (per-task scores, same order): SE = sd(d)/sqrt(n)."""
    if len(candidate) != len(baseline) or len(candidate) < 2:
        raise ValueError("paired comparison needs two equal-length score lists of at least two tasks")
    n = len(candidate)
    d = [a - b for a, b in zip(candidate, baseline)]
    delta = sum(d) / n
    se = _sd(d) / math.sqrt(n)
    z = z_quantile(0.5 + confidence / 2)
    sa, sb = _sd(candidate), _sd(baseline)
    rho = None
    if sa > 0 and sb > 0:
        ma, mb = sum(candidate) / n, sum(baseline) / n
        cov = sum((a - ma) * (b - mb) for a, b in zip(candidate, baseline)) / (n - 1)
        rho = cov / (sa * sb)
    return PairedComparison(delta, se, delta - z * se, delta + z * se, rho, n)


def minimum_detectable_effect(n: int, omega2: float, sigma2_a: float = 0.0, k_a: int = 1, sigma2_b: float = 0.0,
                              k_b: int = 1, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest true difference this many tasks detect (Miller 2024, Eq. 10)."""
    if n <= 0:
        raise ValueError("n must be positive")
    z = z_quantile(1 - alpha / 2) + z_quantile(power)
    return z * math.sqrt((omega2 + sigma2_a / k_a + sigma2_b / k_b) / n)
