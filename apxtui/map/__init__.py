"""The execution map: one row per model operation, in execution order, per phase.

Between the trace (:mod:`apxtui.trace`) and the views (report, CLI, explorer).  API::

    from apxtui.map import build_map
    m = build_map(index, entry_node, select=[...], choices={dispatch_key: arm_index},
                  profile=resolved_profile, loop_bind=None, operators=None)

``m`` is an :class:`ExecutionMap`: ``m.phases`` → :class:`PhaseTable` (``phase``: a
:class:`apxtui.vocab.Phase`, ``frequency``, ``rows``, ``totals``), steady state first (EAGER, then
CAPTURED — recorded once per graph key and replayed per request —, PREPARE — first call / once per
graph key —, LOAD).  A :class:`Row` is the call from model code into the operator layer
(:mod:`apxtui.map.operators` has the rule): ``op`` as written at the call site, ``site`` (path:line),
``adapter`` (the extern "C" functions reached, each an :class:`Adapter`: ``name``, ``definition``, the
``site`` and ``resolution`` of the edge that reached it), ``work`` (a list of :class:`Call` — ``kind``
``CallClass.DEVICE`` for a kernel launch or ``CallClass.LIBRARY`` for a library compute call,
``name``, ``dtypes``, ``site``, ``repeat`` loops inside the operator, ``guard`` conditions — or
:class:`Choice` — mutually exclusive :class:`Alternative` s, each with its ``condition``, ``dispatch``
key and ``arm`` index, so ``[``/``]`` can change it), ``other`` (setup / memory / transfer / graph
calls, apart from work), ``repeat`` (every loop from the entry, numeric or symbolic, with
``last_differs``), ``condition`` (model-level branch arms it runs under), ``context`` (the enclosing
model-level calls, for folding), ``counts`` (static device launches and library calls of one
execution of the row, a range where alternatives differ) and ``key``.

Every ``key`` is the chain of :func:`apxtui.trace.stage_key` (``node@site``) from the entry to the
stage: the explorer follows it to the call-tree row, and :func:`path_to` turns it into the report's
``Path:``.  ``m.choices`` lists every dispatch point whose arm was chosen (by the explorer's
``[``/``]`` or ``--select``), ``m.cuts`` every subtree not followed (recursion), ``m.lead`` the main
implementation choices.  ``m.to_dict()`` is the trace JSON's ``execution_map``.

Call classes come from ``queries/calls.toml`` (:mod:`apxtui.analysis.calls`), overridable like the
tree-sitter queries.
"""

from apxtui.analysis.calls import CallRules, call_rules
from apxtui.map.build import build_map
from apxtui.map.model import (
    Adapter,
    Alternative,
    Call,
    Choice,
    ChoiceMade,
    Condition,
    Counts,
    Cut,
    ExecutionMap,
    Frame,
    OtherCall,
    PhaseTable,
    Repeat,
    Row,
    Site,
    Work,
    iter_calls,
    work_text,
)
from apxtui.map.path import PathStep, path_to

__all__ = [
    "Adapter", "Alternative", "Call", "CallRules", "Choice", "ChoiceMade", "Condition", "Counts", "Cut", "ExecutionMap",
    "Frame", "OtherCall", "PathStep", "PhaseTable", "Repeat", "Row", "Site", "Work", "build_map", "call_rules",
    "iter_calls", "path_to", "work_text",
]
