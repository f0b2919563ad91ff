"""Resource quantities as the workload machinery needs them: cpu in millicores, memory in bytes.

Parsing is tolerant (a malformed quantity counts as zero here; validation rejects it at the API
edge). Formatting follows the canonical Kubernetes forms (``1Gi``, ``1536Mi``, ``500m``, ``2``)
so quota messages and metrics read like a real cluster's.
"""

from __future__ import annotations

import math
from typing import Any

from .. import quantity

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}

MI = 2**20


def parse_cpu_millis(value: Any) -> int:
    """``"500m"`` → 500, ``"2"`` → 2000, ``0.25`` → 250 (rounded up); malformed → 0."""
    try:
        return quantity.parse_cpu_millis(value)
    except (quantity.QuantityError, ValueError, TypeError):
        return 0


def parse_memory_bytes(value: Any) -> int:
    """``"512Mi"`` → 536870912, ``"1G"`` → 10**9; malformed → 0."""
    try:
        return quantity.parse_memory_bytes(value)
    except (quantity.QuantityError, ValueError, TypeError):
        return 0


def format_cpu(millis: int) -> str:
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def format_memory(n: int) -> str:
    """Canonical form: the largest binary suffix that divides exactly, else decimal, else bytes."""
    if n == 0:
        return "0"
    for suffix, size in reversed(list(_BINARY.items())):
        if n % size == 0:
            return f"{n // size}{suffix}"
    for suffix in ("E", "P", "T", "G", "M", "k"):
        size = _DECIMAL[suffix]
        if n % size == 0:
            return f"{n // size}{suffix}"
    return str(n)


def format_count(n: int) -> str:
    return str(n)


def is_cpu_resource(name: str) -> bool:
    return name in ("cpu", "requests.cpu", "limits.cpu")


def format_resource(name: str, amount: int) -> str:
    """Format an amount of a quota resource (cpu in millicores, memory/storage in bytes, else a count)."""
    if is_cpu_resource(name):
        return format_cpu(amount)
    if name.endswith("memory") or name.endswith("storage") or name.startswith("hugepages-"):
        return format_memory(amount)
    return format_count(amount)


def parse_resource(name: str, value: Any) -> int:
    """A quota amount: cpu in millicores, anything else (bytes, counts) rounded up to an integer."""
    if is_cpu_resource(name):
        return parse_cpu_millis(value)
    try:
        return int(math.ceil(quantity.parse(value)[0]))
    except (quantity.QuantityError, ValueError, TypeError):
        return 0
