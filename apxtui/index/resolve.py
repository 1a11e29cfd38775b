"""The answer of a resolver, shared by the per-language resolvers."""

from __future__ import annotations

from dataclasses import dataclass, field

from apxtui.vocab import Resolution

# Plain ``str`` values: they are stored on graph edges, which the warm-start snapshot marshals.
EXACT, HEURISTIC, AMBIGUOUS, UNRESOLVED = (Resolution.EXACT.value, Resolution.HEURISTIC.value,
                                         Resolution.AMBIGUOUS.value, Resolution.UNRESOLVED.value)


@dataclass
class Resolved:
    """Targets of one call site and how they were established.

    ``targets`` empty + status ``unresolved``: an external callee (``external`` names
    it, ``external_kind`` classifies it) — or, with ``drop=True``, a std/prelude call
    too common to be worth a node (counted, not drawn).  ``name_only`` marks candidates found
    by the callee's name alone: the trace shows them as a choice it does not expand until chosen.
    """

    targets: list[str] = field(default_factory=list)
    status: str = UNRESOLVED
    how: str = ""  # one-line explanation of the rule that resolved it
    external: str = ""
    external_kind: str = ""
    drop: bool = False
    name_only: bool = False  # linked by name alone (receiver type unknown): a choice, not a path

    @classmethod
    def of(cls, targets: list[str], how: str, unique: str = EXACT) -> Resolved:
        if not targets:
            return cls(status=UNRESOLVED, how=how)
        if len(targets) == 1:
            return cls(targets, unique, how)
        return cls(sorted(set(targets)), AMBIGUOUS, how)
