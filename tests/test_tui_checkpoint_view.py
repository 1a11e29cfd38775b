"""Pure rows behind screen 4: input checking, the bound/estimate sections, nothing priced ≠ a bound."""

from __future__ import annotations

from apxtui.analysis.path import AnalysedPath
from apxtui.checkpoint import read_checkpoint
from apxtui.checkpoint.sol import Device, speed_of_light
from apxtui.checkpoint.solfacts import IE, Figure
from apxtui.checkpoint.view import sol_missing_sections, sol_request, sol_sections
from apxtui.demo import DEMO_CHECKPOINT
from apxtui.trace import Stage

DEV = Device("T", bandwidth=Figure(1000.0, "test"), peaks={"bf16": Figure(100.0, "test")})


def test_sol_request_names_missing_and_invalid_inputs():
    r = sol_request(None, "", "x16", "8", "-1", "num_steps=3, bad")
    assert r.missing == ["device", "batch", "seq"]
    assert r.errors == ["seq: 'x16' is not an integer", "launch floor (µs): must be at least 0",
                        "bind 'bad': expected TEXT=N"]
    assert r.bind == {"num_steps": 3} and r.context == 8
    ok = sol_request("H100 SXM", "2", "1_024", "", "", "")
    assert (ok.batch, ok.seq, ok.context, ok.launch_floor_us, ok.missing, ok.errors) == (2, 1024, None, None, [], [])
    assert sol_request("x", "1", "16", "8").errors == ["context: must be at least seq (it includes the new tokens)"]
    rows = dict(sol_missing_sections(r))
    assert rows["Conditional bound"][0] == ("bound", IE)
    assert ("missing", "batch: sequences per call") in rows["Serial estimate (separate figure)"]


def test_a_path_with_nothing_priced_is_not_a_zero_bound():
    empty = AnalysedPath(Stage("e", "rust_fn", "e", "e", "rust", "e.rs", 1), [])
    sol = speed_of_light(empty, {}, None, read_checkpoint(DEMO_CHECKPOINT), DEV, 1, 4, launch_floor_us=2.0)
    assert sol.bound.status == IE and "seconds" not in sol.to_dict()["bound"]  # the engine itself says so …
    bound = dict(sol_sections(sol))["Conditional bound"]
    assert bound[0] == ("bound", IE) and "nothing could be priced" in bound[1][1]  # … and the panel shows it
