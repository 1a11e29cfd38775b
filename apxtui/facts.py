"""Plain facts extracted from one source file: the contract between parse/ and index/.

Extractors (``apxtui/parse/<lang>.py``) produce a :class:`FileFacts` per file and
never link anything; the linker (``apxtui/index/link.py``) reads only these
records.  Everything here is plain data: the cache pickles it; ``to_dict``/``from_dict``
give JSON for fixtures and diffs.

Conventions
-----------
* ``file`` is the path relative to the checkout root, with ``/`` separators.
* ``line`` is 1-based.
* Rust qualified names use ``::`` and start with the crate name
  (``apxinf_cuda::kernels::norm::rms_norm``; impl methods ``crate::mod::Type::method``).
  C/C++/CUDA qualified names use ``::`` for namespaces/classes (``ns::Class::f``) or
  the bare name at global scope.  Python qualified names use ``.``
  (``pkg.module.Class.method``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

#: Languages known to the scanner / extractors.
LANGS = ("rust", "cuda", "python")

#: Definition kinds (also graph node kinds, see index/link.py).
DEF_KINDS = (
    "rust_fn",  # free fn or impl/trait method in Rust
    "ffi_decl",  # fn declared inside a Rust `extern "C" { ... }` block
    "abi_fn",  # C/C++/CUDA function definition with C linkage (`extern "C"`)
    "host_fn",  # other C/C++/CUDA host function definition
    "device_fn",  # `__device__` function
    "kernel",  # `__global__` function
    "python_fn",  # Python function or method
    "python_class",  # Python class
    "rust_type",  # Rust struct/enum/trait (kept for receiver-type resolution)
    "cpp_type",  # C++ class/struct (kept for operator()/run resolution)
)


@dataclass
class Context:
    """One enclosing construct of a call site, outermost first.

    kind:
      ``if`` / ``else`` (arm of an if/else-if chain; ``text`` is the condition, for
      ``else`` the text is ``else`` and ``negated`` lists the earlier conditions),
      ``match_arm`` (Rust match; ``text`` = arm pattern incl. guard, ``subject`` = scrutinee),
      ``switch_case`` (C/C++; ``text`` = ``case X`` / ``default``, ``subject`` = switch value),
      ``cfg`` (a ``#[cfg(...)]`` on the statement/expression/item; ``text`` = the cfg predicate),
      ``pp_if`` (``#if``/``#ifdef``/``#ifndef``/``#elif``/``#else`` arm; ``text`` = condition),
      ``loop`` (``for``/``while``/``loop``; ``text`` = loop header without body),
      ``closure`` (call inside a closure/lambda body; ``text`` = the closure header),
      ``macro`` (call inside a macro invocation's token tree; ``text`` = macro name with ``!``),
      ``except`` (Python: call inside an ``except X`` clause; ``text`` = ``except X``).
      Else-if arms are kind ``if`` with ``negated`` = the earlier conditions.
    group: identifies the branch construct within the file (``"<line>:<col>"`` of the
      if-chain / match / switch / #if), so arms of one construct can be grouped into a
      dispatch point.  Loops and closures also get one.
    arm: index of the arm inside its construct (0-based, in source order); -1 for loops.
    """

    kind: str
    text: str
    line: int
    group: str
    arm: int = 0
    subject: str = ""
    negated: list[str] = field(default_factory=list)
    env: list[str] = field(default_factory=list)  # env var names read in the condition
    total: int = 0  # arms of the construct (match arms; switch cases incl. default); 0 when not counted


@dataclass
class Param:
    name: str
    type: str  # type text as written ("const T*", "&Tensor", "int")
    default: str = ""  # Python default value text, if any


@dataclass
class Definition:
    kind: str  # one of DEF_KINDS
    name: str  # short name ("rms_norm", "forward", "launch_rms_norm_bf16")
    qualname: str  # see module docstring
    file: str
    line: int
    end_line: int
    lang: str
    container: str = ""  # impl type / class / enclosing C++ class, short name
    trait: str = ""  # Rust trait for `impl Trait for Type` methods
    params: list[Param] = field(default_factory=list)
    return_type: str = ""
    template_params: list[str] = field(default_factory=list)  # C++ template / Rust generic names
    generic_bounds: dict[str, list[str]] = field(default_factory=dict)  # Rust: {"B": ["Backend"]}
    cfg: list[str] = field(default_factory=list)  # cfg predicates on the item and its parents
    pp: list[Context] = field(default_factory=list)  # enclosing #if arms (C/C++)
    visibility: str = ""  # Rust: "pub", "pub(crate)", ""; C++: "static" for internal linkage
    symbol: str = ""  # link-time symbol: extern "C" name (after #[link_name]/#[no_mangle])
    # free-form: launch_bounds, decorators…  Keys the Rust resolver reads: ``type_path`` /
    # ``trait_path`` (an impl's self type / trait as written, when a path), ``trait_decl`` /
    # ``trait_default`` (a trait's method without / with a body), ``nested_in`` (fn inside a fn),
    # and for types ``kind`` (struct/enum/union/type_alias/trait), ``aliased`` (a type alias's
    # target), ``supertraits``, ``variants``, ``variant_types`` (tuple variant → payload types) and
    # ``variant_fields`` (struct-like variant → {field: type}).  Functions: ``assigns`` (``let x = v``:
    # var, value text, line; ``tails``: the branch values of an ``if``/``match`` value) and
    # ``tuple_assigns`` (``let (a, b) = v``: vars in order, value, line).
    # Function pointers: ``returns`` (C/C++: the function or kernel names a picker returns, with their
    # contexts), ``fn_values`` (Rust: var → the function paths a ``match`` assigns it, per arm), ``tail``
    # (Rust: the returned expression's text)
    attrs: dict[str, Any] = field(default_factory=dict)
    locals: dict[str, str] = field(default_factory=dict)  # local var → type text where stated/obvious
    fields: dict[str, str] = field(default_factory=dict)  # for types: field → type text


@dataclass
class CallSite:
    """A call, method call, kernel launch, vendor call or macro invocation inside a body.

    kind: ``call`` (path/function call), ``method`` (``recv.name(...)``),
      ``launch`` (``k<<<...>>>(...)`` or ``cudaLaunchKernel*``/``cuLaunchKernel``),
      ``vendor`` (a call matched by the ``@call.vendor`` query pattern), ``macro``
      (a macro invocation such as ``launch!(...)``, or a C function-like macro defined in the
      file), ``cast`` (C/C++: a call-shaped conversion — ``(T)(x)``, ``float(x)``, ``uint8_t(x)``, a
      typedef or template parameter applied, ``static_cast<T>(x)`` — kept for dtype analysis, never
      linked).  A C/C++ call that may be a macro (defined in the file, or an ALL_CAPS name) carries
      ``attrs.macro_call`` (its whole text) and ``attrs.macro_end`` ([line, col]); file-level
      ``NAME(args)`` lines are ``macro`` sites with ``attrs.file_level``, ``scope`` and ``abi``.
      Linking expands them (``apxtui/index/macros.py``): the expansion's calls carry ``macro``,
      ``macro_at``, ``macro_defs``, ``macro_origin`` (``argument``/``body``) and ``macro_site``.
    callee: the callee as written, without template/turbofish args
      (``ffi::rms_norm_bf16``, ``Self::step``, ``B::matmul``, ``forward``, ``rms_norm_kernel``).
    path: ``callee`` split on ``::`` (Rust/C++) or ``.`` (Python).
    receiver: for ``method``: the receiver expression text (``self``, ``self.blocks[i]``, ``x``).
    """

    kind: str
    callee: str
    path: list[str]
    caller: str  # qualname of the enclosing Definition ("" at module/file scope)
    file: str
    line: int
    col: int
    receiver: str = ""
    args: list[str] = field(default_factory=list)
    template_args: list[str] = field(default_factory=list)  # C++ <...> or Rust ::<...>
    launch_config: list[str] = field(default_factory=list)  # <<<grid, block, smem, stream>>>
    contexts: list[Context] = field(default_factory=list)
    text: str = ""  # the whole call expression, truncated to 200 chars
    attrs: dict[str, Any] = field(default_factory=dict)


@dataclass
class Import:
    """``use`` item (Rust), ``#include`` (C/C++), ``import``/``from`` (Python).

    Rust: ``path`` is the full imported path (``crate::ffi::rms_norm``), ``alias`` is the
    name bound in scope (``rms_norm`` or the ``as`` name; ``*`` for globs),
    ``public`` marks ``pub use`` re-exports; ``scope`` is the module qualname holding it.
    C/C++: ``path`` is the include text, ``system`` True for ``<...>``; a ``#define`` is kind
    ``define`` (object-like: ``path`` its value on one line) or ``macro`` (function-like: ``path``
    the parameter list and the body, comments out and continuations joined, for linking to expand).
    Python: ``path`` is the module or ``module.name`` imported, ``alias`` the bound name.
    """

    kind: str  # "use" | "mod" | "include" | "define" | "macro" | "typedef" | "enumerator" | "import"
    path: str
    alias: str
    file: str
    line: int
    scope: str = ""
    public: bool = False
    system: bool = False
    cfg: list[str] = field(default_factory=list)


@dataclass
class Binding:
    """A PyO3 exposure of a Rust item to Python.

    kind: ``class`` (``#[pyclass]``), ``method`` (in ``#[pymethods]``), ``function``
    (``#[pyfunction]``), ``module`` (``#[pymodule]``), ``module_member`` (a
    ``m.add_class::<T>()`` / ``m.add_function(wrap_pyfunction!(f, m)?)`` registration
    inside a pymodule; ``python_module`` is then the module name, ``rust_qualname`` the
    registered item's path as written).
    """

    kind: str
    python_name: str  # name seen from Python (after #[pyo3(name = "...")] / #[pyclass(name=...)])
    rust_qualname: str  # qualname of the Rust item (method: crate::mod::Type::method)
    file: str
    line: int
    python_class: str = ""  # for methods: python name of the class
    rust_type: str = ""  # for classes/methods: Rust type short name
    python_module: str = ""  # for module / module_member
    attrs: dict[str, Any] = field(default_factory=dict)  # e.g. {"constructor": True}


@dataclass
class EnvRead:
    """A read of an environment variable (``std::env::var``, ``getenv``, ``os.environ``)."""

    name: str
    file: str
    line: int
    caller: str
    default: str = ""  # text of the default the code applies, if visible
    text: str = ""


@dataclass
class Issue:
    """A problem met while reading/parsing a file (kept, counted, shown; never fatal)."""

    file: str
    kind: str  # syntax, binary, encoding, too_large, unreadable, symlink, too_deep, query, budget
    message: str
    line: int = 0
    end_line: int = 0  # syntax: last line of the region the parser could not read (0: just ``line``)

    @property
    def lines_lost(self) -> int:
        """Lines of source left out of the facts (a syntax error's region), else 0."""
        return self.end_line - self.line + 1 if self.kind == "syntax" and self.line else 0


@dataclass
class FileFacts:
    file: str
    lang: str
    sha: str  # content hash (blake2b hex) of the bytes parsed
    module: str = ""  # Rust module qualname / Python dotted module / "" for C++
    defs: list[Definition] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    bindings: list[Binding] = field(default_factory=list)
    env_reads: list[EnvRead] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    strings: list[dict[str, Any]] = field(default_factory=list)  # string/format literals (weight join)
    lines: int = 0
    #: build scripts only (``build.rs``): the syntax tree as plain data (parse/plain.py), for the
    #: evaluator of their conditions; not part of the facts' JSON form
    syntax: Any = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(replace(self, syntax=None))
        del d["syntax"]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FileFacts:
        built: FileFacts = _build(cls, d)
        return built


# -- (de)serialisation -----------------------------------------------------------------

_NESTED: dict[tuple[type, str], type] = {}


def _build(cls: type, d: dict[str, Any]) -> Any:
    kwargs = {}
    for f in fields(cls):
        if f.name not in d:
            continue
        v = d[f.name]
        sub = _NESTED.get((cls, f.name))
        if sub is not None:
            v = [_build(sub, x) for x in v]
        kwargs[f.name] = v
    return cls(**kwargs)


_NESTED.update(
    {
        (FileFacts, "defs"): Definition,
        (FileFacts, "calls"): CallSite,
        (FileFacts, "imports"): Import,
        (FileFacts, "bindings"): Binding,
        (FileFacts, "env_reads"): EnvRead,
        (FileFacts, "issues"): Issue,
        (Definition, "params"): Param,
        (Definition, "pp"): Context,
        (CallSite, "contexts"): Context,
    }
)
