"""Kubernetes resource quantities ("500m", "1.5Gi", "1e3"): parsing and canonical form.

The API server decodes quantities into exact decimals and writes them back canonically ("0.5" becomes
"500m", "1024Mi" becomes "1Gi"), so stored objects compare equal however the user spelled a value.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache
from math import ceil

QUANTITY_RE = re.compile(r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$")
QUANTITY_ERROR = ("quantities must match the regular expression "
                  "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")

_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_BY_EXP = {v: k for k, v in _DECIMAL.items()}
_BINARY_BY_POWER = {v: k for k, v in _BINARY.items()}
_NANO = Fraction(1, 10**9)
MAX_EXPONENT = 1000  # keeps "1e999999999" from costing a huge exact power


class QuantityError(ValueError):
    """The value is not a Kubernetes quantity (the API server answers 400)."""


def parse(value: object) -> tuple[Fraction, str]:
    """Exact value and format ("BinarySI", "DecimalSI" or "DecimalExponent")."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise QuantityError(QUANTITY_ERROR)
    return _parse(type(value), value)


@lru_cache(maxsize=4096)
def _parse(_kind: type, value: str | int | float) -> tuple[Fraction, str]:
    if isinstance(value, int):
        return Fraction(value), "DecimalSI"
    if isinstance(value, float):
        try:
            return Fraction(repr(value)), "DecimalSI"
        except (ValueError, OverflowError):  # NaN and infinities (Python's json accepts them)
            raise QuantityError(QUANTITY_ERROR) from None
    if not isinstance(value, str):
        raise QuantityError(QUANTITY_ERROR)
    text = value.strip()
    m = QUANTITY_RE.match(text)
    if not m:
        raise QuantityError(QUANTITY_ERROR)
    number, suffix = m.groups()
    if number.count(".") > 1 or number.strip("+-") in ("", "."):
        raise QuantityError(QUANTITY_ERROR)
    try:
        base = Fraction(number)
    except (ValueError, ZeroDivisionError):
        raise QuantityError(QUANTITY_ERROR) from None
    if suffix in _BINARY:
        return base * (1024 ** _BINARY[suffix]), "BinarySI"
    if suffix in _DECIMAL:
        return base * Fraction(10) ** _DECIMAL[suffix], "DecimalSI"
    if suffix[:1] in ("e", "E"):
        try:
            exp = int(suffix[1:])
        except ValueError:
            raise QuantityError(QUANTITY_ERROR) from None
        if abs(exp) > MAX_EXPONENT:
            raise QuantityError(QUANTITY_ERROR)
        return base * Fraction(10) ** exp, "DecimalExponent"
    raise QuantityError(QUANTITY_ERROR)


def _round_up_nano(v: Fraction) -> Fraction:
    if (v / _NANO).denominator == 1:
        return v
    sign = -1 if v < 0 else 1
    return sign * Fraction(ceil(abs(v) / _NANO)) * _NANO


def _decimal_string(v: Fraction, exponent_form: bool) -> str:
    """Integer mantissa with the largest power-of-1000 exponent (nano at the smallest)."""
    if v == 0:
        return "0"
    exp = -9
    mantissa = int(v * 10**9)  # exact: v was rounded up to nano
    top = None if exponent_form else 18
    while mantissa % 1000 == 0 and (top is None or exp < top):
        mantissa //= 1000
        exp += 3
    if exponent_form:
        return f"{mantissa}e{exp}" if exp else str(mantissa)
    return f"{mantissa}{_DECIMAL_BY_EXP[exp]}"


def canonical(value: object) -> str:
    """The API server's canonical spelling of a quantity."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise QuantityError(QUANTITY_ERROR)
    return _canonical(type(value), value)


@lru_cache(maxsize=4096)
def _canonical(kind: type, value: str | int | float) -> str:
    v, fmt = _parse(kind, value)
    v = _round_up_nano(v)
    if fmt == "BinarySI":
        if -1024 < v < 1024 or v.denominator != 1:
            return _decimal_string(v, False)
        n = int(v)
        power = 0
        while power < 6 and n % 1024 == 0:
            n //= 1024
            power += 1
        return f"{n}{_BINARY_BY_POWER.get(power, '')}"
    return _decimal_string(v, fmt == "DecimalExponent")


def to_float(value: object) -> float:
    return float(parse(value)[0])


def parse_cpu_millis(value: object) -> int:
    """CPU in millicores, rounded up like the kubelet does ("100u" is 1m)."""
    return int(ceil(parse(value)[0] * 1000))


def parse_memory_bytes(value: object) -> int:
    """Memory (or any byte quantity) in bytes, rounded up."""
    return int(ceil(parse(value)[0]))


def format_millis(millis: int) -> str:
    """Millicores back to a quantity string ("250m", "2")."""
    return canonical(f"{millis}m")


def format_bytes(n: int) -> str:
    """Bytes back to a binary quantity string ("512Mi")."""
    if n % 1024 == 0 and n:
        return canonical(f"{n // 1024}Ki")
    return str(n)
