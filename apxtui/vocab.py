"""The project's vocabulary, in one place: every kind, status and phase a fact can carry.

Members are ``StrEnum``s, so they compare and hash equal to (and JSON-serialise as) their plain string
values: ``Resolution.EXACT == "exact"``, ``json.dumps(NodeKind.KERNEL) == '"kernel"'``.  Data that is
stored (graph edges, cached facts, the marshalled snapshot) carries the plain value
(``Resolution.EXACT.value``): ``marshal`` refuses str subclasses.
Code below the TUI imports its sets and names from here instead of spelling literals;
this module imports nothing from apxtui and sits at the bottom of the layer stack.
"""

from __future__ import annotations

from enum import StrEnum


class Resolution(StrEnum):
    """How a link (call edge) was established."""

    EXACT = "exact"  # unique by path, symbol, type, or a documented rule
    HEURISTIC = "heuristic"  # resolved by name rules
    AMBIGUOUS = "ambiguous"  # several candidates, all kept and shown
    UNRESOLVED = "unresolved"  # no definition in the indexed code


class Evidence(StrEnum):
    """How an analysed fact (dtype, count, frequency, join) was established."""

    EXACT = "exact"
    HEURISTIC = "heuristic"
    UNKNOWN = "unknown"  # always carries the reason
    INSUFFICIENT = "INSUFFICIENT_EVIDENCE"  # a figure cannot be computed; names what is missing


class DtypeKind(StrEnum):
    """What a stage's dtype facts describe."""

    KERNEL = "kernel"  # a kernel launch: storage, input, accumulator and output dtypes
    LIBRARY = "library"  # a library call: operand, compute and scale dtypes
    OPERATOR = "operator"  # the DType arm of a Rust operator's dispatch


class LoopBinding(StrEnum):
    """How a symbolic loop of a traced path got its iteration count (checkpoint facts)."""

    GIVEN = "given"  # by the user (--bind)
    HEURISTIC = Evidence.HEURISTIC.value  # a loop over layers/blocks bound to the config's layer count
    SYMBOLIC = "symbolic"  # left symbolic (the reason says why)


class FigureStatus(StrEnum):
    """Status of a computed figure (the speed-of-light bound, estimate and KV cache)."""

    OK = "ok"  # computed from evidence for every input
    PARTIAL = "partial"  # computed over the resources and stages with evidence only; the rest named
    INSUFFICIENT = Evidence.INSUFFICIENT.value  # not computed; names what is missing


class NodeKind(StrEnum):
    """Graph node kinds (definition kinds plus the linker's own)."""

    RUST_FN = "rust_fn"
    FFI_DECL = "ffi_decl"
    ABI_FN = "abi_fn"
    HOST_FN = "host_fn"
    DEVICE_FN = "device_fn"
    KERNEL = "kernel"
    PYTHON_FN = "python_fn"
    PYTHON_CLASS = "python_class"
    RUST_TYPE = "rust_type"
    CPP_TYPE = "cpp_type"
    PYO3_BINDING = "pyo3_binding"
    CPP_BINDING = "cpp_binding"  # a C++ function bound for Python: torch.ops operator, pybind11 function
    VENDOR_API = "vendor_api"
    EXTERNAL = "external"
    FILE = "file"


class EdgeKind(StrEnum):
    """Graph edge kinds."""

    CALL = "call"
    BINDING = "binding"  # Python → PyO3 / C++ binding
    EXPOSES = "exposes"  # binding → Rust
    FFI = "ffi"  # Rust extern declaration → C definition, by symbol
    LAUNCH = "launch"
    VENDOR = "vendor"
    INCLUDE = "include"


