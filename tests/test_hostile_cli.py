"""Hostile names and odd invocations on the command line: no raw escape on any stream, no split line,
options before the command, --jobs capped, -o checked first, quiet broken pipe, closed stdout."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import apxtui.commands.common as common_mod  # load_index's build_index (patched where it is used)
from apxtui.checkpoint.synth import write_safetensors
from apxtui.cli import main, split_command
from apxtui.textsafe import has_control

ESC_NAMES = ("a\x1b]0;PWNED\x07.py", "b\x1b[2J.py", "c\nnew\tline.py")


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def escapes(tmp_path):
    """A checkout whose file names carry OSC/CSI escapes, a newline and a tab, each defining ``f``."""
    for name in ESC_NAMES:
        (tmp_path / name).write_text("def f():\n    pass\n")
    return tmp_path


def test_ambiguous_candidates_on_stderr_carry_no_escape(escapes, capsys):
    code, out, err = _run(capsys, "trace", str(escapes), "--from", "f", "--no-cache")
    assert code == 1 and "ambiguous" in err
    assert not has_control(err) and err.count("\n") == 1  # one line, whatever the names hold
    assert "␛]0;PWNED␇" in err and "␛[2J" in err and "c␊new␉line" in err


def test_text_outputs_keep_one_name_per_line(escapes, capsys):
    code, out, _ = _run(capsys, "symbols", str(escapes), "--no-cache")
    assert code == 0 and not has_control(out)
    rows = out.splitlines()
    assert len(rows) == 4 and rows[-1] == "3 symbols"  # the newline in a file name did not split a row
    code, out, _ = _run(capsys, "index", str(escapes), "--no-cache")
    assert code == 0 and not has_control(out)
    code, out, _ = _run(capsys, "graph", str(escapes), "--no-cache", "--format", "dot")
    assert code == 0 and not has_control(out) and all(x.startswith(("  ", "digraph", "}")) for x in out.splitlines())


def test_markdown_report_neutralises_markup_in_names(tmp_path, capsys):
    (tmp_path / "x|y<img src=q>[l](javascript:z)`.py").write_text("def f():\n    g()\n\ndef g():\n    pass\n")
    code, out, _ = _run(capsys, "trace", str(tmp_path), "--from", "f", "--format", "md", "--no-cache")
    assert code == 0 and not has_control(out)
    prose = re.sub(r"(?<![\\`])(`+)(?!`).+?(?<!`)\1(?!`)", "", out)  # code spans show their text literally
    assert "<img" not in prose and not re.search(r"(?<!\\)\]\(", prose) and "&lt;img" in prose
    for row in (x for x in out.splitlines() if x.startswith("| ")):  # no cell break inside a name
        cells = row.replace("\\|", "").count("|")
        assert cells in (3, 8, 9, 11, 12), row


def test_options_before_the_command_select_the_command():
    cmds, takes = {"index", "trace"}, {"--jobs", "--checkpoint"}
    assert split_command(["--jobs", "2", "index", "--demo"], cmds, takes) == (
        "index",
        ["index", "--jobs", "2", "--demo"],
    )
    assert split_command(["--debug", "--jobs", "2", "trace", "x"], cmds, takes) == (
        "trace", ["--debug", "trace", "--jobs", "2", "x"])
    assert split_command(["--checkpoint", "index", "/co"], cmds, takes)[0] is None  # a value, then the TUI
    assert split_command(["/co", "--jobs", "2"], cmds, takes) == (None, ["/co", "--jobs", "2"])


def test_jobs_before_the_command_runs_it_capped_and_said(capsys, monkeypatch):
    seen = {}

    def fake_build(root, **kw):
        seen.update(kw, root=root)
        raise RuntimeError("stop here")

    monkeypatch.setattr(common_mod, "build_index", fake_build)
    code, _, err = _run(capsys, "--jobs", "100000", "index", "--demo")
    assert code == 1 and "stop here" in err  # the index command ran (not the explorer)
    assert seen["workers"] == len(os.sched_getaffinity(0)) and "--jobs 100000 capped at" in err


def test_demo_with_a_path_and_bad_jobs_are_usage_errors(capsys):
    for argv in (["index", "--demo", "/some/path"], ["index", "--demo", "--jobs", "0"], ["--demo", "/x"]):
        with pytest.raises(SystemExit) as e:
            main(argv)
        assert e.value.code == 2, argv
    assert "not allowed with argument --demo" in capsys.readouterr().err


def test_unwritable_output_fails_before_any_work(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(common_mod, "build_index", lambda *a, **k: pytest.fail("indexed before checking -o"))
    for target in (tmp_path / "no" / "dir" / "r.md", tmp_path):
        code, _, err = _run(capsys, "trace", "--demo", "--from", "f", "-o", str(target))
        assert code == 1 and f"-o {target}" in err
    assert not (tmp_path / "no").exists()


def test_explorer_refuses_a_non_terminal(capsys):
    code, out, err = _run(capsys, "--demo")  # pytest's stdin/stdout are not terminals
    assert code == 1 and "needs a terminal" in err


def _cli(*argv, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    return subprocess.run([sys.executable, "-m", "apxtui", *argv], capture_output=True, env=env, timeout=60, **kw)


def test_broken_pipe_is_quiet_and_closed_stdout_is_one_line(tmp_path):
    write_safetensors(tmp_path / "m.safetensors", {f"t{i}.w{i * 7919 % 1000}": ("BF16", (2,)) for i in range(3000)})
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    p = subprocess.Popen([sys.executable, "-m", "apxtui", "checkpoint", str(tmp_path), "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert p.stdout.read(10)
    p.stdout.close()  # `| head -c 10`
    err = p.stderr.read()
    assert p.wait(timeout=60) == 141 and err == b"", err
    r = _cli("checkpoint", str(tmp_path), preexec_fn=lambda: os.close(1))  # `>&-`
    assert r.returncode == 1 and r.stderr.decode().strip() == (
        "apxtui: standard output is closed; nothing written (use -o FILE for a report)")
