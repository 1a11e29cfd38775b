"""A file's *interface*: what other files' linking can see of it.

Its definitions (names, kinds, containers, signatures, fields, cfg — not line numbers or
bodies), its imports, its PyO3 bindings and the calls of its registration blocks
(``TORCH_LIBRARY``, ``PYBIND11_MODULE``).  When only bodies changed, other files'
links into it are still right (up to renumbered node ids).  Also the plain, marshal-able
form the index stores it in.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from apxtui.facts import Binding, CallSite, Context, Definition, FileFacts, Import, Issue, Param

#: Definition.attrs keys the resolvers and linker read (everything else is body detail).
_IFACE_ATTRS = ("decl_only", "trait_decl", "trait_default", "bases", "extern_c", "host", "trait_qualname", "kind",
                "variant_types", "variant_fields", "variants", "type_path", "trait_path", "aliased", "supertraits",
                "nested_in", "methods", "return_assoc",
                # read from another file's definition: a picker's returns / chosen functions, TORCH_LIBRARY blocks
                "returns", "tail", "fn_values", "macro_like",
                # C++ explicit specialisations, matched to a call's template arguments (resolve_cuda)
                "specialization_args", "explicit_specialization", "template_param_decls")


_WRAPPED_RE = re.compile(r"^(?:Some|Ok)\((\w+)\)$")


def returned_fn_values(d: Definition) -> list[dict[str, Any]] | None:
    """The ``fn_values`` (``parse/rust.py``) the value a function returns takes — its tail variable's
    (``Ok(x)`` / ``Some(x)`` unwrapped) or its tail expression's: all of a function's ``fn_values``
    that another file's linking reads (a picker's, ``resolve_fnptr``); the others are its own body's."""
    tail = d.attrs.get("tail", "")
    fv = d.attrs.get("fn_values", {})
    w = _WRAPPED_RE.match(tail)
    name = w.group(1) if w else tail.strip()
    values: list[dict[str, Any]] | None = fv.get(name) or fv.get("<tail>")
    return values


def _iface_attr(d: Definition, k: str) -> str:
    return repr(returned_fn_values(d) if k == "fn_values" else d.attrs.get(k))


def _registration_calls(f: FileFacts) -> list[CallSite]:
    """The calls inside a file's registration blocks (``TORCH_LIBRARY``, ``PYBIND11_MODULE``: definitions
    marked ``macro_like``): other files' linking reads them (``resolve_frameworks.registrations``)."""
    blocks = {d.qualname for d in f.defs if d.attrs.get("macro_like")}
    return [c for c in f.calls if c.caller in blocks] if blocks else []


def _cited_line(d: Definition) -> int:
    """The line of a definition another file's link output cites (0: none): an operator trait's impl
    method, named in the ``how`` of calls on an ``a + b`` receiver (``resolve_rust._operator_type``)."""
    from apxtui.index.resolve_rust import OPERATOR_TRAITS  # lazy: start-up (the linker)

    return d.line if d.trait in OPERATOR_TRAITS else 0


def _def_key(d: Definition) -> tuple[Any, ...]:
    return (d.kind, d.name, d.qualname, d.container, d.trait, d.symbol, d.visibility, d.return_type,
            tuple((p.name, p.type) for p in d.params), tuple(d.template_params),
            tuple(sorted((k, tuple(v)) for k, v in d.generic_bounds.items())), tuple(d.cfg),
            tuple(c.text for c in d.pp), tuple(sorted(d.fields.items())),
            tuple((k, _iface_attr(d, k)) for k in _IFACE_ATTRS), _cited_line(d))


def interface_key(f: FileFacts) -> tuple[Any, ...]:
    """What other files' linking depends on; line numbers and bodies excluded."""
    return (
        f.module, f.lang,
        tuple(_def_key(d) for d in f.defs),
        tuple((i.kind, i.path, i.alias, i.scope, i.public, i.system, tuple(i.cfg)) for i in f.imports),
        tuple((b.kind, b.python_name, b.rust_qualname, b.python_class, b.rust_type, b.python_module,
               repr(sorted(b.attrs.items()))) for b in f.bindings),
        tuple((c.caller, c.kind, c.callee, c.receiver, tuple(c.args)) for c in _registration_calls(f)),
    )


def interface_facts(f: FileFacts) -> FileFacts:
    """A light copy of ``f`` holding only what symbol tables need (no locals; no calls but those
    of registration blocks)."""
    defs = [replace(d, locals={}, attrs={k: d.attrs[k] for k in _IFACE_ATTRS if k in d.attrs}) for d in f.defs]
    return replace(f, defs=defs, calls=_registration_calls(f), strings=[], env_reads=[])


def to_plain(f: FileFacts) -> dict[str, Any]:
    """Interface facts as marshal-able plain data (fast to store and load)."""
    defs = []
    for d in f.defs:
        dd = dict(vars(d))
        dd["params"] = [dict(vars(p)) for p in d.params]
        dd["pp"] = [dict(vars(c)) for c in d.pp]
        defs.append(dd)
    return {
        "file": f.file, "lang": f.lang, "sha": f.sha, "module": f.module, "lines": f.lines, "defs": defs,
        "imports": [dict(vars(i)) for i in f.imports], "bindings": [dict(vars(b)) for b in f.bindings],
        "issues": [dict(vars(i)) for i in f.issues],
        "calls": [_plain_call(c) for c in f.calls],
    }


def _plain_call(c: CallSite) -> dict[str, Any]:
    out = dict(vars(c))
    out["contexts"] = [dict(vars(x)) for x in c.contexts]
    return out


def _call(d: dict[str, Any]) -> CallSite:
    return CallSite(**{**d, "contexts": [Context(**x) for x in d["contexts"]]})


def from_plain(d: dict[str, Any]) -> FileFacts:
    defs = []
    for dd in d["defs"]:
        dd = dict(dd)
        dd["params"] = [Param(**p) for p in dd["params"]]
        dd["pp"] = [Context(**c) for c in dd["pp"]]
        defs.append(Definition(**dd))
    return FileFacts(file=d["file"], lang=d["lang"], sha=d["sha"], module=d["module"], lines=d["lines"], defs=defs,
                     imports=[Import(**i) for i in d["imports"]], bindings=[Binding(**b) for b in d["bindings"]],
                     issues=[Issue(**i) for i in d["issues"]], calls=[_call(c) for c in d.get("calls", ())])
