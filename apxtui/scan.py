"""Discovery: which files of a checkout are indexed, in which language, and the git state.

Files are the git-tracked plus untracked-not-ignored ones in a git checkout (a plain
walk otherwise).  Vendored trees are listed but flagged ``vendored``: the indexer
parses them lazily, only where a path leads into them.  Nothing here writes to the
checkout or runs anything from it (``git`` is only asked to list and describe).
"""

from __future__ import annotations

import os
import re
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from apxtui.errors import InputFileError, ScanError
from apxtui.facts import Issue
from apxtui.inputs import read_toml
from apxtui.packages import TARGET_DIRS, Packages, ident, is_manifest

EXTENSIONS: dict[str, str] = {
    ".rs": "rust",
    ".cu": "cuda",
    ".cuh": "cuda",
    ".h": "cuda",
    ".hpp": "cuda",
    ".cpp": "cuda",
    ".cc": "cuda",
    ".cxx": "cuda",
    ".inl": "cuda",
    ".py": "python",
    ".pyi": "python",
}

DEFAULT_VENDORED = ("third_party", "vendor", "cutlass", "external")
#: Directories never walked in a plain (non-git) walk.
SKIP_DIRS = {".git", ".hg", ".svn", "target", "node_modules", "__pycache__", ".venv", "venv", ".tox"}
MAX_BYTES = 4 * 1024 * 1024


@dataclass
class SourceFile:
    rel: str  # relative path, "/" separated
    lang: str
    size: int
    vendored: bool = False
    module: str = ""  # Rust module qualname or Python dotted module
    stat: tuple[int, int, int, int] = (0, 0, 0, 0)  # (size, mtime_ns, ctime_ns, inode): the cache's change check


@dataclass
class GitInfo:
    revision: str = ""
    branch: str = ""
    modified: list[str] = field(default_factory=list)
    untracked: list[str] = field(default_factory=list)

    @property
    def dirty(self) -> bool:
        return bool(self.modified or self.untracked)


@dataclass
class ScanResult:
    root: Path
    files: list[SourceFile]
    skipped: list[Issue]
    git: GitInfo | None
    other_files: int = 0  # files with extensions apxtui does not index
    packages: Packages = field(default_factory=Packages)  # package boundaries (Cargo.toml, pyproject.toml)

    def by_rel(self) -> dict[str, SourceFile]:
        return {f.rel: f for f in self.files}


def _git(root: Path, *args: str, stderr: list[str] | None = None) -> str | None:
    """stdout of ``git -C root ARGS`` (None on failure); its stderr lines go to ``stderr`` when given."""
    import subprocess  # lazy: start-up (a plain directory runs no git)

    try:
        out = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            timeout=30,
            check=False,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if stderr is not None:
        stderr.extend(out.stderr.decode("utf-8", "replace").splitlines())
    if out.returncode != 0:
        return None
    return out.stdout.decode("utf-8", "surrogateescape")


def in_git_work_tree(root: Path) -> bool:
    """Could ``git`` find a repository for ``root``?  It looks for ``.git`` (a directory, or a file
    pointing elsewhere) in ``root`` and each directory above it, unless ``GIT_DIR`` names one: when
    neither holds, git would only fail, so it is not run (each run costs a process start)."""
    if os.environ.get("GIT_DIR"):
        return True
    return any(os.path.lexists(os.path.join(d, ".git")) for d in (root, *root.parents))


