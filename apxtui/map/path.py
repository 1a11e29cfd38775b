"""A stage key chain (:func:`apxtui.trace.stage_key` from the entry) as the steps of a path."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from apxtui.map.model import KeyChain, Site


@dataclass(frozen=True)
class PathStep:
    kind: str
    name: str
    qualname: str
    definition: Site
    site: Site  # call site in the previous step (the entry has none)


def split_key(key: str) -> tuple[str, str]:
    """``node@site`` → (node id, site); node ids contain one ``@`` themselves, sites none."""
    node, _, site = key.rpartition("@")
    return (node, site) if node else (key, "")


def path_to(g: Any, key: KeyChain) -> list[PathStep]:
    """The steps of ``key`` (stops at the first step whose node is not in the graph)."""
    out = []
    for k in key:
        node, site = split_key(k)
        if node not in g:
            break
        d = g.nodes[node]
        parts = site.split(":")
        call = Site(parts[0], int(parts[1])) if len(parts) > 1 and parts[1].isdigit() else Site("", 0)
        out.append(PathStep(d.get("kind", ""), d.get("name", ""), d.get("qualname", ""),
                            Site(d.get("file", ""), int(d.get("line", 0) or 0)), call))
    return out
