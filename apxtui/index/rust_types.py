"""Rust type references: type text as written → the type it names, through the module's imports.

A *type reference* is a short string (hashable, cheap to memoise):

* ``T:<qualname>`` — a type defined in the checkout (``T:candle_nn::linear::Linear``);
* ``X:<path>`` — a type from outside the checkout (std, a crates.io dependency; ``X:?`` when
  only that is known, e.g. the result of a method of an external type);
* ``G:<name>`` — a generic parameter of the enclosing item (its bounds decide);
* ``D:<trait ref>`` — a trait object or ``impl Trait`` (``D:T:crate::vla::VlaRuntime``);
* ``U:<ref>|<ref>`` — one of several types (cfg alternatives re-exported under one name);
* ``P:<ref>;<ref>`` — a tuple (its slots type ``let (a, b) = …``);
* ``""`` — unknown.

A trailing ``~`` marks a reference found only by a type's short name (no import or path
led to it): the caller labels what it derives from it ``heuristic``, never ``exact``.

Wrappers that hand out their content (``&``, ``Box``, ``Arc``, ``Rc``, ``RefCell``, ``Mutex``,
``Option``, ``Result``'s ``Ok`` type …) are peeled: a method called on them is the content's
(``?``, ``unwrap`` and ``borrow`` are peeled from expressions the same way).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from apxtui.facts import Definition

#: std wrappers whose methods a receiver of the wrapped type reaches (auto-deref, `?`, unwrap).
WRAPPERS = frozenset({"Box", "Arc", "Rc", "RefCell", "Mutex", "RwLock", "Cell", "Option", "Pin", "ManuallyDrop",
                      "MutexGuard", "Ref", "RefMut", "Result", "Weak", "OnceCell", "OnceLock", "LazyLock", "Cow",
                      "RwLockReadGuard", "RwLockWriteGuard"})
#: std / prelude types: a bare name that is one of these (and not defined locally) is external.
STD_TYPES = frozenset({"Vec", "String", "str", "HashMap", "HashSet", "BTreeMap", "BTreeSet", "VecDeque", "Path",
                       "PathBuf", "Duration", "Instant", "Ordering", "Range", "Sender", "Receiver", "File",
                       "Formatter", "Error", "Iter", "IterMut", "IntoIter", "Chars", "Bytes", "Thread", "JoinHandle",
                       "AtomicBool", "AtomicUsize", "AtomicU64", "AtomicI64", "AtomicU32", "SystemTime", "PhantomData",
                       "NonNull", "Any", "TypeId", "CString", "CStr", "OsString", "OsStr", "Wrapping", "Reverse",
                       "Self_"}) | WRAPPERS
#: Maps: their element (``get``, ``values()``, ``map[k]``) is the value type.
MAPS = frozenset({"HashMap", "BTreeMap", "IndexMap", "FxHashMap", "AHashMap", "DashMap"})
#: Containers indexed / iterated for their element type.
CONTAINERS = frozenset({"Vec", "VecDeque", "SmallVec", "ArrayVec", "BTreeSet", "HashSet", "LinkedList"}) | MAPS
PRIMITIVES = frozenset({"u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
                        "f32", "f64", "bool", "char", "str", "()", "!", "f16", "bf16"})
_LIFETIME_RE = re.compile(r"'\w+\s*")
_DYN_RE = re.compile(r"^(dyn|impl)\s+")
_TRAIT_BOUND_SPLIT = re.compile(r"\s*\+\s*")


class Scope(NamedTuple):
    """Where a type text was written: its module, file, the generic names in scope and ``Self``."""

    module: str
    file: str
    generics: frozenset[str] = frozenset()
    self_ty: str = ""  # the impl's type reference, for `Self`
    fn_qual: str = ""  # the enclosing function (its body's `use` items)


def generic_args(text: str) -> tuple[str, list[str]]:
    """``a::B<C, D<E>>`` → (``a::B``, [``C``, ``D<E>``]); no generics → (text, [])."""
    i = text.find("<")
    if i <= 0 or not text.endswith(">"):
        return text.strip(), []
    return text[:i].strip(), split_top(text[i + 1 : -1])


def split_top(s: str, sep: str = ",") -> list[str]:
    """Split on ``sep`` outside brackets (``<>``, ``()``, ``[]``, ``{}``)."""
    out, depth, last = [], 0, 0
    for i, ch in enumerate(s):
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}" and depth and not (ch == ">" and i and s[i - 1] == "-"):
            depth -= 1
        elif ch == sep and depth == 0:
            out.append(s[last:i].strip())
            last = i + 1
    tail = s[last:].strip()
    if tail:
        out.append(tail)
    return out


def peel_refs(text: str) -> str:
    t = _LIFETIME_RE.sub("", text.strip()).strip()
    while True:
        for p in ("&mut ", "&", "*const ", "*mut ", "mut "):
            if t.startswith(p):
                t = t[len(p) :].strip()
                break
        else:
            return t


def peel(text: str) -> str:
    """Strip references, lifetimes and content-handing wrappers (``Arc<Mutex<T>>`` → ``T``)."""
    t = peel_refs(text)
    for _ in range(8):
        base, args = generic_args(t)
        args = [a for a in args if a and not a.startswith("'")]  # `MutexGuard<'_, T>`: lifetimes are no content
        if args and base.rsplit("::", 1)[-1] in WRAPPERS:
            t = peel_refs(args[0])
            continue
        break
    return t


def element(text: str) -> str:
    """Element type of an indexed / iterated container type text (``Vec<T>``, ``[T; N]``, ``&[T]``), or ""."""
    t = peel(text)
    if t.startswith("[") and t.endswith("]"):
        return split_top(t[1:-1], ";")[0]
    base, args = generic_args(t)
    args = [a for a in args if a and not a.startswith("'")]
    name = base.rsplit("::", 1)[-1]
    if args and name in CONTAINERS:
        return args[1] if name in MAPS and len(args) > 1 else args[0]
    return ""


def is_test_only(d: Definition) -> bool:
    """Compiled only under ``#[cfg(test)]`` (alone or in an ``all(..)``)."""
    return any(c == "test" or (c.startswith("all(") and re.search(r"(?<![\w(])test(?!\w)", c.replace("all(", " ")))
               for c in d.cfg)


