"""Fuzz: generated checkouts (nested and long sources, odd file names) and malformed checkpoint headers.

Every run must end within a generous budget, exit 0/1/2 with no traceback and no unexpected
exception (``apxtui: error: <Type>``), and no output stream may carry a raw control character.
"""

from __future__ import annotations

import contextlib
import io
import json
import struct
import tempfile
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apxtui.cli import main
from apxtui.textsafe import has_control

pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")  # large reprs of headers
BUDGET = {"deadline": timedelta(seconds=15), "suppress_health_check": [HealthCheck.too_slow], "derandomize": True,
          "database": None}

# File-name characters: markup, escapes, newline, tab, brackets, Markdown and shell metacharacters.
NAME_CHARS = st.sampled_from(list("ab_.-[]/@=\\`|<>()#*$ ") + ["\x1b", "\x07", "\x9b", "\n", "\t", "\r", "é", "\u202e"])
names = st.text(NAME_CHARS, min_size=1, max_size=16).map(lambda s: s.replace("/", "_")).filter(
    lambda s: s not in (".", "..") and not s.startswith("-"))


def _python(kind: str, n: int) -> str:
    if kind == "nested":
        return (
            "def f(x):\n"
            + "".join(" " * (i + 1) * 4 + f"if x > {i}:\n" for i in range(n))
            + " " * (n + 1) * 4
            + "g(x)\n"
        )
    if kind == "long":
        return "def f(x):\n    return " + "+".join(f"g({i})" for i in range(n)) + "\n"
    return "def f(x):\n    return " + "(" * n + "g(x)" + ")" * n + "\n"


def _rust(kind: str, n: int) -> str:
    if kind == "nested":
        return "pub fn f() {\n" + "{" * n + "g();" + "}" * n + "\n}\nfn g() {}\n"
    if kind == "long":
        return "pub fn f() -> u32 {\n    " + "+".join(f"g({i})" for i in range(n)) + "\n}\nfn g(x: u32) -> u32 { x }\n"
    return (
        "pub fn f() {\n" + "".join(f"    let a{i} = {i};\n    for _ in 0..a{i} {{ g(); }}\n" for i in range(n)) + "}\n"
    )


def _cuda(kind: str, n: int) -> str:
    if kind == "nested":
        return "__global__ void k(float* x) {\n" + "{" * n + "x[0] = 1;" + "}" * n + "\n}\n"
    if kind == "long":
        return (
            "__device__ int g(int);\n__global__ void k(int* x) { x[0] = "
            + "+".join(f"g({i})" for i in range(n))
            + "; }\n"
        )
    return 'extern "C" void f(float* x) {\n' + "".join(f"  k<<<{i + 1}, 32>>>(x);\n" for i in range(n)) + "}\n"


sources = st.tuples(st.sampled_from(["nested", "long", "many"]), st.integers(1, 120))


def _run(argv: list[str]) -> tuple[int, str, str]:
    """``apxtui --debug ARGV``: an unexpected exception propagates (and fails the test) instead of one line."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["--debug", *argv])
        except SystemExit as e:  # argparse: usage error
            code = int(e.code or 0)
    return code, out.getvalue(), err.getvalue()


def _check(code: int, out: str, err: str) -> None:
    assert code in (0, 1, 2), (code, err)
    assert not has_control(out) and not has_control(err), (out[-300:], err)


@settings(max_examples=10, **BUDGET)
@given(names=st.lists(names, min_size=1, max_size=3, unique=True), py=sources, rs=sources, cu=sources,
       entry=st.sampled_from(["f", "k", "g"]), fmt=st.sampled_from(["text", "md"]))
def test_generated_checkouts_index_and_trace_safely(names, py, rs, cu, entry, fmt):
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        for i, name in enumerate(names):
            sub = root / name
            sub.mkdir()
            (sub / f"{name}.py").write_text(_python(*py))
            (sub / "lib.rs").write_text(_rust(*rs))
            (sub / f"k{i}.cu").write_text(_cuda(*cu))
        (root / "Cargo.toml").write_text('[package]\nname = "' + names[0].replace('"', "").replace("\\", "") + '"\n')
        for argv in (["symbols", d], ["trace", d, "--from", entry, "--format", fmt], ["index", d]):
            _check(*_run([*argv, "--no-cache", "--jobs", "1"]))


def _header(doc, n_override: int | None, data: int) -> bytes:
    body = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    n = len(body) if n_override is None else n_override
    return struct.pack("<Q", n) + body + b"\0" * data


json_leaf = st.one_of(st.integers(-(2**70), 2**70), st.text(NAME_CHARS, max_size=8), st.booleans(), st.none(),
                      st.floats(allow_nan=True))
json_doc = st.recursive(
    json_leaf,
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(NAME_CHARS, max_size=6), c, max_size=4),
    max_leaves=20,
)
entries = st.fixed_dictionaries({"dtype": st.sampled_from(["F32", "BF16", "F8_E4M3", "Q4", "I64"]),
                                 "shape": st.lists(st.integers(-1, 2**40), max_size=5),
                                 "data_offsets": st.lists(st.integers(-1, 2**20), min_size=0, max_size=3)})
headers = st.one_of(
    st.dictionaries(st.text(NAME_CHARS, min_size=1, max_size=8), entries, min_size=1, max_size=4),
    json_doc,
    st.binary(max_size=64),
    st.integers(1, 3000).map(lambda d: b'{"a":' + b"[" * d + b"]" * d + b"}"),
    st.integers(4000, 6000).map(lambda d: b'{"a":{"dtype":"F32","shape":[' + b"7" * d + b'],"data_offsets":[0,4]}}'),
)


@settings(max_examples=60, **BUDGET)
@given(header=headers, n_override=st.one_of(st.none(), st.integers(0, 2**64 - 1)), data=st.integers(0, 64),
       name=names, config=st.one_of(st.none(), json_doc.map(json.dumps), st.binary(max_size=32)))
def test_malformed_checkpoints_are_problems_never_crashes(header, n_override, data, name, config):
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        (root / f"{name}.safetensors").write_bytes(_header(header, n_override, data))
        (root / "ok.safetensors").write_bytes(
            _header({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, None, 4)
        )
        if config is not None:
            (root / "config.json").write_bytes(config if isinstance(config, bytes) else config.encode())
        for argv in (["checkpoint", d], ["checkpoint", d, "--json"], ["checkpoint", str(root / f"{name}.safetensors")]):
            code, out, err = _run(argv)
            _check(code, out, err)
            if argv[-1] == d:
                assert "w" in out  # the good shard always loads (exit 1 when another file is unusable)
