"""Server-side Table rendering (``Accept: ...;as=Table;g=meta.k8s.io;v=v1``).

kubectl asks every ``get`` (and ``get -w``) for a meta.k8s.io/v1 Table and prints its cells
verbatim, so READY/STATUS/RESTARTS exist only if the server computes them. Like the real
apiserver, rows always carry the priority-1 ("wide") cells; kubectl hides them unless ``-o wide``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .printers import printer_for
from .resources import ResourceType
from .tree import clone

INCLUDE_OBJECT_VALUES = ("None", "Metadata", "Object")


def render_table(rt: ResourceType, objs: list[dict[str, Any]], now: datetime, include_object: str = "Metadata",
                 resource_version: str | None = None, continue_token: str | None = None) -> dict[str, Any]:
    """A meta.k8s.io/v1 Table of ``objs`` (all of type ``rt``) as of ``now``.

    ``include_object``: "Metadata" (default) embeds a PartialObjectMetadata per row, "Object" the
    full object, "None" nothing. Unknown values behave like "Metadata", as the apiserver does for "".
    """
    printer = printer_for(rt.group, rt.plural)
    rows = []
    for obj in objs:
        row: dict[str, Any] = {"cells": printer.cells(obj, now)}
        if printer.conditions is not None:
            conditions = printer.conditions(obj)
            if conditions:
                row["conditions"] = conditions
        embedded = _embedded_object(obj, include_object)
        if embedded is not None:
            row["object"] = embedded
        rows.append(row)
    metadata: dict[str, Any] = {}
    if resource_version is not None:
        metadata["resourceVersion"] = str(resource_version)
    if continue_token:
        metadata["continue"] = continue_token
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
        "columnDefinitions": [c.definition() for c in printer.columns],
        "rows": rows,
    }


def _embedded_object(obj: dict[str, Any], include_object: str) -> dict[str, Any] | None:
    if include_object == "None":
        return None
    if include_object == "Object":
        return clone(obj)
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": clone(obj.get("metadata") or {}),
    }
