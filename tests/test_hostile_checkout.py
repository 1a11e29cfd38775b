"""Hostile checkouts: files named by input stay inside, reads are bounded, odd entries are counted."""

from __future__ import annotations

import os

import pytest

from apxtui.errors import InputFileError
from apxtui.inputs import confine, read_limited
from apxtui.profile.space import discover
from apxtui.scan import CrateMap, scan


def _write(root, rel, text=""):
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))  # a plain walk: no repository above
    _write(tmp_path, "outside/b.rs", 'fn main() { println!("cargo:rustc-cfg=from_outside"); }\n')
    _write(tmp_path, "outside/m.rs", 'pub fn f() { println!("cargo:rustc-cfg=from_path_mod"); }\n')
    root = tmp_path / "co"
    _write(root, "inner/Cargo.toml", '[package]\nname = "x"\nbuild = "../../outside/b.rs"\n')
    _write(root, "inner/src/lib.rs", "pub fn f() {}\n")
    _write(root, "ok/Cargo.toml", '[package]\nname = "ok"\nbuild = "../shared/build.rs"\n')
    _write(root, "shared/build.rs", '#[path = "../../outside/m.rs"] mod m;\n#[path = "util.rs"] mod util;\n'
                                    'fn main() { println!("cargo:rustc-cfg=inside"); }\n')
    _write(root, "shared/util.rs", 'fn g() { println!("cargo:rustc-cfg=from_util"); }\n')
    return root


def test_build_scripts_and_path_modules_outside_are_not_read(checkout):
    space = discover(checkout)
    d = space.to_dict()
    assert set(d["cfg"]) == {"inside", "from_util"}  # `..` inside the checkout is fine; out of it is not
    probs = dict(space.problems)
    assert "leads outside the checkout" in probs["inner/Cargo.toml"]
    assert "leads outside the checkout" in probs["shared/../../outside/m.rs"]


def test_symlinked_build_script_out_of_the_checkout_is_refused(checkout, tmp_path):
    (checkout / "shared/build.rs").unlink()
    (checkout / "shared/build.rs").symlink_to(tmp_path / "outside/b.rs")
    space = discover(checkout)
    assert "from_outside" not in space.to_dict()["cfg"]
    assert any("a symlink to" in m for _f, m in space.problems)


def test_huge_sparse_manifest_costs_a_stat(tmp_path):
    cargo = _write(tmp_path, "big/Cargo.toml", '[package]\nname = "renamed"\n')
    os.truncate(cargo, 3 * 2**30)  # 3 GB, sparse: reading it would take gigabytes of memory
    _write(tmp_path, "big/src/lib.rs", "pub fn f() {}\n")
    issues = []
    assert CrateMap(tmp_path, issues).rust_module("big/src/lib.rs") == "big"
    assert issues[0].file == "big/Cargo.toml" and "over the 1,048,576-byte limit" in issues[0].message


@pytest.mark.parametrize("text", ["a = " + "[" * 100_000, "a = " + "9" * 5000, "[package]\nname = 'x'\nname = 'y'\n"])
def test_hostile_manifest_is_an_issue_not_a_crash(tmp_path, text):
    _write(tmp_path, "c/Cargo.toml", text)
    issues = []
    assert CrateMap(tmp_path, issues).rust_module("c/src/lib.rs") == "c"
    assert issues and issues[0].kind == "manifest"


def test_fifo_and_unlisted_directory_are_counted_with_a_reason(checkout, monkeypatch):
    os.mkfifo(checkout / "pipe.rs")
    _write(checkout, "locked/x.rs", "fn x() {}\n")
    real = os.scandir

    def scandir(path="."):
        if os.fspath(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)  # as root nothing is unreadable; simulate it
    res = scan(checkout)
    why = {i.file: (i.kind, i.message) for i in res.skipped}
    assert why["pipe.rs"] == ("not_a_file", "a FIFO, not a regular file; not read")
    assert why["locked/"][0] == "unreadable" and "Permission denied" in why["locked/"][1]


def test_confine_rules(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a").write_text("x")
    (tmp_path / "in" / "out").symlink_to(tmp_path)
    root = tmp_path / "in"
    assert confine(root, "a") == (root / "a").resolve()
    assert confine(root, "../in/a", "sub") == (root / "in" / "a").resolve()  # sub/../in/a stays inside
    assert confine(root, "out/in/a") == (root / "a").resolve()  # a symlink that leads back inside is fine
    for bad, why in (("../x", "leads outside"), ("/etc/passwd", "absolute"), ("out/x", "a symlink to"),
                     ("C:\\x", "absolute"), ("a\0b", "not a file name")):
        with pytest.raises(InputFileError, match=why):
            confine(root, bad)


def test_read_limited_refuses_special_and_large_files(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(InputFileError, match="not a regular file"):
        read_limited(tmp_path / "fifo", 10)  # opened non-blocking: no hang without a writer
    (tmp_path / "f").write_bytes(b"x" * 11)
    with pytest.raises(InputFileError, match="over the 10-byte limit"):
        read_limited(tmp_path / "f", 10)
    assert read_limited(tmp_path / "f", 11) == b"x" * 11


def test_directory_git_cannot_open_is_counted(tmp_path, monkeypatch):
    """git reports an unreadable directory as a warning (from the top of the repository)."""
    import shutil
    import subprocess

    import apxtui.scan as scan_mod

    if shutil.which("git") is None:
        pytest.skip("git not installed")
    for k, v in (("GIT_CONFIG_NOSYSTEM", "1"), ("GIT_CONFIG_GLOBAL", os.devnull),
                 ("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))):
        monkeypatch.setenv(k, v)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    _write(tmp_path, "sub/ok.rs", "fn a() {}\n")
    real = scan_mod._git

    def git(root, *args, stderr=None):
        out = real(root, *args, stderr=stderr)
        if "--others" in args and stderr is not None:  # as root nothing is unreadable; what git prints then
            stderr.append("warning: could not open directory 'sub/locked/': Permission denied")
        return out

    monkeypatch.setattr(scan_mod, "_git", git)
    res = scan(tmp_path / "sub")
    assert [(i.file, i.kind, i.message) for i in res.skipped] == [
        ("locked/", "unreadable", "directory not listed: Permission denied")]
    assert [f.rel for f in res.files] == ["ok.rs"]
