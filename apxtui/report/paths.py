"""Where reports go: ``CHECKOUT/devlocal/<entry>/reports/<timestamp>.md`` or an export dir."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path


def entry_slug(qualname: str) -> str:
    """A file-name-safe form of an entry's qualified name (``Pi05Policy.infer`` → ``Pi05Policy.infer``)."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", qualname.replace("::", ".")).strip("._")
    return slug[:120] or "entry"


def default_report_path(checkout: Path, entry: str, export_dir: str | Path | None = None,
                        now: datetime | None = None) -> Path:
    """The report file for ``entry``: under ``export_dir`` when given, else the checkout's devlocal/."""
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
    base = Path(export_dir) if export_dir else Path(checkout) / "devlocal" / entry_slug(entry) / "reports"
    return base / f"{stamp}.md"


def unique_path(path: Path) -> Path:
    """``path``, or ``path`` with ``-2``, ``-3``… appended when a file already exists there."""
    if not path.exists():
        return path
    n = 2
    while (cand := path.with_name(f"{path.stem}-{n}{path.suffix}")).exists():
        n += 1
    return cand
