"""Honest intervals: Wilson over incidents, clustered standard errors with the task as cluster."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from .distributions import t_quantile, z_quantile


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float
    se: float | None = None
    n: int = 0
    clusters: int = 0


def wilson(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval for a proportion (well behaved at 0 and 1 and for small n)."""
    if n <= 0:
        raise ValueError("Wilson interval needs n > 0")
    if not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes}/{n}")
    z = z_quantile(0.5 + confidence / 2)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return Interval(p, max(0.0, centre - half), min(1.0, centre + half), n=n)


def clustered_se(clusters: Sequence[Sequence[float]]) -> float:
    """Clustered SE of the grand mean with a finite-cluster correction (Miller 2024, Inspect's form):
    sqrt(C/(C-1) * sum_c (sum_{i in c} (s_i - mean))^2) / n."""
    flat = [s for c in clusters for s in c]
    n, C = len(flat), len(clusters)
    if C < 2:
        raise ValueError("clustered SE needs at least two clusters")
    mean = sum(flat) / n
    total = sum(sum(s - mean for s in c) ** 2 for c in clusters)
    return math.sqrt(C / (C - 1) * total) / n


def mean_ci(clusters: Sequence[Sequence[float]], confidence: float = 0.95) -> Interval:
    """Mean over all trials with a t interval on the clustered SE (df = clusters - 1)."""
    flat = [s for c in clusters for s in c]
    mean = sum(flat) / len(flat)
    se = clustered_se(clusters)
    t = t_quantile(0.5 + confidence / 2, len(clusters) - 1)
    return Interval(mean, mean - t * se, mean + t * se, se=se, n=len(flat), clusters=len(clusters))