def git_info(root: Path) -> GitInfo | None:
    info = GitInfo()
    head = _git(root, "rev-parse", "--show-toplevel", "--show-prefix", "HEAD", "--abbrev-ref", "HEAD")
    lines = head.split("\n") if head is not None else []
    if len(lines) >= 4:  # one call: top, prefix, revision, branch
        prefix, info.revision, info.branch = lines[1].strip(), lines[2].strip(), lines[3].strip()
    else:  # not a repository, or no commit yet: one question at a time
        if _git(root, "rev-parse", "--show-toplevel") is None:
            return None
        info.revision = (_git(root, "rev-parse", "HEAD") or "").strip() or "(no commits)"
        info.branch = (_git(root, "rev-parse", "--abbrev-ref", "HEAD") or "").strip()
        prefix = (_git(root, "rev-parse", "--show-prefix") or "").strip()  # status paths are top-relative
    status = _git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".") or ""
    entries = status.split("\0")
    i = 0
    while i < len(entries):
        e = entries[i]
        i += 1
        if len(e) < 4:
            continue
        code, path = e[:2], e[3:]
        path = path.removeprefix(prefix)
        if code[0] in "RC":  # rename/copy: the next entry is the source path
            i += 1
        if code == "??":
            info.untracked.append(path)
        else:
            info.modified.append(path)
    return info


_GIT_UNREADABLE = re.compile(r"could not open directory '(.+)': (.+)$")


def _git_files(root: Path, skipped: list[Issue] | None = None) -> list[str] | None:
    """Tracked (incl. inside submodules) plus untracked-not-ignored files, relative to ``root``.

    Directories git could not open while looking for untracked files go to ``skipped``.
    """
    tracked = _git(root, "ls-files", "-z", "--cached", "--recurse-submodules", "--", ".")
    if tracked is None:  # e.g. a git too old for --recurse-submodules
        tracked = _git(root, "ls-files", "-z", "--cached", "--", ".")
    warnings: list[str] = []
    others = _git(root, "ls-files", "-z", "--others", "--exclude-standard", "--", ".", stderr=warnings)
    unlisted = [m for m in map(_GIT_UNREADABLE.search, warnings) if m]
    if unlisted and skipped is not None:
        prefix = (_git(root, "rev-parse", "--show-prefix") or "").strip()  # git names them from the top
        for m in unlisted:
            skipped.append(Issue(m.group(1).removeprefix(prefix), "unreadable", f"directory not listed: {m.group(2)}"))
    if tracked is None or others is None:
        return None
    # ls-files already prints paths relative to the directory it runs in (-C root)
    return sorted({p for p in (tracked + "\0" + others).split("\0") if p})


def _holds(test: Callable[[], bool]) -> bool:
    """``test()``, False when it fails (as ``os.walk`` takes a directory entry it cannot test)."""
    try:
        return test()
    except OSError:
        return False


def _walk_files(root: Path, skipped: list[Issue] | None = None) -> list[str]:
    """Every file under ``root`` (plain walk, as ``os.walk`` without following directory symlinks,
    in one loop over ``os.scandir``: no generator per level); directories that cannot be listed go to
    ``skipped`` (in walk order), with none of their files."""
    files: list[str] = []
    base = str(root)
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        prefix = rel_dir + "/" if rel_dir else ""
        here: list[str] = []
        subdirs: list[str] = []
        try:
            with os.scandir(f"{base}/{rel_dir}" if rel_dir else base) as entries:
                for e in entries:
                    if not _holds(e.is_dir):
                        here.append(prefix + e.name)
                    elif e.name not in SKIP_DIRS and not _holds(e.is_symlink):
                        subdirs.append(prefix + e.name)
        except OSError as e:
            if skipped is not None:
                skipped.append(Issue(prefix, "unreadable", f"directory not listed: {e.strerror or e}"))
            continue
        files += here
        stack += sorted(subdirs, reverse=True)  # popped in name order: the walk's order
    return sorted(files)


def is_vendored(rel: str, vendored: tuple[str, ...] = DEFAULT_VENDORED) -> bool:
    return any(part in vendored for part in rel.split("/")[:-1])


