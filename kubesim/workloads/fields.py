"""Typed, path-aware field access for validating profile documents (errors name the field)."""

from __future__ import annotations

from typing import Any, Iterable, Mapping


class ProfileError(ValueError):
    """A profile document is malformed; the message names the offending field."""

    def __init__(self, image: str, field_path: str, problem: str):
        super().__init__(f'profile "{image}": {field_path}: {problem}')
        self.image = image
        self.field = field_path
        self.problem = problem


class Reader:
    """Typed field access over a mapping with errors that name the field path."""

    def __init__(self, image: str, data: Mapping[str, Any], prefix: str, allowed: Iterable[str]):
        self.image = image
        self.data = data
        self.prefix = prefix
        unknown = sorted(set(data) - set(allowed))
        if unknown:
            raise ProfileError(image, self._path(unknown[0]), f"unknown field (allowed: {', '.join(sorted(allowed))})")

    def _path(self, key: str) -> str:
        return f"{self.prefix}.{key}" if self.prefix else key

    def fail(self, key: str, problem: str) -> ProfileError:
        return ProfileError(self.image, self._path(key), problem)

    def number(self, key: str, default: float | None, minimum: float = 0.0) -> float | None:
        value = self.data.get(key, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(key, f"must be a number, got {value!r}")
        if value < minimum:
            raise self.fail(key, f"must be >= {minimum:g}, got {value!r}")
        return float(value)

    def integer(self, key: str, default: int | None, minimum: int = 0, maximum: int | None = None) -> int | None:
        value = self.data.get(key, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"must be an integer, got {value!r}")
        if value < minimum or (maximum is not None and value > maximum):
            raise self.fail(key, f"must be between {minimum} and {maximum}, got {value}")
        return value

    def string(self, key: str, default: str | None) -> str | None:
        value = self.data.get(key, default)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.fail(key, f"must be a string, got {value!r}")
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(key, f"must be true or false, got {value!r}")
        return value

    def strings(self, key: str, default: tuple[str, ...] | None = ()) -> tuple[str, ...] | None:
        value = self.data.get(key, default)
        if value is None:
            return None
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, (list, tuple)):
            raise self.fail(key, f"must be a list of strings, got {value!r}")
        out = []
        for i, item in enumerate(value):
            if isinstance(item, (int, float)) and not isinstance(item, bool):
                item = str(item)
            if not isinstance(item, str):
                raise self.fail(f"{key}[{i}]", f"must be a string, got {item!r}")
            out.append(item)
        return tuple(out)

    def ints(self, key: str) -> tuple[int, ...]:
        value = self.data.get(key, [])
        if not isinstance(value, (list, tuple)):
            raise self.fail(key, f"must be a list of port numbers, got {value!r}")
        for i, item in enumerate(value):
            if isinstance(item, bool) or not isinstance(item, int) or not 0 < item < 65536:
                raise self.fail(f"{key}[{i}]", f"must be a port number (1-65535), got {item!r}")
        return tuple(value)

    def mapping(self, key: str) -> Mapping[str, Any] | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise self.fail(key, f"must be a mapping, got {value!r}")
        return value

    def child(self, key: str, allowed: Iterable[str]) -> "Reader | None":
        value = self.mapping(key)
        return None if value is None else Reader(self.image, value, self._path(key), allowed)