class CallClass(StrEnum):
    """What a reached call does (the execution map's classification)."""

    DEVICE = "device"  # a kernel launch
    LIBRARY = "library"  # a library compute call (GEMM, attention, collective)
    SETUP = "setup"  # library handle/descriptor/layout/preference/heuristic/algo-check/destroy
    MEMORY = "memory"  # alloc, free, memset, memcpy on device
    TRANSFER = "transfer"  # host↔device transfer or synchronisation
    GRAPH = "graph"  # CUDA Graph lifecycle: begin/end capture, instantiate, launch/replay, destroy
    HOST = "host"  # host bookkeeping: containers, error checks, logging, timers, accessors
    CODE = "code"  # a project function (neither of the above by itself)


class Phase(StrEnum):
    """When work runs, relative to the entry."""

    LOAD = "load"  # once per model load / construction
    PREPARE = "prepare"  # first-call / lazy init, graph build: once per key
    CAPTURE = "capture"  # capture lifecycle wrappers
    CAPTURED = "captured"  # recorded into a graph once per key, replayed afterwards
    EAGER = "eager"  # per call of the entry


#: Node kinds of functions a trace can start from or pass through.
FN_KINDS = frozenset({NodeKind.RUST_FN, NodeKind.HOST_FN, NodeKind.ABI_FN, NodeKind.PYTHON_FN,
                      NodeKind.DEVICE_FN})
#: Definitions that become graph nodes (bindings, vendor and external nodes are the linker's own).
GRAPH_NODE_KINDS = frozenset({NodeKind.RUST_FN, NodeKind.FFI_DECL, NodeKind.ABI_FN, NodeKind.HOST_FN,
                              NodeKind.DEVICE_FN, NodeKind.KERNEL, NodeKind.PYTHON_FN, NodeKind.PYTHON_CLASS})
#: Stage kinds that are device work: a kernel launch or a library call.
DEVICE_KINDS = (NodeKind.KERNEL, NodeKind.VENDOR_API)
#: Edge kinds a trace follows.
CALL_EDGE_KINDS = (EdgeKind.CALL, EdgeKind.BINDING, EdgeKind.EXPOSES, EdgeKind.FFI, EdgeKind.LAUNCH,
                   EdgeKind.VENDOR)

#: Canonical analysis dtypes and their widths in bits (for deciding whether a conversion narrows).
DTYPE_BITS = {"f64": 64, "f32": 32, "tf32": 19, "bf16": 16, "f16": 16, "e4m3": 8, "e5m2": 8, "fp8 (storage)": 8,
              "i64": 64, "u64": 64, "i32": 32, "u32": 32, "i16": 16, "u16": 16, "i8": 8, "u8": 8, "i4": 4,
              "bool": 1}
FLOAT_DTYPES = frozenset({"f64", "f32", "tf32", "bf16", "f16", "e4m3", "e5m2", "fp8 (storage)"})
#: safetensors storage dtype name → canonical analysis dtype.
STORAGE_TO_ANALYSIS = {"BF16": "bf16", "F16": "f16", "F32": "f32", "F8_E4M3": "e4m3", "F8_E5M2": "e5m2",
                       "I8": "i8", "U8": "u8", "I32": "i32", "F64": "f64"}


def dtype_bytes(dtype: str) -> int | None:
    """Whole bytes per element of a canonical dtype (None for sub-byte or unknown types)."""
    bits = DTYPE_BITS.get(dtype)
    return bits // 8 if bits and bits % 8 == 0 and dtype != "tf32" else None


def node_id(qualname: str, file: str, line: int) -> str:
    """Graph node id of a definition: readable and unique (cfg alternatives differ by line)."""
    return f"{qualname}@{file}:{line}"


def module_node_id(module: str, file: str) -> str:
    """The synthetic caller node of a file's module-level calls (Python scripts, C++ globals)."""
    return node_id(f"{module or file}.<module>", file, 1)


def node_file(node: str) -> str:
    """The file in a node id made by :func:`node_id` (or ``ambiguous:callee@file:line``), '' for other ids."""
    if "@" not in node:
        return ""
    return node.rsplit("@", 1)[1].rsplit(":", 1)[0]
