"""The headless layer never imports Textual (the CLI and reports must work without the UI)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

HEADLESS = ["apxtui.cli", "apxtui.index", "apxtui.index.build", "apxtui.trace", "apxtui.report",
            "apxtui.report.model", "apxtui.report.markdown", "apxtui.report.paths", "apxtui.commands.trace",
            "apxtui.tui.entries", "apxtui.tui.session", "apxtui.tui.details", "apxtui.tui.text"]


def test_headless_modules_do_not_import_textual():
    code = ("import sys\n"
            f"for m in {HEADLESS!r}: __import__(m)\n"
            "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
            "print(','.join(bad))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"textual imported by the headless layer: {out.stdout.strip()}"


def test_the_ui_does_import_textual():
    """Guard against a vacuous pass: the same probe sees Textual when the UI is imported."""
    code = "import sys, apxtui.tui.app\nprint('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
