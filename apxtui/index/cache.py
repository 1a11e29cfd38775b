"""Per-file fact cache in SQLite (stdlib sqlite3), under the XDG cache directory.

One database per checkout path; rows keyed by relative path and content hash, so
an edited file misses and is re-parsed while the rest is reused.  The schema is
versioned (apxtui version + schema number + query fingerprint): a mismatching,
old or corrupt database is rebuilt with a notice, never a crash.  WAL mode and a
busy timeout let two processes index the same checkout without corrupting it.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sqlite3
import zlib
from collections.abc import Iterable
from pathlib import Path

from apxtui import __version__
from apxtui.facts import FileFacts

SCHEMA = 5  # pickled FileFacts; bump when facts.py changes shape


def code_fingerprint() -> str:
    """Hash of the extractor and linker sources: a changed apxtui invalidates the cache."""
    h = hashlib.blake2b(digest_size=8)
    pkg = Path(__file__).resolve().parent.parent
    for sub in ("facts.py", "scan.py", "parse", "index"):
        p = pkg / sub
        for f in sorted(p.rglob("*.py")) if p.is_dir() else [p]:
            try:
                h.update(f.read_bytes())
            except OSError:
                pass
    return h.hexdigest()


def cache_dir() -> Path:
    base = os.environ.get("APXTUI_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "apxtui"


def db_path(root: Path) -> Path:
    key = hashlib.blake2b(str(root).encode(), digest_size=8).hexdigest()
    return cache_dir() / f"{root.name}-{key}.sqlite"


class FactCache:
    """Content-addressed store of :class:`FileFacts` for one checkout."""

    def __init__(self, root: Path, fingerprint: str):
        self.path = db_path(root)
        self.stamp = f"{__version__}/{SCHEMA}/{fingerprint}/{code_fingerprint()}"
        self.notices: list[str] = []
        self.conn: sqlite3.Connection | None = None
        try:
            self._open()
        except (sqlite3.DatabaseError, OSError) as e:
            self.notices.append(f"cache {self.path}: {e}; rebuilding")
            self._reset()

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        conn.execute("CREATE TABLE IF NOT EXISTS files (rel TEXT PRIMARY KEY, sha TEXT NOT NULL, facts BLOB NOT NULL)")
        conn.execute("CREATE TABLE IF NOT EXISTS blobs (key TEXT PRIMARY KEY, value BLOB NOT NULL)")
        row = conn.execute("SELECT value FROM meta WHERE key='stamp'").fetchone()
        if row is None or row[0] != self.stamp:
            if row is not None:
                self.notices.append(f"cache {self.path}: made by {row[0]}, now {self.stamp}; rebuilding")
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("DELETE FROM files")
            conn.execute("DELETE FROM blobs")
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('stamp', ?)", (self.stamp,))
            conn.execute("COMMIT")
        conn.execute("SELECT count(*) FROM files").fetchone()  # surfaces corruption now
        self.conn = conn

    def _reset(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(str(self.path) + suffix)
            except OSError:
                pass
        try:
            self._open()
        except (sqlite3.DatabaseError, OSError) as e:
            self.notices.append(f"cache disabled: {e}")
            self.conn = None

    def load(self, wanted: dict[str, str]) -> dict[str, FileFacts]:
        """Facts for the files whose cached hash equals ``wanted[rel]``."""
        if self.conn is None or not wanted:
            return {}
        out: dict[str, FileFacts] = {}
        try:
            for rel, sha, blob in self.conn.execute("SELECT rel, sha, facts FROM files"):
                if wanted.get(rel) == sha:
                    out[rel] = pickle.loads(zlib.decompress(blob))
        except (sqlite3.DatabaseError, zlib.error, pickle.UnpicklingError, EOFError, AttributeError,
                ImportError, ValueError, TypeError, KeyError) as e:
            self.notices.append(f"cache {self.path}: unreadable ({e}); rebuilding")
            self._reset()
            return {}
        return out

    @staticmethod
    def read_one(db: Path, rel: str, sha: str) -> FileFacts | None:
        """One file's facts, by a short-lived read-only connection (lazy loading)."""
        try:
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
            try:
                row = conn.execute("SELECT sha, facts FROM files WHERE rel=?", (rel,)).fetchone()
            finally:
                conn.close()
            if row is None or row[0] != sha:
                return None
            facts: FileFacts = pickle.loads(zlib.decompress(row[1]))
            return facts
        except (sqlite3.DatabaseError, zlib.error, pickle.UnpicklingError, EOFError, ValueError):
            return None

    def store(self, facts: Iterable[FileFacts]) -> None:
        if self.conn is None:
            return
        rows = [(f.file, f.sha, zlib.compress(pickle.dumps(f, protocol=pickle.HIGHEST_PROTOCOL), 1)) for f in facts]
        if not rows:
            return
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.executemany("INSERT OR REPLACE INTO files VALUES (?, ?, ?)", rows)
            self.conn.execute("COMMIT")
        except sqlite3.DatabaseError as e:
            self.notices.append(f"cache {self.path}: could not store ({e})")

    def get_blob(self, key: str) -> bytes | None:
        if self.conn is None:
            return None
        try:
            row = self.conn.execute("SELECT value FROM blobs WHERE key=?", (key,)).fetchone()
        except sqlite3.DatabaseError:
            return None
        return None if row is None else row[0]

    def put_blob(self, key: str, value: bytes) -> None:
        if self.conn is None:
            return
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute("INSERT OR REPLACE INTO blobs VALUES (?, ?)", (key, value))
            self.conn.execute("COMMIT")
        except sqlite3.DatabaseError as e:
            self.notices.append(f"cache {self.path}: could not store graph ({e})")

    def latest_blob(self, prefix: str) -> tuple[str, bytes] | None:
        """The (only, after pruning) blob whose key starts with ``prefix``."""
        if self.conn is None:
            return None
        try:
            row = self.conn.execute("SELECT key, value FROM blobs WHERE key LIKE ? ORDER BY rowid DESC LIMIT 1",
                                    (prefix + "%",)).fetchone()
        except sqlite3.DatabaseError:
            return None
        return None if row is None else (row[0], row[1])

    def prune_blobs(self, prefix: str, keep: str) -> None:
        """Drop older blobs of one family (e.g. index snapshots) so the cache does not grow."""
        if self.conn is None:
            return
        try:
            self.conn.execute("DELETE FROM blobs WHERE key LIKE ? AND key != ?", (prefix + "%", keep))
        except sqlite3.DatabaseError:
            pass

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
