"""Checkout discovery: file listing (git and plain), languages, vendored trees, limits,
symlinks, module paths and the recorded git state."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from apxtui import scan as scan_mod
from apxtui.scan import EXTENSIONS, MAX_BYTES, CrateMap, ScanError, is_vendored, python_module, scan

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")


@pytest.fixture(autouse=True)
def _isolated_git(monkeypatch, tmp_path):
    """No user/system git config, and no discovery of a repository above tmp_path."""
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    for k in ("NAME", "EMAIL"):
        monkeypatch.setenv(f"GIT_AUTHOR_{k}", "t@example.com" if k == "EMAIL" else "t")
        monkeypatch.setenv(f"GIT_COMMITTER_{k}", "t@example.com" if k == "EMAIL" else "t")


def git(root: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True)
    return out.stdout


def write(root: Path, rel: str, text: str = "x\n") -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def make_repo(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")


# -- git listing and state -----------------------------------------------------------


@needs_git
def test_git_lists_tracked_and_untracked_but_not_ignored(tmp_path):
    root = tmp_path / "co"
    make_repo(root)
    write(root, ".gitignore", "build/\n*.gen.py\n")
    write(root, "src/lib.rs")
    write(root, "python/app.py")
    write(root, "gone.py")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "init")
    write(root, "python/app.py", "changed\n")  # modified
    write(root, "python/new.py")  # untracked, not ignored
    write(root, "build/out.py")  # ignored directory
    write(root, "python/x.gen.py")  # ignored pattern
    (root / "gone.py").unlink()  # tracked, deleted in the working tree

    res = scan(root)
    assert sorted(f.rel for f in res.files) == ["python/app.py", "python/new.py", "src/lib.rs"]
    assert res.skipped == []  # a deleted tracked file is not an error
    assert res.other_files == 1  # .gitignore
    assert res.root == root.resolve()
    g = res.git
    assert g is not None
    assert g.revision == git(root, "rev-parse", "HEAD").strip() and len(g.revision) == 40
    assert g.branch == "main"
    assert sorted(g.modified) == ["gone.py", "python/app.py"]
    assert g.untracked == ["python/new.py"]
    assert g.dirty


@needs_git
def test_git_clean_and_empty_repositories(tmp_path):
    root = tmp_path / "co"
    make_repo(root)
    res = scan(root)
    assert res.git is not None and res.git.revision == "(no commits)" and res.files == []
    write(root, "a.py")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "c")
    res = scan(root)
    assert [f.rel for f in res.files] == ["a.py"]
    assert res.git is not None and not res.git.dirty


@needs_git
def test_git_subdirectory_root_paths_are_relative_to_it(tmp_path):
    repo = tmp_path / "repo"
    make_repo(repo)
    write(repo, "sub/a.py")
    write(repo, "sub/sub/b.py")  # same name as the root folder: must not be stripped
    write(repo, "outside.py")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "c")
    write(repo, "sub/a.py", "changed\n")
    write(repo, "sub/new.py")
    write(repo, "outside.py", "changed\n")

    res = scan(repo / "sub")
    assert sorted(f.rel for f in res.files) == ["a.py", "new.py", "sub/b.py"]
    assert res.skipped == []
    assert res.git is not None
    assert res.git.modified == ["a.py"] and res.git.untracked == ["new.py"]


@needs_git
def test_git_submodule_files_are_listed(tmp_path):
    lib = tmp_path / "cutlass_src"
    make_repo(lib)
    write(lib, "include/gemm.h")
    git(lib, "add", ".")
    git(lib, "commit", "-q", "-m", "lib")
    root = tmp_path / "co"
    make_repo(root)
    write(root, "adapters/gemm.cu")
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "kernels/cutlass")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "c")
    files = scan(root).by_rel()
    assert set(files) == {"adapters/gemm.cu", "kernels/cutlass/include/gemm.h"}
    assert files["kernels/cutlass/include/gemm.h"].vendored
    assert not files["adapters/gemm.cu"].vendored


# -- plain walk ------------------------------------------------------------------------


def test_plain_walk_without_git(tmp_path, monkeypatch):
    monkeypatch.setattr(scan_mod, "_git", lambda root, *a: None)  # as if git were missing
    root = tmp_path / "co"
    write(root, "crates/k/src/lib.rs")
    write(root, "kernels/a.cu")
    write(root, "target/debug/build/gen.rs")
    write(root, ".venv/lib/site.py")
    write(root, "pkg/__pycache__/m.py")
    write(root, "notes.md")
    res = scan(root)
    assert res.git is None
    assert [f.rel for f in res.files] == ["crates/k/src/lib.rs", "kernels/a.cu"]
    assert res.other_files == 1


def test_plain_walk_in_a_directory_that_is_not_a_repository(tmp_path):
    root = tmp_path / "co"
    write(root, "m.py")
    res = scan(root)  # GIT_CEILING_DIRECTORIES keeps git from finding an outer repository
    assert res.git is None and [f.rel for f in res.files] == ["m.py"]


def test_no_git_run_without_a_dot_git_above(tmp_path, monkeypatch):
    root = tmp_path / "co"
    write(root, "m.py")
    ran: list[tuple[str, ...]] = []
    monkeypatch.setattr(scan_mod, "_git", lambda r, *a, **k: ran.append(a))
    monkeypatch.setattr(scan_mod, "in_git_work_tree", lambda r: False)  # whatever lies above tmp_path
    assert [f.rel for f in scan(root).files] == ["m.py"] and ran == []
    monkeypatch.undo()
    (root / ".git").mkdir()  # found: git is asked (and fails: not a repository), then the plain walk
    monkeypatch.setattr(scan_mod, "_git", lambda r, *a, **k: ran.append(a))
    assert scan_mod.in_git_work_tree(root)
    assert [f.rel for f in scan(root).files] == ["m.py"] and ran


# -- languages, vendored trees, limits --------------------------------------------------


def test_extension_to_language(tmp_path):
    root = tmp_path / "co"
    names = {
        "a.rs": "rust",
        "b.cu": "cuda",
        "c.cuh": "cuda",
        "d.h": "cuda",
        "e.hpp": "cuda",
        "f.cpp": "cuda",
        "g.cc": "cuda",
        "h.CU": "cuda",
        "i.py": "python",
        "j.pyi": "python",
    }
    for n in names:
        write(root, n)
    for n in ("README.md", "Makefile", "k.txt"):
        write(root, n)
    res = scan(root)
    assert {f.rel: f.lang for f in res.files} == names
    assert res.other_files == 3
    assert set(EXTENSIONS.values()) == {"rust", "cuda", "python"}


def test_vendored_flag(tmp_path):
    assert is_vendored("third_party/flash/attn.cu")
    assert is_vendored("crates/apxinf-cuda/kernels/cutlass/include/cute/tensor.hpp")
    assert not is_vendored("crates/apxinf-cuda/kernels/cutlass_gemm.cu")  # a file, not a folder
    assert not is_vendored("src/third_party.rs")
    assert is_vendored("deps/x.rs", vendored=("deps",)) and not is_vendored(
        "third_party/x.rs", vendored=("deps",)
    )
    root = tmp_path / "co"
    write(root, "third_party/x/a.cu")
    write(root, "kernels/cutlass/b.h")
    write(root, "kernels/c.cu")
    res = scan(root)
    assert {f.rel: f.vendored for f in res.files} == {
        "kernels/c.cu": False,
        "kernels/cutlass/b.h": True,
        "third_party/x/a.cu": True,
    }


def test_files_over_the_size_limit_are_skipped_with_a_reason(tmp_path):
    root = tmp_path / "co"
    (root).mkdir()
    (root / "big.cu").write_bytes(b"x" * (MAX_BYTES + 1))
    (root / "edge.cu").write_bytes(b"x" * MAX_BYTES)
    res = scan(root)
    assert [(f.rel, f.size) for f in res.files] == [("edge.cu", MAX_BYTES)]
    assert [(i.file, i.kind) for i in res.skipped] == [("big.cu", "too_large")]
    assert f"{MAX_BYTES + 1:,} bytes" in res.skipped[0].message and "not parsed" in res.skipped[0].message


# -- symlinks --------------------------------------------------------------------------


def test_symlinks_outside_looping_or_dangling_are_not_followed(tmp_path):
    root = tmp_path / "co"
    write(root, "real.py")
    secret = write(tmp_path, "elsewhere/secret.py")
    os.symlink(secret, root / "out.py")  # points outside the checkout
    os.symlink("b.py", root / "a.py")  # a.py -> b.py -> a.py
    os.symlink("a.py", root / "b.py")
    os.symlink("missing.py", root / "dangling.py")
    os.symlink("real.py", root / "alias.py")  # inside: kept
    os.symlink(".", root / "loop")  # a directory loop
    os.symlink(tmp_path / "elsewhere", root / "outdir")  # a directory outside
    res = scan(root)
    assert sorted(f.rel for f in res.files) == ["alias.py", "real.py"]
    assert {i.file: i.kind for i in res.skipped} == {
        "out.py": "symlink",
        "a.py": "symlink",
        "b.py": "symlink",
        "dangling.py": "symlink",
    }
    assert "outside the checkout" in next(i.message for i in res.skipped if i.file == "out.py")


@needs_git
def test_symlinks_in_a_git_checkout(tmp_path):
    root = tmp_path / "co"
    make_repo(root)
    write(root, "real.py")
    secret = write(tmp_path, "elsewhere/secret.py")
    os.symlink(secret, root / "out.py")
    os.symlink(".", root / "loop")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "c")
    res = scan(root)
    assert [f.rel for f in res.files] == ["real.py"]
    assert [(i.file, i.kind) for i in res.skipped] == [("out.py", "symlink")]


# -- errors ----------------------------------------------------------------------------


def test_not_a_directory_raises_scan_error(tmp_path):
    f = write(tmp_path, "file.py")
    with pytest.raises(ScanError, match="not a directory"):
        scan(f)
    with pytest.raises(ScanError, match="no such directory"):
        scan(tmp_path / "missing")


# -- module paths ----------------------------------------------------------------------


def test_rust_module_paths_from_cargo(tmp_path):
    root = tmp_path / "engine"
    write(root, "Cargo.toml", '[workspace]\nmembers = ["crates/*"]\n')
    write(root, "crates/apxinf-cuda/Cargo.toml", '[package]\nname = "apxinf-cuda"\nversion = "0.1.0"\n')
    write(root, "crates/py/Cargo.toml", '[package]\nname = "apxinf-py"\n[lib]\nname = "apxinf_py_native"\n')
    write(root, "crates/bad/Cargo.toml", "this is = = not toml")
    cm = CrateMap(root)
    c = "crates/apxinf-cuda/"
    assert cm.rust_module(c + "src/lib.rs") == "apxinf_cuda"
    assert cm.rust_module(c + "src/main.rs") == "apxinf_cuda"
    assert cm.rust_module(c + "src/kernels/mod.rs") == "apxinf_cuda::kernels"
    assert cm.rust_module(c + "src/kernels/norm.rs") == "apxinf_cuda::kernels::norm"
    assert cm.rust_module(c + "src/ffi/a/b.rs") == "apxinf_cuda::ffi::a::b"
    assert cm.rust_module(c + "src/model/main.rs") == "apxinf_cuda::model::main"
    assert cm.rust_module(c + "src/bin/bench-gemm.rs") == "bench_gemm"
    assert cm.rust_module(c + "src/bin/tool/main.rs") == "tool"
    assert cm.rust_module(c + "src/bin/tool/util.rs") == "tool::util"
    assert cm.rust_module(c + "tests/graph.rs") == "graph"
    assert cm.rust_module("crates/py/src/lib.rs") == "apxinf_py_native"  # [lib] name wins
    assert cm.rust_module("crates/bad/src/lib.rs") == "bad"  # unreadable manifest: folder name
    res = scan(root)
    assert res.by_rel().get(c + "src/lib.rs") is None  # no .rs files written yet
    write(root, c + "src/kernels/norm.rs")
    assert scan(root).by_rel()[c + "src/kernels/norm.rs"].module == "apxinf_cuda::kernels::norm"


def test_python_dotted_modules(tmp_path):
    root = tmp_path / "co"
    write(root, "python/apxinf/__init__.py")
    write(root, "python/apxinf/policy.py")
    write(root, "python/apxinf/models/__init__.py")
    write(root, "python/apxinf/models/pi05.py")
    write(root, "python/apxinf/nopkg/helper.py")  # no __init__.py: chain stops
    write(root, "scripts/run.py")
    assert python_module(root, "python/apxinf/__init__.py") == "apxinf"
    assert python_module(root, "python/apxinf/policy.py") == "apxinf.policy"
    assert python_module(root, "python/apxinf/models/pi05.py") == "apxinf.models.pi05"
    assert python_module(root, "python/apxinf/models/__init__.py") == "apxinf.models"
    assert python_module(root, "python/apxinf/nopkg/helper.py") == "helper"
    mods = {f.rel: f.module for f in scan(root).files}
    assert mods["python/apxinf/models/pi05.py"] == "apxinf.models.pi05"
    assert mods["scripts/run.py"] == "run"
