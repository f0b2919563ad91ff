"""YAML with positions: parse a document and remember the line of every field.

Task authors need "file:line: field: message", so the loader composes the YAML node tree itself
(keeping each node's start mark), builds plain Python data from it, and records the line of every
path. Validation errors found later (pydantic locs, missing files) are mapped back to a line here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

Path = tuple[str | int, ...]


class YamlSyntaxError(Exception):
    """Malformed YAML, or a YAML construct a task file does not allow. ``line`` is 1-based."""

    def __init__(self, line: int, message: str, path: Path = ()):
        super().__init__(message)
        self.line = line
        self.message = message
        self.path = path


@dataclass(frozen=True)
class Located:
    """A parsed document and the 1-based line of each path in it (mapping keys point at the key)."""

    data: Any
    lines: dict[Path, int]

    def line_of(self, path: Path) -> int:
        """The line of ``path`` or of its nearest ancestor that exists in the file."""
        path = tuple(path)
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get((), 1)


def format_path(path: Path) -> str:
    """('fault', 'steps', 0, 'patch') -> 'fault.steps[0].patch'."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _mark_line(exc: yaml.MarkedYAMLError) -> int:
    mark = exc.problem_mark or exc.context_mark
    return mark.line + 1 if mark is not None else 1


def _syntax_message(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.MarkedYAMLError):
        parts = [p for p in (exc.context, exc.problem) if p]
        text = "; ".join(parts) if parts else "malformed YAML"
        opened, found = exc.context_mark, exc.problem_mark
        if opened is not None and found is not None and opened.line != found.line:
            text += f" (opened on line {opened.line + 1})"
    else:
        text = str(exc).splitlines()[0] if str(exc) else "malformed YAML"
    return f"invalid YAML: {text}"


_FAST_LOADER = getattr(yaml, "CSafeLoader", None)  # libyaml: same nodes and marks, many times faster


def _compose(text: str, *, multi: bool) -> list[yaml.Node]:
    if _FAST_LOADER is not None:
        fast = _FAST_LOADER(text)
        try:
            nodes = []
            while fast.check_node():
                node = fast.get_node()
                if node is not None:
                    nodes.append(node)
            if multi or len(nodes) <= 1:
                return nodes
        except yaml.YAMLError:
            pass  # re-read with the pure-Python loader, whose messages the errors quote
        finally:
            fast.dispose()
    return _compose_slow(text, multi=multi)


def _compose_slow(text: str, *, multi: bool) -> list[yaml.Node]:
    loader = yaml.SafeLoader(text)
    try:
        nodes = []
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                nodes.append(node)
            if not multi and len(nodes) > 1:
                raise YamlSyntaxError(node.start_mark.line + 1, "invalid YAML: expected a single document")
        return nodes
    except yaml.MarkedYAMLError as exc:
        raise YamlSyntaxError(_mark_line(exc), _syntax_message(exc)) from None
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(1, _syntax_message(exc)) from None
    finally:
        loader.dispose()


def _build(node: yaml.Node, path: Path, lines: dict[Path, int], ctor: yaml.SafeLoader) -> Any:
    """Construct plain data from ``node``, recording lines and rejecting duplicate keys."""
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise YamlSyntaxError(key_node.start_mark.line + 1, "invalid YAML: merge keys (<<) are not supported")
            if not isinstance(key_node, yaml.ScalarNode):
                raise YamlSyntaxError(key_node.start_mark.line + 1, "invalid YAML: mapping keys must be scalars")
            key = _scalar(key_node, ctor)
            child = path + (key if isinstance(key, (str, int)) else str(key),)
            if key in out:
                raise YamlSyntaxError(key_node.start_mark.line + 1, f"duplicate key {key!r}", child)
            lines[child] = key_node.start_mark.line + 1
            out[key] = _build(value_node, child, lines, ctor)
        return out
    if isinstance(node, yaml.SequenceNode):
        items = []
        for index, item in enumerate(node.value):
            lines[path + (index,)] = item.start_mark.line + 1
            items.append(_build(item, path + (index,), lines, ctor))
        return items
    return _scalar(node, ctor)


def _scalar(node: yaml.Node, ctor: yaml.SafeLoader) -> Any:
    try:
        return ctor.construct_object(node, deep=True)
    except yaml.MarkedYAMLError as exc:
        raise YamlSyntaxError(_mark_line(exc), _syntax_message(exc)) from None
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(node.start_mark.line + 1, _syntax_message(exc)) from None


def _build_root(node: yaml.Node) -> Located:
    lines: dict[Path, int] = {(): node.start_mark.line + 1}
    ctor = yaml.SafeLoader("")
    try:
        return Located(_build(node, (), lines, ctor), lines)
    finally:
        ctor.dispose()


def load_located(text: str) -> Located:
    """Parse one YAML document with positions. An empty document is ``None`` data."""
    nodes = _compose(text, multi=False)
    if not nodes:
        return Located(None, {(): 1})
    return _build_root(nodes[0])


def load_all_located(text: str) -> list[Located]:
    """Parse a multi-document YAML stream (manifests); empty documents are skipped."""
    located = (_build_root(node) for node in _compose(text, multi=True))
    return [doc for doc in located if doc.data is not None]
