"""Callee-name patterns are run on call function expressions only (CUDA extractor speed-up)."""

from __future__ import annotations

import pytest
import tree_sitter as ts

from apxtui.parse import extract_file, languages
from apxtui.parse.languages import _single_node_pattern


@pytest.mark.parametrize(
    ("pattern", "single"),
    [
        ('((identifier) @call.vendor.x (#match? @call.vendor.x "^(a|b)$"))', True),
        ("(identifier) @call.vendor.y", True),
        ('((identifier) @x (#any-of? @x "a" "b(c"))\n; comment: [with] (structure)\n', True),
        ("(call_expression function: (identifier) @call.vendor.x)", False),
        ("[(identifier) (field_identifier)] @call.vendor.x", False),
        ("((identifier) @a . (identifier) @b)", False),
        ("(identifier)? @q", False),
        ('(function_definition "__global__") @k', False),
    ],
)
def test_single_node_pattern(pattern, single):
    assert _single_node_pattern(pattern) is single


def test_shipped_cuda_vendor_and_launch_patterns_are_split_out():
    rest, callee = languages.split_query("cuda", ("launch.api.", "call.vendor."))
    assert callee is not None
    code = (
        b'extern "C" void f(float* x) { cublasSgemm(h); cublasLtMatmul(h); cudnnCreate(&h); '
        b"ncclAllReduce(a); mha_fwd(q); cudaLaunchKernel((void*)k, g, b, a, 0, s); "
        b"cudaLaunchKernelEx(&c, k); cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, s, p, 0); "
        b'cuLaunchKernelEx(&c, fn, p, 0); getenv("A"); k<<<1, 2>>>(x); }'
    )
    root = languages.parser("cuda").parse(code).root_node

    def names(q) -> set[str]:
        return {n for _, caps in ts.QueryCursor(q).matches(root) for n in caps if not n.startswith("_")}

    family = ("launch.api.", "call.vendor.")
    got_callee, got_rest = names(callee), names(rest)
    assert got_callee and all(n.startswith(family) for n in got_callee), got_callee
    assert {"call.vendor.cublas", "call.vendor.cublasLt", "call.vendor.cudnn", "call.vendor.nccl",
            "call.vendor.flash_attn"} <= got_callee  # fmt: skip
    assert not any(n.startswith(family) for n in got_rest), got_rest
    assert {"reference.call", "launch.kernel", "env.read", "abi.scope", "definition.function"} <= got_rest
    # together they find what the whole query finds
    assert got_callee | got_rest == names(languages.query("cuda"))


def test_vendor_and_launch_api_calls_found_when_qualified_templated_or_nested():
    src = b"""
    void run(cublasHandle_t h, cudaStream_t s) {
        ::cublasGemmEx(h, a, b);
        flash::run_mha_fwd<cutlass::half_t, 128>(params, s);
        helper(cudnnCreate(&dnn));
        cudaLaunchKernel((void*)my_kernel<float>, grid, block, args, 0, s);
        not_vendor(cublas_like);
    }
    """
    facts = extract_file("a.cu", src, "cuda")
    vendor = {c.callee: c.attrs.get("library") for c in facts.calls if c.kind == "vendor"}
    assert vendor.get("cublasGemmEx") == "cublas", vendor
    assert vendor.get("flash::run_mha_fwd") == "flash_attn", vendor
    assert vendor.get("cudnnCreate") == "cudnn", vendor
    assert "not_vendor" not in vendor
    launches = [c for c in facts.calls if c.kind == "launch"]
    assert [c.callee for c in launches] == ["my_kernel"], [(c.callee, c.kind) for c in facts.calls]
    assert launches[0].launch_config == ["grid", "block", "0", "s"]


@pytest.mark.parametrize("name", ["cublasSgemm", "cublasLtMatmul", "cudnnCreate", "ncclSend", "mha_fwd",
                                  "run_mha_fwd_hdim128", "flash_attn_x", "cudaLaunchKernel", "cuLaunchKernelEx",
                                  "getenv", "secure_getenv", "cublas", "not_vendor", "mha_fwd2", "xcublasY"])
def test_callee_name_tests_agree_with_the_query(name):
    """The callee-name patterns evaluated in Python say what tree-sitter's predicates say."""
    families = ("launch.api.", "call.vendor.", "env.read")
    tests, fallback = languages.name_tests("cuda", families)
    assert tests and fallback is None
    _, sub = languages.split_query("cuda", families)
    root = languages.parser("cuda").parse(f"void f() {{ {name}(x); }}".encode()).root_node
    by_query = {n for _, caps in ts.QueryCursor(sub).matches(root) for n, nodes in caps.items()
                if not n.startswith("_") and any(x.text == name.encode() for x in nodes)}
    assert {t.capture for t in tests if t("identifier", name)} == by_query


def test_a_query_compiled_ahead_is_the_one_query_returns(monkeypatch):
    monkeypatch.setattr(languages, "_COMPILED", {})
    made: list[object] = []
    real = languages.ts.Query

    def counting(*a: object) -> object:
        made.append(a[0])
        return real(*a)

    monkeypatch.setattr(languages.ts, "Query", counting)
    languages.compile_ahead(["python"])  # in a thread: query() waits for it instead of compiling again
    q = languages.query("python")
    assert len(made) == 1 and languages.query("python") is q
    languages.compile_ahead(["python"])  # compiled already: nothing to do
    assert len(made) == 1
