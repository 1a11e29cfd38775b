"""Framework models as data: ``queries/frameworks/*.toml``, one file per framework.

Each file describes a framework's dispatch conventions in a few tables that
:mod:`apxtui.index.resolve_frameworks` reads (see the shipped ``candle.toml``, ``cudarc.toml``,
``pytorch.toml``, ``pybind11.toml`` for every key, commented):

* ``load_by_name`` — a method or function that loads a kernel by its name (``name_arg``,
  optionally ``module_arg``: a PTX module constant naming the ``.cu`` file);
* ``name_pattern`` — a helper that builds kernel names (``kernel_name::<T>("x")`` → ``x_{dtype}``);
* ``custom_op`` / ``map_trait`` — calls that run a user type's per-device method;
* ``library`` — calls of a library's API (paths, methods), never project device work;
* ``torch_library`` / ``python_ops`` / ``pybind11`` — C++ operators bound to Python;
* ``macros`` — C macro definitions used where the checkout does not define the name
  (``AT_DISPATCH_FLOATING_TYPES``: its headers are not in the checkout), with ``scalar_types``.

Files are found like the queries (:func:`apxtui.parse.languages.query_dirs`): a file in an
earlier folder replaces the file of the same name in a later one.  A file that is not valid
TOML is one clear error naming it.
"""

from __future__ import annotations

import tomllib
from functools import cache
from typing import Any

from apxtui.parse.languages import framework_model_paths

SUBDIR = "frameworks"


@cache
def models() -> tuple[dict[str, Any], ...]:
    """The parsed models (cached per process)."""
    out = []
    for p in framework_model_paths():
        try:
            data = tomllib.loads(p.read_text("utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            raise ValueError(f"{p}: invalid framework model: {e}") from e
        data.setdefault("name", p.stem)
        data["_path"] = str(p)
        out.append(data)
    return tuple(out)


def entries(key: str) -> list[dict[str, Any]]:
    """All entries of table array ``key`` across the models, each with ``framework`` set."""
    out = []
    for m in models():
        for e in m.get(key, []):
            if isinstance(e, dict):
                out.append({**e, "framework": m["name"]})
    return out


def merged(key: str) -> dict[str, Any]:
    """Table ``key`` of every model merged (later files add keys, never replace earlier ones)."""
    out: dict[str, Any] = {}
    for m in models():
        t = m.get(key)
        if isinstance(t, dict):
            for k, v in t.items():
                out.setdefault(k, v)
    return out