def strip_marks(ref: str) -> tuple[str, bool]:
    """(reference without its ``~``, whether it was heuristic)."""
    return (ref[:-1], True) if ref.endswith("~") else (ref, False)


def union(refs: list[str]) -> str:
    """One reference for several: the common one, or ``U:a|b`` (``""`` members ignored)."""
    flat: list[str] = []
    heur = False
    for r in refs:
        r, h = strip_marks(r)
        heur |= h
        if r.startswith("A:"):
            return r
        flat += members(r) if r else []
    flat = sorted(set(flat))
    if not flat:
        return ""
    out = flat[0] if len(flat) == 1 else "U:" + "|".join(flat)
    return out + "~" if heur else out


def members(ref: str) -> list[str]:
    """The types a reference may be (one, or each of a ``U:`` union's)."""
    r = strip_marks(ref)[0]
    return r[2:].split("|") if r.startswith("U:") else [r]


def short(ref: str) -> str:
    """A type reference's short name for display (``T:a::b::Linear`` → ``Linear``)."""
    r = strip_marks(ref)[0]
    if r.startswith("U:"):
        return " | ".join(short(m) for m in members(r))
    if r.startswith("D:"):
        return "dyn " + short(r[2:])
    return r[2:].rsplit("::", 1)[-1] if len(r) > 2 else r


def dyn_bounds(text: str) -> list[str]:
    """``dyn A + Send`` / ``impl Fn() -> X`` → the trait texts (auto traits and lifetimes dropped)."""
    t = _DYN_RE.sub("", peel_refs(text))
    return [b for b in _TRAIT_BOUND_SPLIT.split(t) if b and not b.startswith("'")
            and b not in ("Send", "Sync", "Unpin", "Sized", "?Sized", "Copy", "Clone", "'static")]


__all__ = ["Scope", "CONTAINERS", "MAPS", "PRIMITIVES", "STD_TYPES", "WRAPPERS", "dyn_bounds", "element",
           "generic_args", "is_test_only", "members", "peel", "peel_refs", "short", "split_top", "strip_marks", "union"]
