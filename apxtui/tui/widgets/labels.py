"""Rich ``Text`` labels for tree items: built from parts, never parsed as markup.

Colours are role words (``ct-kernel``) that the widgets map to theme variables (see ``roles.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from apxtui.textsafe import one_line
from apxtui.trace import Arm, Dispatch, Stage
from apxtui.vocab import DEVICE_KINDS

KIND_TAG = {
    "python_fn": ("Py", "ct-py"), "python_class": ("Py", "ct-py"), "pyo3_binding": ("PyO3", "ct-pyo3"),
    "cpp_binding": ("C++→Py", "ct-pyo3"),
    "rust_fn": ("Rust", "ct-rust"), "ffi_decl": ("FFI", "ct-ffi"), "abi_fn": ("ABI", "ct-ffi"),
    "host_fn": ("host", "ct-host"), "device_fn": ("dev", "ct-host"), "kernel": ("kernel", "bold ct-kernel"),
    "vendor_api": ("lib", "bold ct-lib"), "external": ("ext", "ct-ext"),
}


def tag(kind: str) -> Text:
    label, style = KIND_TAG.get(kind, (kind, ""))
    return Text(label, style=style)


def _loops(loops: Sequence[str]) -> str:
    if not loops:
        return ""
    return " ×" + " ×".join(one_line(x, 28) for x in loops)


def stage_label(st: Stage) -> Text:
    v = st.via
    t = Text()
    t.append_text(tag(st.kind))
    t.append(" ")
    name = st.name if st.kind not in ("ffi_decl",) else st.name
    t.append(one_line(name or st.qualname, 80), style="bold" if st.kind in DEVICE_KINDS else "")
    if v is not None and v.template_args:
        t.append("<" + one_line(", ".join(v.template_args), 40) + ">", style="dim")
    res = v.resolution if v is not None else ""
    if res == "unresolved":
        t.append("  unresolved", style="ct-unresolved")
    elif res == "ambiguous":
        t.append("  ambiguous", style="ct-ambiguous")
    elif res == "heuristic":
        t.append("  ~", style="dim")
    loops = _loops(v.loops if v is not None else ())
    if loops:
        t.append(loops, style="bold ct-loop")
    if st.cut == "recursion":
        t.append("  ↻ shown above", style="dim")
    elif st.cut:
        t.append(f"  … {st.cut} limit", style="dim")
    return t


def dispatch_label(d: Dispatch) -> Text:
    t = Text()
    if d.construct == "candidates":
        t.append("◆ ambiguous ", style="bold ct-ambiguous")
        t.append(one_line(d.subject, 60))
        t.append(f"  {len(d.arms)} candidates", style="dim")
        return t
    t.append(f"◆ {d.construct}", style="bold ct-dispatch")
    if d.subject:
        t.append(" " + one_line(d.subject, 60))
    t.append(f"  {len(d.arms)} arms", style="dim")
    return t


def arm_label(a: Arm) -> Text:
    mark, style = {True: ("● ", "bold ct-chosen"), False: ("○ ", "dim"), None: ("◦ ", "")}[a.selected]
    t = Text(mark, style=style)
    t.append(one_line(a.label, 90), style=style if a.selected is not None else "")
    if a.env:
        t.append(f"  env {', '.join(a.env)}", style="italic")
    return t
