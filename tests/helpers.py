"""Build a graph from a few in-memory source files (no checkout on disk needed)."""

from __future__ import annotations

from pathlib import Path

from apxtui.index.link import link
from apxtui.packages import Packages
from apxtui.parse import extract_file
from apxtui.scan import EXTENSIONS


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """``files`` (relative path → text) written under ``root``; returns ``root``."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def graph_of(files: dict[str, tuple[str, str]], manifests: dict[str, str] | None = None):
    """``{rel: (module, source)}`` → (graph, linker).  Language from the extension; ``manifests``
    (``{"nn/Cargo.toml": "..."}``) give the package boundaries."""
    facts = {}
    for rel, (module, src) in files.items():
        lang = EXTENSIONS[Path(rel).suffix]
        facts[rel] = extract_file(rel, src.encode(), lang, module)
    packages = Packages.from_texts(manifests or {}, set(files) | set(manifests or {}))
    return link(facts, set(files), set(), packages)


def edges_from(g, qual_suffix: str, kind: str | None = None):
    """Out-edges (target attrs, edge attrs) of the node whose qualname ends with ``qual_suffix``."""
    src = [n for n, d in g.nodes(data=True) if d.get("qualname", "").endswith(qual_suffix)]
    assert len(src) == 1, (qual_suffix, src)
    return [(g.nodes[v], d) for _, v, d in g.out_edges(src[0], data=True) if kind is None or d["kind"] == kind]


def build_isolated(root, cache_dir):
    """Index ``root`` once with its own fact cache directory (the caller's cache env restored after)."""
    import os

    from apxtui.index.build import build_index

    old = os.environ.get("APXTUI_CACHE_DIR")
    os.environ["APXTUI_CACHE_DIR"] = str(cache_dir)
    try:
        return build_index(root, workers=1)
    finally:
        if old is None:
            os.environ.pop("APXTUI_CACHE_DIR", None)
        else:
            os.environ["APXTUI_CACHE_DIR"] = old


def rust_calls(src: str, caller: str, callee: str | None = None,
               manifest: str | None = None) -> list[tuple[int, str, str, str]]:
    """Call edges (line, target qualname, resolution, how) from ``caller`` in a one-file crate ``m`` of ``src``
    (``manifest``: its Cargo.toml), only those of ``callee`` when given; sorted."""
    g, _ = graph_of({"m/src/lib.rs": ("m", src)}, {"m/Cargo.toml": manifest} if manifest is not None else None)
    return sorted((e["line"], t.get("qualname", t.get("name", "")), e["resolution"], e["how"])
                  for t, e in edges_from(g, caller, "call") if callee is None or e["callee"] == callee)
