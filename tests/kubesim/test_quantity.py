"""Resource quantities: parsing, canonical spelling and unit helpers."""

from __future__ import annotations

import pytest

from kubesim import quantity


@pytest.mark.parametrize("text, canonical", [
    ("500m", "500m"), ("0.5", "500m"), ("1", "1"), (2, "2"), (0.25, "250m"), ("2000", "2k"), ("1500", "1500"),
    ("1024Mi", "1Gi"), ("1.5Gi", "1536Mi"), ("0.5Gi", "512Mi"), ("1000Mi", "1000Mi"), ("512", "512"),
    ("1e3", "1e3"), ("100u", "100u"),
])
def test_quantity_canonical_form(text, canonical):
    assert quantity.canonical(text) == canonical


def test_quantity_helpers():
    assert quantity.parse_cpu_millis("250m") == 250
    assert quantity.parse_cpu_millis("1.5") == 1500
    assert quantity.parse_cpu_millis(2) == 2000
    assert quantity.parse_cpu_millis("100u") == 1
    assert quantity.parse_memory_bytes("64Mi") == 64 * 1024 * 1024
    assert quantity.parse_memory_bytes("1G") == 10**9
    assert quantity.parse_memory_bytes("1e3") == 1000
    assert quantity.format_millis(250) == "250m" and quantity.format_millis(2000) == "2"
    assert quantity.format_bytes(512 * 1024 * 1024) == "512Mi" and quantity.format_bytes(1000) == "1000"
    for bad in ("5x", "", "Mi", "1..2", True, None, [1]):
        with pytest.raises(quantity.QuantityError):
            quantity.parse(bad)
