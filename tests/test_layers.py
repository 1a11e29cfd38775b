"""The import-layers contract (README, "Architecture"): a module imports only from its own
package or from lower layers, packages on one layer do not import each other, and an
import inside a function is a deliberate lazy import (marked ``# lazy: <reason>``), never a
way around a cycle.  Imports under ``if TYPE_CHECKING:`` count as dependencies too.

A new top-level module or package goes into ``LAYERS`` (and the README) where its imports put it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "apxtui"

#: Bottom to top.  Entries on one line are independent siblings (neither imports the other).
LAYERS: list[tuple[str, ...]] = [
    ("apxtui", "apxtui.vocab", "apxtui.errors", "apxtui.textsafe"),  # "apxtui": the package's __init__ (version)
    ("apxtui.facts", "apxtui.demo", "apxtui.inputs", "apxtui.cliout", "apxtui.argparser"),
    ("apxtui.packages",),
    ("apxtui.scan", "apxtui.parse"),
    ("apxtui.index",),
    ("apxtui.profile",),
    ("apxtui.trace",),
    ("apxtui.analysis",),
    ("apxtui.map", "apxtui.checkpoint"),
    ("apxtui.report",),
    ("apxtui.tui",),
    ("apxtui.commands",),
    ("apxtui.cli",),
    ("apxtui.__main__",),
]

LAZY = re.compile(r"#.*\blazy:")


@dataclass(frozen=True)
class Imp:
    module: str  # the importing module
    target: str  # the apxtui module imported
    line: int
    in_function: bool
    marked_lazy: bool


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def all_modules(pkg: Path = PKG) -> dict[str, Path]:
    """Every module of the package (the demo checkout is data, not code)."""
    return {module_name(p, pkg.parent): p for p in sorted(pkg.rglob("*.py")) if "demo/checkout" not in p.as_posix()}


def imports_of(module: str, source: str, known: set[str], is_package: bool = False) -> list[Imp]:
    """The apxtui modules ``module`` imports, with where and how (``known``: every module name)."""
    lines = source.splitlines()
    package = module if is_package else module.rpartition(".")[0]
    out: list[Imp] = []

    def targets(node: ast.Import | ast.ImportFrom) -> list[str]:
        if isinstance(node, ast.Import):
            return [a.name for a in node.names]
        base = node.module or ""
        if node.level:
            up = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join(up + ([base] if base else []))
        return [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]

    def marked(lineno: int) -> bool:
        """``# lazy: …`` on the import's first line or on a comment line just above it."""
        above = lines[lineno - 2].strip() if lineno > 1 else ""
        return bool(LAZY.search(lines[lineno - 1]) or (above.startswith("#") and LAZY.search(above)))

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for t in dict.fromkeys(targets(child)):
                    if t == "apxtui" or t.startswith("apxtui."):
                        out.append(Imp(module, t, child.lineno, in_function, marked(child.lineno)))
            else:
                visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse(source), False)
    return out


def layer_of(module: str) -> tuple[int, str] | None:
    """(layer index, the LAYERS entry the module belongs to): the longest matching prefix."""
    best: tuple[int, str] | None = None
    for i, entries in enumerate(LAYERS):
        for e in entries:
            inside = module == e or (e != "apxtui" and module.startswith(e + "."))  # "apxtui": the __init__ only
            if inside and (best is None or len(e) > len(best[1])):
                best = (i, e)
    return best


def violations(imps: list[Imp]) -> list[str]:
    """Upward imports, imports between siblings, and unmarked imports inside functions."""
    bad = []
    for imp in imps:
        where = f"{imp.module}:{imp.line} imports {imp.target}"
        src, dst = layer_of(imp.module), layer_of(imp.target)
        if src is None or dst is None:
            continue  # reported by test_every_module_has_a_layer
        if dst[0] > src[0]:
            bad.append(f"{where}: upward ({LAYERS[src[0]]} is below {LAYERS[dst[0]]})")
        elif dst[0] == src[0] and dst[1] != src[1] and "apxtui" not in (src[1], dst[1]):
            bad.append(f"{where}: {src[1]} and {dst[1]} are independent siblings")
        if imp.in_function and not imp.marked_lazy:
            bad.append(f"{where} inside a function: move it to the top, or mark a deliberate lazy import "
                       "'# lazy: <reason>'")
    return bad


def project_imports() -> list[Imp]:
    mods = all_modules()
    return [imp for m, p in mods.items()
            for imp in imports_of(m, p.read_text("utf-8"), set(mods), p.name == "__init__.py")]


def test_every_module_has_a_layer():
    assert [m for m in all_modules() if layer_of(m) is None] == []
    assert layer_of("apxtui.newmodule") is None and layer_of("apxtui.index.newmodule") == (4, "apxtui.index")


def test_imports_point_down_and_lazy_imports_are_marked():
    assert violations(project_imports()) == []


def test_the_contract_catches_what_it_forbids():
    known = {"apxtui.trace", "apxtui.tui.app", "apxtui.index.build", "apxtui.checkpoint.sol", "apxtui.map.build"}
    up = imports_of("apxtui.trace", "from apxtui.tui.app import ApxApp\n", known)
    side = imports_of("apxtui.checkpoint.sol", "import apxtui.map.build\n", known)
    hidden = imports_of("apxtui.trace", "def f():\n    from apxtui.index.build import Index\n", known)
    lazy = imports_of(
        "apxtui.trace",
        "def f():\n    from apxtui.index.build import Index  # lazy: start-up\n"
        "def g():\n    # lazy: start-up\n    from apxtui.index.build import Index\n",
        known,
    )
    tc = imports_of("apxtui.trace", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                    "    from apxtui.tui import app\n", known)
    assert [b.split(": ", 1)[1] for b in violations(up + side + tc)] == [
        "upward (('apxtui.trace',) is below ('apxtui.tui',))",
        "apxtui.checkpoint and apxtui.map are independent siblings",
        "upward (('apxtui.trace',) is below ('apxtui.tui',))",
    ]
    assert len(violations(hidden)) == 1 and "inside a function" in violations(hidden)[0]
    assert len(lazy) == 2 and violations(lazy) == []
    assert [i.target for i in tc] == ["apxtui.tui.app"]


@pytest.mark.parametrize("module", ["apxtui.errors", "apxtui.vocab"])
def test_the_bottom_imports_nothing_of_apxtui(module):
    mods = all_modules()
    assert imports_of(module, mods[module].read_text("utf-8"), set(mods)) == []
