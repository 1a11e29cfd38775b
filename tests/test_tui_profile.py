"""The explorer's profile: the bar, the CLI flags, screen 5's rows and edits that re-trace at once."""

from __future__ import annotations

import pytest

from apxtui.commands.tui import build_parser, explorer_config
from apxtui.errors import UserError
from apxtui.profile.model import Profile
from apxtui.tui import profile_rows as pr
from apxtui.tui.app import ApxApp
from apxtui.tui.drive import settle


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("APXTUI_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


ready = settle


def kernels(app) -> set[str]:
    return {q.rpartition("::")[2] for k, q in app.analysis.summary.device if k == "kernel"}


def libraries(app) -> set[str]:
    return {q for k, q in app.analysis.summary.device if k == "vendor_api"}


def test_cli_flags_reach_the_app():
    args = build_parser().parse_args(["--demo", "--arch", "90", "--cfg", "x", "--env", "A=1"])
    config = explorer_config(args)
    assert config.profile is not None
    assert (config.profile.arch, config.profile.cfg_on, config.profile.env) == ("sm_90", ["x"], {"A": "1"})
    assert ApxApp(config).profile is config.profile
    assert explorer_config(build_parser().parse_args(["--demo"])).profile is None
    with pytest.raises(UserError):
        explorer_config(build_parser().parse_args(["--demo", "--arch", "ampere"]))


async def test_profile_bar_and_trace_follow_the_cli_profile(demo_app):
    app = demo_app(checkpoint=None, profile=Profile(arch="sm_80"))
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        bar = app.screen.query_one("#profile-bar").plain()
        assert bar.startswith("profile: arch sm_80")
        assert "flash_attn:run_mha_fwd" in libraries(app)  # FlashAttention-2 (vendored) on sm_8x
        assert "attention_kernel" not in kernels(app) and "rms_norm_kernel" in kernels(app)
        assert "cutlass:run" not in libraries(app)


@pytest.mark.slow
async def test_profile_screen_edits_retrace_at_once(tmp_path, demo_app):
    app = demo_app(checkpoint=None, export_dir=str(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        assert app.screen.query_one("#profile-bar").plain().startswith("no profile: all configurations")
        # every cfg alternative
        assert "attention_kernel" in kernels(app) and "flash_attn:run_mha_fwd" in libraries(app)
        await pilot.press("5")
        await ready(app, pilot)
        screen = app.screen
        rows = screen.rows
        assert all(r.state == pr.NO_PROFILE_STATE for r in rows)
        cfg = next(r for r in rows if r.name == "apxinf_fa2_sm80")
        assert any("build.rs:45" in d and "arch >= 80 && arch < 90" in d for d in cfg.detail)
        # move to the sm_100 row by keys and make it the target
        target = next(i for i, r in enumerate(rows) if r.kind == "arch" and r.name == "sm_100")
        await pilot.press("g", *["j"] * target, "space")
        await ready(app, pilot)
        assert app.session.resolved is not None and app.session.profile.arch == "sm_100"
        assert screen.query_one("#profile-bar").plain().startswith("profile: arch sm_100")
        fmha = next(r for r in screen.rows if r.name == "apxinf_cutlass_fmha")
        assert fmha.state == "on (derived)" and any("`arch >= 100` = true" in d for d in fmha.detail)
        assert "cutlass:run" in libraries(app)
        assert "flash_attn:run_mha_fwd" not in libraries(app) and "attention_kernel" not in kernels(app)
        assert "cutlass" in str(screen.query_one("#profile-path").render())
        # an env value through the prompt: the split-k gate needs no fa2/cutlass cfg → drop the arch first
        await pilot.press("x")
        await ready(app, pilot)
        assert app.session.resolved is None
        assert screen.query_one("#profile-bar").plain().startswith("no profile")
        env = next(i for i, r in enumerate(screen.rows) if r.name == "APXINF_ATTN_SPLITK")
        await pilot.press("g", *["j"] * env, "enter")
        await pilot.pause()
        await pilot.press(*"1", "enter")
        await ready(app, pilot)
        assert app.session.profile.env == {"APXINF_ATTN_SPLITK": "1"}
        assert next(r for r in screen.rows if r.name == "APXINF_ATTN_SPLITK").state == "= '1'"
        ks = kernels(app)
        assert "attention_split_kernel" in ks and "attention_kernel" not in ks
        # the explorer re-traced too, and the report says which profile
        await pilot.press("1", "e")
        await ready(app, pilot)
        (report,) = tmp_path.glob("*.md")
        assert "- **Profile:** profile: env APXINF_ATTN_SPLITK=1" in report.read_text()


def test_rows_show_undecided_names_and_edits_are_pure(demo_index):
    from apxtui.tui.session import Session

    s = Session(demo_index)
    space = s.config_space()
    # a feature-only profile: the arch-derived cfg names stay undecided, and say so
    rp = s.bind(Profile(features=["apxinf-model/fp8"]))
    rows = {r.name: r for r in pr.rows(space, rp)}
    assert rows["apxinf_fa2_sm80"].undecided and rows["apxinf_fa2_sm80"].state == "UNDECIDED"
    assert any("arch >= 80 && arch < 90" in d and "undecided" in d for d in rows["apxinf_fa2_sm80"].detail)
    assert rows["apxinf-cuda/fp8"].state == "on" and rows["apxinf-py/fp8"].state == "off"
    p = pr.toggle(None, rows["apxinf_fa2_sm80"])
    assert p is not None and p.cfg_on == ["apxinf_fa2_sm80"]
    p2 = pr.toggle(p, rows["apxinf_fa2_sm80"])
    assert p2.cfg_on == [] and p2.cfg_off == ["apxinf_fa2_sm80"] and p.cfg_on == ["apxinf_fa2_sm80"]
    assert pr.toggle(p2, rows["apxinf_fa2_sm80"]) is None  # back to no profile at all
    rp2 = s.bind(p)
    assert {r.name: r for r in pr.rows(space, rp2)}["apxinf_fa2_sm80"].state == "on (--cfg)"
    assert pr.set_env(None, "A", "1").env == {"A": "1"} and pr.set_env(pr.set_env(None, "A", "1"), "A", None) is None
    # the typed space the rows read: a build-script cfg with its condition and uses; a used-only feature cfg
    fa2 = space.cfg_entries()["apxinf_fa2_sm80"]
    assert (fa2.crate, fa2.declared, fa2.used) == ("apxinf-cuda", ("crates/apxinf-cuda/build.rs:28",), 3)
    assert [[(c.at, c.text, c.negated) for c in p] for p in fa2.emitted[0].conditions] == [
        [("crates/apxinf-cuda/build.rs:44", "arch >= 80 && arch < 90", False)]]
    fp8 = space.cfg_entries()['feature="fp8"']
    assert (fp8.crate, fp8.emitted, fp8.first_use) == ("", (), "crates/apxinf-cuda/src/ffi/mod.rs:30")
    assert "apxinf_fa2_sm80" not in space.cfg_entries("define")
    assert space.to_dict()["cfg"]["apxinf_fa2_sm80"]["emitted"][0]["conditions"][0][0]["negated"] is False
    assert ("sm_80", "crates/apxinf-cuda/build.rs:44", "build script") in {(a.arch, a.at, a.how) for a in space.archs}
    (arch_read,) = space.env["APXINF_CUDA_ARCH"]
    assert (arch_read.file, arch_read.line, arch_read.caller) == (
        "crates/apxinf-cuda/build.rs", 10, "apxinf_cuda::build::detect_arch")