def checkout_dir(root: str | Path) -> Path:
    """``root`` resolved, or :class:`ScanError` when it is no readable directory."""
    root = Path(root)
    if not root.exists():
        raise ScanError(f"{root}: no such directory")
    if not root.is_dir():
        raise ScanError(f"{root}: not a directory")
    try:
        root = root.resolve()
        os.listdir(root)
    except OSError as e:
        raise ScanError(f"{root}: cannot read directory ({e.strerror or e})") from e
    return root


def scan(root: str | Path, vendored: tuple[str, ...] = DEFAULT_VENDORED) -> ScanResult:
    """List the indexable files of ``root`` (a checkout directory)."""
    root = checkout_dir(root)
    skipped: list[Issue] = []
    if not in_git_work_tree(root):
        return _scan_files(root, vendored, _walk_files(root, skipped), skipped, None)
    listing: dict[str, Any] = {}

    def list_files() -> None:  # git ls-files beside git status (each waits on its own process)
        try:
            listing["rels"] = _git_files(root, listing.setdefault("skipped", []))
        except BaseException as e:  # noqa: BLE001 - raised below when the checkout is a repository
            listing["error"] = e

    lister = threading.Thread(target=list_files)
    lister.start()
    git = git_info(root)
    lister.join()
    rels = None
    if git is not None:
        if "error" in listing:
            raise listing["error"]
        rels = listing.get("rels")
        skipped += listing.get("skipped", [])
    if rels is None:
        rels = _walk_files(root, skipped)
    return _scan_files(root, vendored, rels, skipped, git)


