"""Screen 4's tabs, one widget each: tensors, patterns, config & totals, shape checks (the speed of
light is :mod:`apxtui.tui.widgets.sol_panel`).  Each tab shows what the screen hands it."""

from apxtui.tui.widgets.checkpoint.checks import ChecksTab
from apxtui.tui.widgets.checkpoint.config import ConfigTab
from apxtui.tui.widgets.checkpoint.patterns import PatternsTab
from apxtui.tui.widgets.checkpoint.tensors import TensorsTab

__all__ = ["ChecksTab", "ConfigTab", "PatternsTab", "TensorsTab"]
