"""What the explorer is opened on, and the user's settings for it (no argparse, no Textual here).

- :class:`ExplorerConfig` — a typed, already validated configuration (``apxtui.commands.tui``
  builds it from the command line).
- :class:`Settings` — the user's keymap from ``$XDG_CONFIG_HOME/apxtui/tui.toml``
  (``APXTUI_TUI_CONFIG`` names another file)::

      [keymap]                       # binding id = keys (comma-separated); `?` in the app lists the ids
      "tree.next_device" = "n,ctrl+n"
      "app.quit" = "q,ctrl+q"

  A missing file is no settings; a bad one is reported (file and problem) and ignored, never a crash.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from apxtui.profile.model import Profile

MAX_BYTES = 256 * 1024


@dataclass(frozen=True)
class ExplorerConfig:
    """``root`` and ``checkpoint`` exist (absolute); ``profile`` None means every configuration."""

    root: Path
    demo: bool = False
    checkpoint: Path | None = None
    export_dir: str | None = None  # where `e` writes reports (None: CHECKOUT/devlocal/<entry>/reports)
    use_cache: bool = True
    jobs: int | None = None  # parser processes (None: all cores)
    profile: Profile | None = None  # from the command line; screen 5 changes the session's
    mouse: bool = True


@dataclass
class Settings:
    keymap: dict[str, str] = field(default_factory=dict)
    budget: int | None = None  # ``[trace] budget``: stages of a whole-path trace (analysis, export); None: default
    path: Path | None = None
    problems: list[str] = field(default_factory=list)


def settings_path() -> Path:
    env = os.environ.get("APXTUI_TUI_CONFIG")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "apxtui" / "tui.toml"


def load_settings(path: Path | None = None, known_ids: set[str] | Callable[[], set[str]] | None = None) -> Settings:
    """Read the settings; unknown binding ids (when ``known_ids`` is given: a set, or a function called only
    when there is a keymap to check) and bad values are problems."""
    path = path or settings_path()
    cfg = Settings(path=path)
    try:
        if not path.is_file():
            return cfg
        if path.stat().st_size > MAX_BYTES:
            cfg.problems.append(f"{path}: larger than {MAX_BYTES // 1024} KiB; ignored")
            return cfg
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as e:
        cfg.problems.append(f"{path}: {type(e).__name__}: {e}; ignored")
        return cfg
    keymap = data.get("keymap", {})
    if not isinstance(keymap, dict):
        cfg.problems.append(f'{path}: [keymap] must be a table of binding id = "keys"')
        return cfg
    if callable(known_ids) and keymap:
        known_ids = known_ids()
    for bid, keys in keymap.items():
        if not isinstance(keys, str) or not keys.strip():
            cfg.problems.append(f'{path}: keymap {bid!r}: expected a string of keys such as "n,ctrl+n"')
        elif isinstance(known_ids, set) and bid not in known_ids:
            cfg.problems.append(f"{path}: keymap {bid!r}: no such binding id (the help screen, ?, lists them)")
        else:
            cfg.keymap[bid] = ",".join(k.strip() for k in keys.split(",") if k.strip())
    trace = data.get("trace", {})
    budget = trace.get("budget") if isinstance(trace, dict) else None
    if not isinstance(trace, dict) or set(trace) - {"budget"}:
        cfg.problems.append(f"{path}: [trace] takes one key, budget = N (stages of a whole-path trace)")
    elif budget is not None and (type(budget) is not int or budget < 1):
        cfg.problems.append(f"{path}: [trace] budget: expected a positive integer, got {budget!r}; ignored")
    else:
        cfg.budget = budget
    for other in sorted(set(data) - {"keymap", "trace"}):
        cfg.problems.append(f"{path}: unknown section or key {other!r}; ignored")
    return cfg
