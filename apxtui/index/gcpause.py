"""Cyclic GC paused around bulk work that makes millions of small acyclic objects."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic GC inside: extraction, unpickling and macro expansion make millions of small
    acyclic objects, and the collector's passes over them cost more than the work itself."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
