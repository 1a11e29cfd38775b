"""Headless CLI: commands, formats and exit codes (0 ok, 2 usage, 1 anything else)."""

from __future__ import annotations

import json

import pytest

from apxtui.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_version_and_help(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and "apxtui" in capsys.readouterr().out
    for cmd in ("index", "symbols", "graph", "trace"):
        with pytest.raises(SystemExit) as e:
            main([cmd, "--help"])
        assert e.value.code == 0
        assert "usage:" in capsys.readouterr().out


def test_usage_error_exits_2(capsys):
    with pytest.raises(SystemExit) as e:
        main(["trace", "--demo"])  # --from is required
    assert e.value.code == 2


def test_not_a_directory_is_one_line_exit_1(capsys, tmp_path):
    f = tmp_path / "file.txt"
    f.write_text("x")
    code, out, err = run(capsys, "index", str(f))
    assert code == 1
    assert err.strip() == f"apxtui: {f}: not a directory"
    code, _, err = run(capsys, "index", str(tmp_path / "missing"))
    assert code == 1 and "no such directory" in err and "Traceback" not in err


def test_index_json(capsys):
    code, out, _ = run(capsys, "index", "--demo", "--json")
    assert code == 0
    s = json.loads(out)
    assert s["files"]["rust"] > 10 and s["files"]["cuda"] > 5 and s["files"]["python"] >= 2
    assert s["symbols"]["kernel"] >= 5 and s["symbols"]["pyo3_binding"] >= 2
    assert s["edges"]["ffi"]["exact"] >= 10 and s["edges"]["launch"]["exact"] >= 5
    assert s["vendored_files"]["indexed_lazily"], "the demo's vendored trees are reached lazily"
    assert s["profile"] == "no profile: all configurations"
    assert set(s["seconds"]) >= {"scan", "total"}
    dropped = s["dropped_calls"]  # counts per category and a few calls with path:line; no reason list by default
    assert "by_reason" not in dropped and dropped["total"] == sum(dropped["by_category"].values())
    assert set(dropped["sample"]) == set(dropped["by_category"])
    from apxtui.demo import DEMO_CHECKOUT
    from apxtui.index.dropped import category
    for cat, calls in dropped["sample"].items():
        assert 1 <= len(calls) <= 3 and all(category(c["reason"]) == cat for c in calls)
        assert len({c["file"] for c in calls}) == len(calls)  # one per file, in file order
        for c in calls:
            assert 1 <= c["line"] <= len((DEMO_CHECKOUT / c["file"]).read_text().splitlines())
    code, out, _ = run(capsys, "index", "--demo", "--json", "--all-dropped")
    by_reason = json.loads(out)["dropped_calls"]["by_reason"]
    assert sum(by_reason.values()) == dropped["total"] and len(by_reason) >= len(dropped["by_category"])


def test_dropped_call_categories():
    from apxtui.index.dropped import by_category, category

    assert category("std method; `x.iter()`: Vec<X:usize>") == category("std method; `y`: ?")
    assert category("Tensor has no method foo in the checkout") \
        == category("Vec<X, Y> has no method bar in the checkout")
    assert category("`self.p`: dyn Pipeline (trait object): no impl of the method in the checkout") \
        == category("`q`: dyn Any, parameter `q: impl Any` (trait object): no impl of the method in the checkout")
    assert category("std/prelude") == "std/prelude"  # a fixed reason is its own category
    assert category("a `x` b") == "a `…` b"  # unknown shapes: the quoted code left out
    assert list(by_category({"std": 2, "std method; `a`: T": 1, "std method; `b`: U": 4}).items()) == [
        ("std method on a receiver typed outside the checkout", 5), ("std", 2)]  # most calls first


def test_symbols_filter(capsys):
    code, out, _ = run(capsys, "symbols", "--demo", "--kind", "kernel", "--json")
    rows = json.loads(out)
    assert code == 0 and rows and all(r["kind"] == "kernel" for r in rows)
    assert "rms_norm_kernel" in {r["qualname"] for r in rows}
    code, out, _ = run(capsys, "symbols", "--demo", "--grep", "RMS_NORM_KERNEL")
    assert "rms_norm_kernel" in out


def test_graph_formats(capsys, tmp_path):
    code, out, _ = run(capsys, "graph", "--demo")
    data = json.loads(out)
    assert code == 0 and data["nodes"] and data["edges"]
    assert {e["kind"] for e in data["edges"]} >= {"call", "ffi", "launch", "binding", "exposes", "include"}
    dot = tmp_path / "g.dot"
    assert run(capsys, "graph", "--demo", "--format", "dot", "-o", str(dot))[0] == 0
    assert dot.read_text().startswith("digraph apxtui {")


def test_trace_json_has_tree_and_flat_stages(capsys):
    code, out, _ = run(capsys, "trace", "--demo", "--from", "kernels::norm::rms_norm", "--select", "BF16",
                       "--format", "json")
    doc = json.loads(out)
    assert code == 0
    assert doc["entry"]["qualname"] == "apxinf_cuda::kernels::norm::rms_norm"
    assert doc["tree"]["children"]
    kernel = [s for s in doc["stages"] if s["kind"] == "kernel"]
    assert [k["qualname"] for k in kernel] == ["rms_norm_kernel"]
    k = kernel[0]
    assert set(k) >= {"depth", "kind", "name", "qualname", "lang", "file", "line", "via"}
    assert k["via"]["kind"] == "launch" and k["via"]["resolution"] == "exact"
    assert k["via"]["template_args"] == ["__nv_bfloat16", "float"]
    assert k["arms"] == ["DType::BF16"]
    assert doc["dispatch_points"][0]["arms"][0]["selected"] is True


def test_trace_ambiguous_and_unknown_symbols_exit_1_with_candidates(capsys):
    code, _, err = run(capsys, "trace", "--demo", "--from", "forward")
    assert code == 1 and "ambiguous" in err and "candidates:" in err
    code, _, err = run(capsys, "trace", "--demo", "--from", "rms_nrom_kernel")
    assert code == 1 and "no symbol" in err and "rms_norm_kernel" in err


def test_trace_markdown_report(capsys, tmp_path):
    out = tmp_path / "r.md"
    code, _, _ = run(capsys, "trace", "--demo", "--from", "kernels::norm::rms_norm", "--format", "md", "-o", str(out))
    md = out.read_text()
    assert code == 0
    assert "not runtime validation" in md
    assert "| `rms_norm_kernel`" in md or "`rms_norm_kernel`" in md
    assert "## Steady state" in md and "## Ambiguous and unresolved" in md and "## Cuts" in md
    assert "```mermaid" not in md  # per-call detail is behind --detail full
    code, _, _ = run(capsys, "trace", "--demo", "--from", "kernels::norm::rms_norm", "--format", "md",
                     "--detail", "full", "-o", str(out))
    full = out.read_text()
    assert code == 0 and "```mermaid" in full and "## All stages" in full and "## Steady state" in full


def test_parser_formats_help_as_argparse_does(monkeypatch):
    """``Parser`` gives its formatters the width argparse finds itself (``$COLUMNS`` here)."""
    import argparse

    from apxtui.argparser import Parser, help_width

    monkeypatch.setenv("COLUMNS", "44")
    assert help_width() == 42
    texts = []
    for cls in (Parser, argparse.ArgumentParser):
        p = cls(prog="x", description="a description long enough to wrap at forty-two columns or so")
        p.add_argument("--option-with-a-long-name", metavar="VALUE", help="help text that wraps as well, surely")
        texts.append(p.format_help())
    assert texts[0] == texts[1]
    assert max(len(line) for line in texts[0].splitlines()) <= 44
