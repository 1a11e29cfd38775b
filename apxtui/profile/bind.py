"""A profile bound to an indexed checkout: evaluated against its configuration space."""

from __future__ import annotations

from typing import TYPE_CHECKING

from apxtui.profile.model import Profile, Resolved
from apxtui.profile.space import ConfigSpace, discover

if TYPE_CHECKING:
    from apxtui.facts import Definition
    from apxtui.index.build import Index


class IndexDefs:
    """``node id → Definition`` looked up on demand (what ``Resolved.defs`` needs: #else chains, __host__)."""

    def __init__(self, index: Index):
        self.index = index

    def get(self, node: str) -> Definition | None:
        return self.index.definition(node)

    def __bool__(self) -> bool:
        return True


def resolve(profile: Profile | None, index: Index, space: ConfigSpace | None = None) -> Resolved | None:
    """The profile bound to the index's checkout (None stays None); ``space`` when already discovered."""
    if profile is None:
        return None
    rp = Resolved(profile, space if space is not None else discover(index.root, index.facts))
    rp.defs = IndexDefs(index)
    return rp
