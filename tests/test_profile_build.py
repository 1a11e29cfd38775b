"""Build scripts: cfg emission under architecture/feature conditions, and what --arch derives."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from apxtui.profile.buildscript import BuildScript
from apxtui.profile.model import Profile, Resolved
from apxtui.profile.space import discover

BUILD_RS = textwrap.dedent('''
    use std::env;
    #[path = "build_support/arch.rs"]
    mod arch_support;

    fn detect_arch() -> u32 {
        env::var("GPU_ARCH").ok().and_then(|v| v.parse().ok()).unwrap_or(80)
    }

    fn main() {
        println!("cargo:rustc-check-cfg=cfg(fa_sm8x)");
        println!("cargo::rustc-check-cfg=cfg(big_gpu, probe_only)");
        let arch = detect_arch();
        let fast = env::var("CARGO_FEATURE_FAST").is_ok();
        if arch >= 80 && arch < 90 {
            println!("cargo:rustc-cfg=fa_sm8x");
        }
        let sm = format!("sm_{arch}");
        if arch_support::is_big(&sm) {
            println!("cargo::rustc-cfg=big_gpu");
        }
        if std::path::Path::new("/opt/something").exists() {
            println!("cargo:rustc-cfg=probe_only");
        } else if arch > 70 {
            println!("cargo:rustc-cfg=probe_else");
        }
        if fast {
            let mut b = cc::Build::new();
            b.define("USE_FAST", None);
            b.flag("-DFAST_LEVEL=2");
        }
    }
''')

ARCH_RS = textwrap.dedent('''
    pub fn is_big(arch: &str) -> bool {
        matches!(arch, "sm_100" | "sm_100a" | "sm_120")
    }
''')


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    c = tmp_path / "crates" / "gpu"
    (c / "src").mkdir(parents=True)
    (c / "build_support").mkdir()
    (c / "Cargo.toml").write_text('[package]\nname = "gpu"\nversion = "0.1.0"\n\n'
                                  '[features]\ndefault = []\nfast = ["extra"]\nextra = []\n')
    (c / "build.rs").write_text(BUILD_RS)
    (c / "build_support" / "arch.rs").write_text(ARCH_RS)
    (c / "src" / "lib.rs").write_text("pub fn f() {}\n")
    return tmp_path


def _emitted(bs: BuildScript, name: str, kind: str = "cfg"):
    return next(e for e in bs.emissions if e.name == name and e.kind == kind)


def test_emissions_and_declarations(checkout):
    bs = BuildScript(checkout, "crates/gpu/build.rs")
    declared = sorted(e.name for e in bs.emissions if e.kind == "check_cfg")
    assert declared == ["big_gpu", "fa_sm8x", "probe_only"]
    em = _emitted(bs, "fa_sm8x")
    assert [c.text for c in em.paths[0]] == ["arch >= 80 && arch < 90"]
    assert em.paths[0][0].line == 15
    assert {e.name for e in bs.emissions if e.kind == "define"} == {"USE_FAST", "FAST_LEVEL"}


@pytest.mark.parametrize(("arch", "fa", "big"), [("sm_86", True, False), ("sm_90", False, False),
                                                 ("sm_100", False, True), (None, None, None)])
def test_arch_derives_cfg(checkout, arch, fa, big):
    bs = BuildScript(checkout, "crates/gpu/build.rs")
    d = bs.decide(_emitted(bs, "fa_sm8x"), arch, set(), {"fast", "extra"})
    assert d.value is fa
    assert "crates/gpu/build.rs:15" in d.steps[0]
    # through a `#[path]` helper module whose body is a `matches!` on the arch string
    assert bs.decide(_emitted(bs, "big_gpu"), arch, set(), {"fast"}).value is big


def test_undecidable_emission_stays_undecided(checkout):
    bs = BuildScript(checkout, "crates/gpu/build.rs")
    # a filesystem probe heading an else-if chain is never assumed
    assert bs.decide(_emitted(bs, "probe_only"), "sm_90", set(), set()).value is None
    assert bs.decide(_emitted(bs, "probe_else"), "sm_90", set(), set()).value is None


def test_feature_gated_defines(checkout):
    bs = BuildScript(checkout, "crates/gpu/build.rs")
    em = _emitted(bs, "USE_FAST", "define")
    assert bs.decide(em, None, set(), {"fast", "extra"}).value is False
    assert bs.decide(em, None, {"fast"}, {"fast", "extra"}).value is True


def test_profile_closed_and_undecided(checkout):
    space = discover(checkout)
    f = "crates/gpu/src/lib.rs"
    rp = Resolved(Profile(arch="sm_86"), space)
    assert rp.cfg("fa_sm8x", f) is True
    assert rp.cfg("big_gpu", f) is False
    assert rp.cfg("never_emitted", f) is False  # closed
    assert rp.cfg("probe_only", f) is None  # listed as undecided
    assert "probe_only" in {d.name for d in rp.undecided()}
    assert "undecided: probe_else, probe_only" in rp.describe()
    # --cfg / --cfg-off settle an undecided name
    rp2 = Resolved(Profile(arch="sm_86", cfg_off=["probe_only"], cfg_on=["probe_else"]), space)
    assert rp2.cfg("probe_only", f) is False and rp2.cfg("probe_else", f) is True
    # the name is emitted for the crate only: another crate's file has it off
    assert rp.cfg("fa_sm8x", "other/src/lib.rs") is False


def test_features_and_implications(checkout):
    space = discover(checkout)
    f = "crates/gpu/src/lib.rs"
    rp = Resolved(Profile(features=["fast"]), space)
    assert rp.cfg('feature = "extra"', f) is True  # implied by fast
    assert rp.macro("USE_FAST", "crates/gpu/kernels/k.cu", False) == (True, None)
    rp0 = Resolved(Profile(arch="sm_90"), space)
    assert rp0.cfg('feature = "fast"', f) is False
    assert rp0.macro("USE_FAST", "crates/gpu/kernels/k.cu", False)[0] is False
    assert Resolved(Profile(features=["nope"]), space).warnings