def _scan_files(root: Path, vendored: tuple[str, ...], rels: list[str], skipped: list[Issue],
                git: GitInfo | None) -> ScanResult:
    """The scan of the listed files ``rels`` (relative to ``root``)."""
    files: list[SourceFile] = []
    other = 0
    crates = CrateMap(root, skipped)
    manifests: list[str] = []
    root_s = str(root) + os.sep
    pkg_dirs: dict[str, bool] = {}  # dir → has __init__.py (Python module paths)
    for rel in rels:
        dot = rel.rfind(".")
        lang = EXTENSIONS.get(rel[dot:].lower()) if dot > rel.rfind("/") else None
        if lang is None:
            other += 1
            if is_manifest(rel):
                manifests.append(rel)
            continue
        full = root_s + rel
        try:
            st = os.lstat(full)
        except FileNotFoundError:
            continue  # tracked but deleted in the working tree (listed in git.modified)
        except OSError as e:
            skipped.append(Issue(rel, "unreadable", f"cannot stat: {e.strerror or e}"))
            continue
        if stat.S_ISLNK(st.st_mode):
            try:
                target = Path(full).resolve(strict=True)
            except (OSError, RuntimeError):  # dangling, or a loop (RuntimeError before 3.13)
                skipped.append(Issue(rel, "symlink", "broken symlink (dangling or a loop); not followed"))
                continue
            if not target.is_file() or not target.is_relative_to(root):
                skipped.append(
                    Issue(rel, "symlink", "symlink outside the checkout or not a file; not followed")
                )
                continue
            st = target.stat()
        elif not stat.S_ISREG(st.st_mode):
            skipped.append(Issue(rel, "not_a_file", f"a {_file_kind(st.st_mode)}, not a regular file; not read"))
            continue
        if st.st_size > MAX_BYTES:
            skipped.append(Issue(rel, "too_large", f"{st.st_size:,} bytes (limit {MAX_BYTES:,}); not parsed"))
            continue
        sf = SourceFile(rel, lang, st.st_size, is_vendored(rel, vendored),
                        stat=(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
        if lang == "rust":
            sf.module = crates.rust_module(rel)
        elif lang == "python":
            sf.module = python_module(root, rel, pkg_dirs)
        files.append(sf)
    packages = Packages.read(root, manifests, set(rels))
    skipped += [Issue(rel, "manifest", f"{msg.removeprefix(rel + ': ')}; its package boundaries are not applied")
                for rel, msg in packages.problems]
    return ScanResult(root, files, skipped, git, other, packages)


# -- module paths ----------------------------------------------------------------------


def python_module(root: Path, rel: str, pkg_dirs: dict[str, bool] | None = None) -> str:
    """Dotted module of a Python file: package dirs (with __init__.py) above it + stem."""
    pkg_dirs = {} if pkg_dirs is None else pkg_dirs
    stem = PurePosixPath(rel).stem
    parts = [] if stem == "__init__" else [stem]
    d = rel.rpartition("/")[0]
    base = str(root)
    while d not in ("", "."):
        if d not in pkg_dirs:
            pkg_dirs[d] = os.path.exists(f"{base}/{d}/__init__.py")
        if not pkg_dirs[d]:
            break
        d, _, last = d.rpartition("/")
        parts.insert(0, last)
    return ".".join(parts) or stem


def _file_kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"),
                       (stat.S_ISBLK, "block device"), (stat.S_ISDIR, "directory")):
        if test(mode):
            return name
    return "special file"


class CrateMap:
    """Maps a Rust file to its module path via the nearest Cargo.toml above it.

    A manifest that cannot be used (outside the checkout, over 1 MiB, malformed) leaves the
    crate named after its directory and is listed in ``issues``.
    """

    def __init__(self, root: Path, issues: list[Issue] | None = None):
        self.root = root
        self.issues = issues if issues is not None else []
        self._names: dict[str, str | None] = {}
        self._dirs: dict[str, tuple[str, str]] = {}

    def _crate_name(self, d: str) -> str | None:
        """The crate name of ``d/Cargo.toml`` (``d`` relative, "" for the root), None without one."""
        key = d
        if key not in self._names:
            rel = f"{d}/Cargo.toml" if d else "Cargo.toml"
            name = None
            if os.path.lexists(f"{self.root}/{rel}"):
                name = d.rpartition("/")[2] or self.root.name
                try:
                    data = read_toml(self.root, rel)
                    pkg, lib = data.get("package", {}), data.get("lib", {})
                    pkg, lib = (pkg if isinstance(pkg, dict) else {}), (lib if isinstance(lib, dict) else {})
                    name = lib.get("name") or pkg.get("name") or name
                except InputFileError as e:
                    self.issues.append(Issue(rel, "manifest", str(e).removeprefix(f"{rel}: ")
                                             + "; crate named after its directory"))
                name = ident(str(name))
            self._names[key] = name
        return self._names[key]

    def _crate_of(self, d: str) -> tuple[str, str]:
        """(crate directory, crate name) of the nearest Cargo.toml at or above directory ``d``."""
        hit = self._dirs.get(d)
        if hit is None:
            name = self._crate_name(d)
            if name is not None:
                hit = (d, name)
            elif not d:
                hit = ("", ident(self.root.name))
            else:
                hit = self._crate_of(d.rpartition("/")[0])
            self._dirs[d] = hit
        return hit

    def rust_module(self, rel: str) -> str:
        crate_dir, name = self._crate_of(rel.rpartition("/")[0])
        parts = (rel[len(crate_dir) + 1:] if crate_dir else rel).split("/")
        stem, dot, _ = parts[-1].rpartition(".")
        parts[-1] = stem if dot and stem else parts[-1]
        if len(parts) >= 3 and parts[:2] == ["src", "bin"] or len(parts) >= 2 and parts[0] in TARGET_DIRS:
            # a binary / test / example / bench target is its own crate, named after the file or dir
            parts = parts[2:] if parts[0] == "src" else parts[1:]
            name = ident(parts[0])
            parts = parts[1:]
        elif parts[0] == "src":
            parts = parts[1:]
        if parts and (parts[-1] == "mod" or (parts in (["lib"], ["main"]))):
            parts = parts[:-1]  # a/mod.rs is module a; lib.rs / main.rs at the top are the crate root
        return "::".join([name, *(ident(x) for x in parts)])
