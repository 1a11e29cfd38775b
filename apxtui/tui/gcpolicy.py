"""The cyclic garbage collector in the explorer's process, kept out of the way of keypresses.

A full collection walks every tracked object.  With the index, the app and a call tree of 7,000
rows in memory it took 100-350 ms on ApxInf, and one landed on about every twelfth ``j``: it was
the p95 of a keypress.  What exists once the index is loaded (the index, the session, the screens)
lives as long as the app, so it is frozen: later collections no longer walk it.  The youngest
generation is collected every :data:`YOUNG` allocations instead of 700, so the short-lived objects
of a repaint rarely start a pass.  Only the explorer's own process does this (:func:`apxtui.tui.app.run_app`),
never a test process, where frozen objects would outlive each app.
"""

from __future__ import annotations

import gc

#: Allocations (net, of tracked objects) between two collections of the youngest generation.
YOUNG = 10_000


def keep_out_of_the_way() -> None:
    """Freeze what is alive now and collect the youngest generation less often (once, after loading)."""
    gc.freeze()
    _young, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG, middle, old)
