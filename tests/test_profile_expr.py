"""cfg predicates, #if expressions and environment gates, evaluated three-valued."""

from __future__ import annotations

import pytest

from apxtui.profile import cfgexpr, envgate, ppexpr


def _look(on: set[str], feats: set[str], known_features: set[str] | None = None):
    def look(name: str, value: str | None):
        if name == "feature":
            return value in feats
        if name == "target_os":
            return None
        return name in on
    return look


@pytest.mark.parametrize(("pred", "on", "feats", "want"), [
    ("apxinf_fa2_sm80", {"apxinf_fa2_sm80"}, set(), True),
    ("apxinf_fa2_sm80", set(), set(), False),
    ("all(not(apxinf_fa2_sm80), not(apxinf_cutlass_fmha))", set(), set(), True),
    ("all(not(apxinf_fa2_sm80), not(apxinf_cutlass_fmha))", {"apxinf_cutlass_fmha"}, set(), False),
    ('any(feature = "fp8", all(a, not(b)))', {"a"}, set(), True),
    ('any(feature = "fp8", all(a, not(b)))', {"a", "b"}, set(), False),
    ('all(feature = "fp8", not(feature = "cuda"))', set(), {"fp8"}, True),
    ('any(target_os = "linux", x)', set(), set(), None),  # unknown stays unknown …
    ('any(target_os = "linux", x)', {"x"}, set(), True),  # … unless the other side decides
    ('all(target_os = "linux", x)', set(), set(), False),
    ("not(target_os = \"linux\")", set(), set(), None),
    ("any()", set(), set(), False),
    ("all()", set(), set(), True),
])
def test_cfg_evaluation(pred, on, feats, want):
    assert cfgexpr.evaluate(pred, _look(on, feats)) is want


def test_cfg_substring_is_not_a_match():
    # `not(apxinf_fa2_sm80)` contains the name but is its negation
    look = _look({"apxinf_fa2_sm80"}, set())
    assert cfgexpr.evaluate("not(apxinf_fa2_sm80)", look) is False
    assert cfgexpr.evaluate("apxinf_fa2_sm80_extra", look) is False


def test_cfg_parse_errors_are_undecided():
    assert cfgexpr.evaluate("all(a,", _look(set(), set())) is None
    with pytest.raises(cfgexpr.CfgSyntaxError):
        cfgexpr.parse('feature = ')
    assert [o.name for o in cfgexpr.options('all(a, any(feature = "x", not(b)))')] == ["a", "feature", "b"]


def _macros(table: dict[str, tuple[bool | None, int | None]]):
    return lambda n: table.get(n, (None, None))


@pytest.mark.parametrize(("text", "table", "want"), [
    ("defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800", {"__CUDA_ARCH__": (True, 900)}, True),
    ("defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800", {"__CUDA_ARCH__": (True, 750)}, False),
    ("defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800", {"__CUDA_ARCH__": (False, None)}, False),  # host pass
    ("defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800", {}, None),
    ("!defined(APXINF_ENABLE_FP8)", {"APXINF_ENABLE_FP8": (True, None)}, False),
    ("FOO >= 2 || BAR", {"BAR": (True, 1)}, True),
    ("FOO >= 2 && BAR", {"BAR": (False, None)}, False),  # undefined macro is 0
    ("(__CUDA_ARCH__ / 100) == 9 ? 1 : 0", {"__CUDA_ARCH__": (True, 900)}, True),
    ("SOME_FN(3) > 1", {}, None),
    ("1 +", {}, None),
])
def test_pp_evaluation(text, table, want):
    assert ppexpr.evaluate(text, _macros(table)) is want


@pytest.mark.parametrize(("cond", "env", "want"), [
    ('std::env::var("APXINF_ATTN_SPLITK").map(|v| v == "1").unwrap_or(false)', {}, False),  # default
    ('std::env::var("APXINF_ATTN_SPLITK").map(|v| v == "1").unwrap_or(false)', {"APXINF_ATTN_SPLITK": "1"}, True),
    ('std::env::var("APXINF_ATTN_SPLITK").map(|v| v == "1").unwrap_or(false)', {"APXINF_ATTN_SPLITK": "0"}, False),
    ('env::var("X").map_or(true, |v| v != "0")', {}, True),
    ('env::var("X").map_or(true, |v| v != "0")', {"X": "0"}, False),
    ('std::env::var("APXINF_SYNC_DEBUG").is_ok()', {}, False),
    ('std::env::var("APXINF_SYNC_DEBUG").is_ok() && rows > 4', {}, False),
    ('std::env::var("APXINF_SYNC_DEBUG").is_ok() && rows > 4', {"APXINF_SYNC_DEBUG": "1"}, None),  # runtime part
    ('rows > 4', {}, None),
    ('let Ok(v) = std::env::var("X")', {"X": ""}, True),
    ('env::var("X").as_deref() == Ok("fast")', {"X": "fast"}, True),
    ('env::var("X").unwrap_or_default() == "fast"', {}, False),
])
def test_env_gate_rust(cond, env, want):
    assert envgate.evaluate(cond, env, "rust") is want


def test_env_gate_python_and_c_and_cfg_macro():
    assert envgate.evaluate('os.environ.get("MODE", "eager") == "graph"', {}, "python") is False
    assert envgate.evaluate('os.environ.get("MODE", "eager") == "graph"', {"MODE": "graph"}, "python") is True
    assert envgate.evaluate('not os.getenv("DEBUG")', {}, "python") is True
    assert envgate.evaluate('getenv("APXINF_TRACE") != nullptr', {"APXINF_TRACE": "1"}, "cuda") is True
    assert envgate.evaluate('cfg!(feature = "fp8") && x', {}, "rust", lambda p: False) is False
    assert envgate.evaluate('cfg!(feature = "fp8") && x', {}, "rust", lambda p: True) is None
