"""What a name string in loader code claims: a tensor it needs, may read, or only mentions.

A name the code builds is a claim on the checkpoint only when it reaches a lookup.  For the
string of one :class:`~apxtui.checkpoint.patterns.NamePattern` source, :func:`Claims.of` looks at
the call that consumes it:

* ``expect_shape(&format!("{name}.bias"), ..)`` passes it to a parameter that is only used in
  messages (``Error::Other(format!("{name}: …"))``): an error message, not a tensor name;
* ``has_bias.then(|| take(.., &format!("{prefix}.bias")))`` or a call under ``if``/``match``:
  a conditional claim; when the condition is a parameter the callers bind to ``true``/``false``
  (``take_linear(.., true)``) each caller decides it (see ``patterns.Resolver.expand``);
* ``take_any(.., &[format!(a), format!(b)])``: alternatives, one of which is needed, when the
  callee looks them up one at a time until one is found (a conditional lookup in a loop, or a
  name that says so: ``any``/``first``/``alias``/``fallback``).

Heuristic, from the extracted facts (and one source line per alternatives callee), and every
claim says how it was classified.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from apxtui.vocab import node_id

REQUIRED, OPTIONAL, ALTERNATIVE, MESSAGE = "required", "optional", "alternative", "message"
_MESSAGE_CALL = re.compile(r"(^|::|\.)(\w*Error\w*|Err|\w*Exception|anyhow|bail|panic|print|println|eprint|eprintln|"
                           r"log|warn|warning|info|debug|error|trace|msg|raise)(::|\.|$)")
_CONDITIONAL_COMBINATOR = ("then", "then_some")
_ANY_HINT = re.compile(r"any|first|alias|fallback|either|one_of|try_names|lookup_one", re.I)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
_ARRAY = re.compile(r"^\s*&?\s*(?:vec!\s*)?\[|^\s*[\[(]")
MAX_DEPTH = 3


@dataclass
class Claim:
    kind: str = REQUIRED
    condition: str = ""  # the condition text of an optional claim
    cond_param: str = ""  # a parameter of the string's function the condition tests (callers decide it)
    cond_negated: bool = False
    group: str = ""  # alternatives: the call site that lists them
    how: str = ""


def _no_strings(text: str) -> str:
    return _STRING.sub('""', text or "")


def _mentions(text: str, name: str) -> bool:
    """``name`` as an identifier outside string literals, or as a ``{name}`` placeholder of a template
    that could be a name (``"{name}.weight"``; ``"{name}: bad shape"`` has spaces: a message)."""
    if re.search(rf"(?<![\w.]){re.escape(name)}\b", _no_strings(text)) is not None:
        return True
    ph = re.compile(rf"\{{{re.escape(name)}[}}:!.\[]")
    return any(ph.search(lit) and not re.search(r"\s", lit) for lit in _STRING.findall(text or ""))


class Claims:
    """Claim classification over one checkout's facts (uses the patterns module's context)."""

    def __init__(self, ctx: Any):
        self.ctx = ctx
        self._roles: dict[tuple[str, str], str] = {}

    # -- the consuming call -------------------------------------------------------------------

    def consumer(self, path: str, s: dict[str, Any]) -> tuple[Any, int] | None:
        """The call whose argument holds the string (innermost, nearest line), and the argument index."""
        raw = s["text"]
        best = None
        for (f, ln), calls in self.ctx.calls_at.items():
            if f != path or not (s["line"] - 40 <= ln <= s["line"]):
                continue
            for c in calls:
                if c.caller != s.get("caller", ""):
                    continue
                for i, a in enumerate(c.args):
                    if f'"{raw}"' in a or f"'{raw}'" in a:
                        rank = (ln, -len(a))
                        if best is None or rank > best[0]:
                            best = (rank, c, i)
        return (best[1], best[2]) if best else None

    def of(self, path: str, s: dict[str, Any]) -> Claim:
        got = self.consumer(path, s)
        if got is None:
            return Claim()
        call, k = got
        name = call.path[-1] if call.path else call.callee
        callee = self._callee(call)
        arg = call.args[k]
        if callee is not None and not _ARRAY.match(arg) and name not in _CONDITIONAL_COMBINATOR:
            params = [p.name for p in callee.params if p.name != "self"]
            if k < len(params) and self.param_role(callee, params[k]) == MESSAGE:
                return Claim(MESSAGE, how=f"passed to `{params[k]}` of {name}, which uses it only in messages "
                                         f"or not at all ({call.file}:{call.line})")
        if _ARRAY.match(arg) and callee is not None and len(_STRING.findall(arg)) >= 2:
            any_of = self._looks_up_one(callee)
            if any_of:
                return Claim(ALTERNATIVE, group=f"{call.file}:{call.line}",
                             how=f"one of the names listed at {call.file}:{call.line} ({name} {any_of})")
        return self._conditional(path, s, call)

    def _conditional(self, path: str, s: dict[str, Any], call: Any) -> Claim:
        """Optional when the consuming call runs under a condition of its function."""
        for c in self.ctx.calls_at.get((path, call.line), []) + [
                x for (f, ln), xs in self.ctx.calls_at.items() if f == path and call.line - 3 <= ln < call.line
                for x in xs]:
            name = c.path[-1] if c.path else c.callee
            if c.caller == call.caller and name in _CONDITIONAL_COMBINATOR and c.receiver and \
                    any(s["text"] in a for a in c.args):
                cond = " ".join(c.receiver.split())
                return self._cond_claim(call.caller, cond, f"`{cond}.{name}(|| …)` at {c.file}:{c.line}")
        for ctxt in call.contexts:
            if ctxt.kind in ("if", "else", "match_arm", "switch_case", "except"):
                cond = ctxt.text if ctxt.kind != "match_arm" else f"{ctxt.subject} matches {ctxt.text}"
                return self._cond_claim(call.caller, cond, f"under `{cond}` at {call.file}:{ctxt.line}")
        return Claim()

    def _cond_claim(self, fn: str, cond: str, how: str) -> Claim:
        d = self.ctx.defs.get(fn)
        bare = cond.strip()
        neg = bare.startswith("!")
        bare = bare.lstrip("!").strip()
        param = bare if d is not None and bare in [p.name for p in d.params] else ""
        return Claim(OPTIONAL, condition=cond, cond_param=param, cond_negated=neg, how=f"read only {how}")

    # -- callees --------------------------------------------------------------------------------

    def _callee(self, call: Any) -> Any:
        """The project function a call reaches: a resolved (not ambiguous) graph edge; for a plain
        path call without a graph, the only definition of that name (in the caller's file first)."""
        g = self.ctx.graph
        name = call.path[-1] if call.path else call.callee
        caller = self.ctx.defs.get(call.caller)
        if g is not None and caller is not None:
            node = node_id(caller.qualname, caller.file, caller.line)
            if node in g:
                for _, v, e in g.out_edges(node, data=True):
                    if e.get("line") == call.line and g.nodes[v].get("name") == name \
                            and e.get("resolution") in ("exact", "heuristic"):
                        d = self.ctx.defs.get(g.nodes[v].get("qualname", ""))
                        if d is not None:
                            return d
                return None
        if call.kind != "call":
            return None  # a method call by name alone is no evidence of the callee
        cands = self.ctx.defs_by_name.get(name, [])
        same = [d for d in cands if caller is not None and d.file == caller.file]
        return same[0] if len(same) == 1 else (cands[0] if len(cands) == 1 else None)

    def _calls_in(self, d: Any) -> list[Any]:
        return [c for (f, ln), cs in self.ctx.calls_at.items() if f == d.file and d.line <= ln <= d.end_line
                for c in cs if c.caller == d.qualname]

    def param_role(self, d: Any, param: str, depth: int = 0) -> str:
        """``message`` when ``param`` of ``d`` is only used in messages (``lookup`` otherwise)."""
        key = (d.qualname, param)
        if key in self._roles:
            return self._roles[key]
        self._roles[key] = "lookup"  # recursion guard: assume the safe answer
        names = {param}
        calls = self._calls_in(d)
        for c in calls:  # `for name in names` makes `name` an alias
            for ctxt in c.contexts:
                m = (
                    re.match(r"for\s+\(?\s*(?:&\s*)?(\w+)[\w\s,()]*\s+in\s+(.+)$", ctxt.text)
                    if ctxt.kind == "loop"
                    else None
                )
                if m and _mentions(m.group(2), param):
                    names.add(m.group(1))
        role = MESSAGE
        if any(_mentions(a.get("value", ""), n) for a in d.attrs.get("assigns", []) for n in names):
            role = "lookup"  # stored or indexed (`sd[name]`): not visible as a call, so a lookup
        for c in calls:
            if role != MESSAGE:
                break
            for i, a in enumerate([c.receiver, *c.args]):
                if not any(_mentions(a, n) for n in names):
                    continue
                if c.kind == "macro" or _MESSAGE_CALL.search(c.callee) or any(
                        k.kind == "macro" for k in c.contexts):
                    continue
                sub = self._callee(c) if i > 0 and depth < MAX_DEPTH else None
                if sub is not None and sub.qualname != d.qualname:
                    sp = [p.name for p in sub.params if p.name != "self"]
                    if i - 1 < len(sp) and self.param_role(sub, sp[i - 1], depth + 1) == MESSAGE:
                        continue
                role = "lookup"
                break
        self._roles[key] = role
        return role

    def _looks_up_one(self, d: Any) -> str:
        """How ``d`` reads a list of names one at a time until one is found ('' when it does not)."""
        if _ANY_HINT.search(d.name):
            return f"reads the first it finds (named `{d.name}`)"
        for c in self._calls_in(d):
            if any(k.kind == "loop" for k in c.contexts):
                line = self.ctx.source_line(c.file, c.line).strip()
                if re.match(r"(if\s+let\s+Some|if\s*\(|if\s+\w+\s+in\b|match\b)", line):
                    return f"returns on the first name found (conditional lookup in a loop at {c.file}:{c.line})"
        return ""
