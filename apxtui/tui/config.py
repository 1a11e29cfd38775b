"""What the explorer is opened on: a typed, already validated configuration (no argparse here;
``apxtui.commands.tui`` builds it from the command line)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from apxtui.profile.model import Profile


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
