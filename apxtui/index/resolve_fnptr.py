"""Function pointers as dispatch points: a variable or a picker's result that holds one of a
known set of functions or kernels.

* Rust: ``let f = match dtype { DType::F16 => ffi::a_f16, DType::BF16 => ffi::a_bf16, _ => bail!() };
  f(...)`` — and ``let launcher = pick(dtype).unwrap(); launcher(...)`` where ``pick``'s value is
  such a variable (``Some(f)``) or such a ``match`` — becomes one edge per arm;
* C/C++: ``fp_t kernel = pick(...); kernel<<<...>>>(...)`` — one launch edge per ``return k<...>;``
  of ``pick`` (the returns a macro expansion in ``pick`` adds included).

Each arm is an :class:`Arm`: the target, the contexts that choose it (the call's own, then the
arm's: its ``match`` pattern, or the ``if``/``switch`` arms around the picker's ``return``), and
how it was resolved.  The contexts of one picker are grouped under ``fp:<site>/`` so each call
site is its own dispatch point; the arms are alternatives, not ambiguity: each target is named
in the code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from apxtui.facts import CallSite, Context, Definition
from apxtui.index.interface import returned_fn_values
from apxtui.index.resolve import EXACT, HEURISTIC, Resolved
from apxtui.index.resolve_cuda import CudaResolver
from apxtui.index.resolve_rust import RustResolver
from apxtui.index.rust_macros import body_calls, path_templates
from apxtui.index.tables import Tables

_PICK_RE = re.compile(r"^\s*([\w:]+)\s*(?:::<[^()]*>)?\(.*\)\s*(?:\.unwrap\(\)|\.expect\(.*\)|\?)?\s*$", re.S)
_SELF_FIELD_RE = re.compile(r"^\(\s*self\.(\w+)\s*\)$")
_INDEXED_RE = re.compile(r"^(\w+)\[[^\]]*\]$")
_PATH_ARG_RE = re.compile(r"(?:\w+::)*[a-z_]\w*")


@dataclass
class Arm:
    target: str
    contexts: list[Context]
    resolution: str
    how: str
    template_args: list[str] = field(default_factory=list)
    label: str = ""
    #: set when the arm's value names several candidates (an overload set, a name-only match): kept
    #: whole, so the linker labels it as any ambiguous call (one node past MAX_CANDIDATES, ``name_only``)
    resolved: Resolved | None = None


def _arm_of(res: Resolved, contexts: list[Context], how: str, label: str,
            template_args: list[str] | None = None) -> list[Arm]:
    """The arm(s) of one value: one Arm per target when the value resolves to one function,
    else one Arm carrying the whole ambiguous resolution (never a silent pick)."""
    targs = list(template_args or [])
    if len(res.targets) > 1 or res.name_only:
        whole = Resolved(list(res.targets), res.status, how, name_only=res.name_only)
        return [Arm("", contexts, res.status, how, targs, label, whole)]
    if res.targets:
        return [Arm(res.targets[0], contexts, res.status, how, targs, label)]
    return [] if res.drop else [Arm("", contexts, res.status, how, targs, label)]


class FnPointers:
    def __init__(self, t: Tables, rust: RustResolver, cuda: CudaResolver):
        self.t = t
        self.rust = rust
        self.cuda = cuda
        # only extern functions are followed when passed as arguments: other names are skipped unresolved
        self._ffi: dict[str, bool] = {}

    def is_ffi_name(self, name: str) -> bool:
        """Does an ``extern`` block declare a function of this name?  (Looked up by name: the
        tables may be the stored ones, read key by key.)"""
        hit = self._ffi.get(name)
        if hit is None:
            ids = self.t.by_name.get(("rust", name), ())
            hit = self._ffi[name] = any(self.t.defs[i].kind == "ffi_decl" for i in ids)
        return hit

    # -- Rust ----------------------------------------------------------------------------

    def rust_call(self, call: CallSite, caller: Definition | None,
                  file_defs: list[Definition] | None = None) -> list[Arm] | None:
        """Arms of a call through a local variable holding one of several functions (or through a
        struct field: ``(self.launcher)(..)``, with ``file_defs`` the definitions of the call's
        file), else None."""
        if caller is None or call.kind != "call" or len(call.path) != 1:
            return None
        if call.attrs.get("indirect"):
            table = _INDEXED_RE.match(call.callee)
            if table:
                return self._rust_table(call, caller, table.group(1))
            return self._rust_field(call, caller, file_defs or [])
        var = call.path[0]
        values = caller.attrs.get("fn_values", {}).get(var)
        if values:  # the last `let` of the variable before the call (shadowing)
            last = max((v.get("at", 0) for v in values if v.get("at", 0) <= call.line), default=None)
            values = [v for v in values if v.get("at", 0) == last] if last is not None else None
        where = caller
        via = ""
        if values is None:
            picked = self._rust_picker(caller, var, call)
            if picked is None:
                return None
            where, values, via = picked
        return self._value_arms(call, values, where, via) or None

    def _value_arms(self, call: CallSite, values: list[dict[str, Any]], where: Definition, via: str,
                    cap: str = "") -> list[Arm]:
        """One arm per function value (``cap``: the strongest resolution an arm may have)."""
        arms: list[Arm] = []
        for i, v in enumerate(values):
            segs = v["path"].split("::")
            fake = CallSite("call", v["path"], segs, where.qualname, where.file, v["line"], 0)
            res = self.rust.resolve(fake, where)
            tag = f"fp:{call.line}:{call.col}/{v['group']}"
            kind = v.get("kind", "match_arm")
            ctx = Context(kind, v["arm"], v["line"], tag, i, subject=v["subject"], negated=list(v.get("negated", [])))
            construct = {"match_arm": f"match {v['subject']}", "switch_case": f"table {v['subject']}"}.get(kind, "if")
            how = f"function value in arm `{v['arm']}` of `{construct}` at {where.file}:{v['line']}" + via
            if cap == HEURISTIC and res.status == EXACT:
                res = replace(res, status=HEURISTIC)
            arms += _arm_of(res, [*call.contexts, ctx], f"{how} ({res.how})",
                            v["arm"] if res.targets else v["path"])
        return arms

    def _rust_table(self, call: CallSite, caller: Definition, var: str) -> list[Arm] | None:
        """``let table = [ffi::a, ffi::b]; table[i](..)``: one arm per entry (every entry a path)."""
        value = ""
        for a in caller.attrs.get("assigns", ()):
            if a.get("var") == var and a.get("line", 0) <= call.line:
                value, at = a.get("value", ""), a.get("line", 0)
        m = re.fullmatch(r"\[(.*)\]", value.strip(), re.S)
        items = [x.strip() for x in m.group(1).split(",") if x.strip()] if m else []
        if not items or not all(_PATH_ARG_RE.fullmatch(x) for x in items):
            return None
        values = [{"path": x, "arm": f"{var}[{i}]", "subject": f"{var}[…]", "line": at, "group": f"{at}:t",
                   "kind": "switch_case"} for i, x in enumerate(items)]
        return self._value_arms(call, values, caller, f", an entry of the table `{var}`") or None

    def _rust_field(self, call: CallSite, caller: Definition, file_defs: list[Definition]) -> list[Arm] | None:
        """``(self.launcher)(..)`` in a method of ``S``: the values ``launcher`` is given by the
        struct literals ``S { launcher: pick(..), .. }`` of the file, each picker's arms.  Every
        literal is in view when ``S`` is private to this file (no ``mod x;`` child elsewhere):
        the arms keep their resolution; else they are heuristic (another file may set the field)."""
        m = _SELF_FIELD_RE.match(call.callee)
        if not m or not caller.container:
            return None
        field_name, ty = m.group(1), caller.container
        seen: dict[str, list[str]] = {}
        found: list[tuple[Definition, list[dict[str, Any]], str]] = []
        for d in file_defs:
            for fv in d.attrs.get("field_values", ()):
                if fv.get("struct") not in (ty, "Self") or fv.get("field") != field_name:
                    continue
                if fv["struct"] == "Self" and d.container != ty:
                    continue
                picked = self._picked(fv.get("value", ""), d, fv.get("line", 0))
                if picked is None:
                    return None  # a value that is not a picker's: not all values known
                site = f"{d.file}:{fv.get('line', 0)}"
                if picked[0].qualname in seen:
                    seen[picked[0].qualname].append(site)
                    continue
                seen[picked[0].qualname] = [site]
                found.append(picked)
        if not found:
            return None
        f = self.t.file_of.get(call.file)
        own = [d for d in file_defs if d.kind == "rust_type" and d.name == ty]
        complete = len(own) == 1 and not own[0].visibility and not (
            f is not None and any(i.kind == "mod" for i in f.imports))
        arms: list[Arm] = []
        for picker, values, via in found:
            sites = ", ".join(seen[picker.qualname])
            arms += self._value_arms(call, values, picker,
                                     f"{via}, stored in field `{field_name}` of {ty} at {sites}"
                                     + ("" if complete else " (the field may be set elsewhere: heuristic)"),
                                     "" if complete else HEURISTIC)
        return arms or None

    def _rust_picker(self, caller: Definition, var: str,
                     call: CallSite) -> tuple[Definition, list[dict[str, Any]], str] | None:
        """``let var = pick(..).unwrap();`` with ``pick`` returning one of its ``fn_values``."""
        value = ""
        for a in caller.attrs.get("assigns", ()):
            if a.get("var") == var and a.get("line", 0) <= call.line:
                value = a.get("value", "")
        return self._picked(value, caller, call.line)

    def _picked(self, value: str, caller: Definition,
                at: int) -> tuple[Definition, list[dict[str, Any]], str] | None:
        """``pick(..)`` / ``pick(..).expect(..)`` (in ``caller``, line ``at``): the picker and the
        ``fn_values`` its returned value takes, else None."""
        m = _PICK_RE.match(value)
        if not m:
            return None
        fake = CallSite("call", m.group(1), m.group(1).split("::"), caller.qualname, caller.file, at, 0)
        res = self.rust.resolve(fake, caller)
        if len(res.targets) != 1:
            return None
        picker = self.t.defs.get(res.targets[0])
        if picker is None:
            return None
        values = returned_fn_values(picker)
        if not values:
            return None
        return picker, values, f", returned by {picker.qualname} ({picker.file}:{picker.line})"

    def rust_passed(self, call: CallSite, caller: Definition | None) -> list[Arm]:
        """Extern functions passed as arguments (``reduce::<f16>(args, ffi::launch_f16, "name")``): the
        callee calls them through its parameter, so the caller reaches them (heuristic: where, in
        the callee, is not followed)."""
        out = []
        prefixes: dict[int, list[str]] = {}
        if call.kind == "macro":  # `launch!(F32, rms_f32)` with `ffi::$ffi_fn(..)` in the macro's rule
            for text in self._local_macro(call, caller):
                for prefix, i in path_templates(text):
                    prefixes.setdefault(i, []).append(prefix)
                out += self._macro_body(call, caller, text)
        for i, a in enumerate(call.args):
            a = a.strip()
            if not _PATH_ARG_RE.fullmatch(a) or not self.is_ffi_name(a.rsplit("::", 1)[-1]):
                continue
            for p in prefixes.get(i, []):
                fake = CallSite("call", p + a, (p + a).split("::"), call.caller, call.file, call.line, call.col)
                res = self.rust.resolve(fake, caller)
                if len(res.targets) == 1 and self.t.defs[res.targets[0]].kind == "ffi_decl":
                    a = p + a
                    break
            if caller is not None and (a in caller.locals or any(p.name == a for p in caller.params)):
                continue
            fake = CallSite("call", a, a.split("::"), call.caller, call.file, call.line, call.col)
            res = self.rust.resolve(fake, caller)
            for tgt in res.targets if len(res.targets) == 1 else []:
                if self.t.defs[tgt].kind == "ffi_decl":
                    what = "macro" if call.kind == "macro" else "function"
                    out.append(Arm(tgt, list(call.contexts), "heuristic",
                                   f"passed as argument {i + 1} of {what} {call.callee}, which calls it ({res.how})",
                                   label=a))
        return out

    def _macro_body(self, call: CallSite, caller: Definition | None, text: str) -> list[Arm]:
        """Extern functions a local macro's rules call by a literal path (``ffi::launch_bf16(..)``,
        no ``$`` in it): the invocation calls them.  Exact when the macro has one rule and the path
        resolves to one declaration (the expansion is that rule); heuristic when only some rules
        call it (which rule the invocation matches is not worked out)."""
        calls, n_rules = body_calls(text)
        out = []
        name = call.callee.split("::")[-1]
        for path, n in calls.items():
            if not self.is_ffi_name(path.rsplit("::", 1)[-1]):
                continue
            fake = CallSite("call", path, path.split("::"), call.caller, call.file, call.line, call.col)
            res = self.rust.resolve(fake, caller)
            if len(res.targets) != 1 or self.t.defs[res.targets[0]].kind != "ffi_decl":
                continue
            whole = n == n_rules == 1 and res.status == EXACT
            rules = "its rule" if n_rules == 1 else f"{n} of its {n_rules} rules"
            out.append(Arm(res.targets[0], list(call.contexts), EXACT if whole else HEURISTIC,
                           f"called as {path}(..) in {rules}, expanded by {name} here ({res.how})", label=path))
        return out

    def _local_macro(self, call: CallSite, caller: Definition | None) -> list[str]:
        """Texts of the ``macro_rules!`` the macro call names: the caller's own, else the file's."""
        f = self.t.file_of.get(call.file)
        name = call.callee.split("::")[-1].rstrip("!")
        defs = [i for i in (f.imports if f is not None else []) if i.kind == "macro_rules" and i.alias == name]
        mine = [i.path for i in defs if caller is not None and i.scope == caller.qualname]
        return mine or [i.path for i in defs]

    # -- C/C++ ---------------------------------------------------------------------------

    def cuda_launch(self, call: CallSite, caller: Definition | None) -> list[Arm] | None:
        """Arms of ``k<<<…>>>`` where ``k`` holds the result of a picker function, else None."""
        if call.kind != "launch" or call.callee:
            return None
        cands = call.attrs.get("kernel_candidates")
        if cands:
            return self._cuda_values(call, caller, cands)
        picker_name = call.attrs.get("picked_by")
        if not picker_name:
            return None
        fake = CallSite("call", picker_name, picker_name.split("::"), call.caller, call.file, call.line, call.col)
        res = self.cuda.resolve(fake, caller, ("host_fn", "abi_fn", "device_fn"))
        if len(res.targets) != 1:
            return None
        picker = self.t.defs[res.targets[0]]
        arms: list[Arm] = []
        for i, ret in enumerate(picker.attrs.get("returns", ())):
            k = CallSite("launch", ret["value"], ret["value"].split("::"), picker.qualname, picker.file, ret["line"], 0,
                         template_args=list(ret.get("template_args", [])))
            kres = self.cuda.resolve(k, picker, ("kernel",))
            ctxs = [Context(**c) for c in ret.get("contexts", [])]
            tag = f"fp:{call.line}:{call.col}/"
            ctxs = [replace(c, group=tag + c.group, negated=list(c.negated), env=list(c.env)) for c in ctxs]
            if not ctxs:  # a return outside any branch: its own arm, labelled by the return
                ctxs = [Context("switch_case", f"return {ret['value']}", ret["line"], tag + "ret", i,
                                subject=picker.name)]
            how = f"returned by {picker.qualname} at {picker.file}:{ret['line']}" + (
                f" (macro {ret['macro']})" if ret.get("macro") else "")
            arms += _arm_of(kres, [*call.contexts, *ctxs], f"{how}; {kres.how}", ret["value"],
                            ret.get("template_args", []))
        return arms or None


    def _cuda_values(self, call: CallSite, caller: Definition | None, cands: list[dict[str, Any]]) -> list[Arm]:
        """``auto k = a_kernel; if (bit == 8) k = b_kernel; k<<<…>>>``: one arm per value assigned."""
        var = call.attrs.get("kernel_var", "kernel")
        arms = []
        for i, c in enumerate(cands):
            k = CallSite("launch", c["callee"], c["callee"].split("::"), call.caller, call.file, call.line, call.col,
                         template_args=list(c.get("template_args", [])))
            res = self.cuda.resolve(k, caller, ("kernel",))
            ctx = Context("switch_case", f"{var} = {c['callee']}", call.line, f"fv:{call.line}:{call.col}", i,
                          subject=var)
            arms += _arm_of(res, [*call.contexts, ctx],
                            f"a value assigned to `{var}` in {call.caller or call.file}; {res.how}", c["callee"],
                            c.get("template_args", []))
        return arms


def arm_call(call: CallSite, arm: Arm, i: int) -> CallSite:
    """The call site as one arm of its dispatch: its contexts, template args and own site tag."""
    attrs = {**call.attrs, "site_tag": f"arm{i}", "fn_pointer": arm.label}
    return replace(call, callee=call.callee or arm.label, path=call.path or arm.label.split("::"),
                   contexts=arm.contexts, template_args=arm.template_args or list(call.template_args), attrs=attrs)


def arm_resolved(arm: Arm) -> Resolved:
    if arm.resolved is not None:
        return arm.resolved
    if not arm.target:
        return Resolved(status="unresolved", how=arm.how, external=arm.label, external_kind="external")
    return Resolved([arm.target], arm.resolution if arm.resolution != "unresolved" else EXACT, arm.how)
