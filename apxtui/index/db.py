"""The index database of one checkout (stdlib sqlite3): schema, stamp, transactions.

One file per checkout path under the cache directory.  It holds the parse cache
(``facts``: per-file facts keyed by content, language and module path, several
versions side by side) and one *generation* of the linked index: the files it was
built from (``files``), the graph as per-file node rows with their out-edges
(``nodes``, ``rev``), the symbol tables as per-file contributions (``tabs``) and the
summary (``meta``).  A build replaces the generation in one transaction; a reader holds
a read transaction (WAL snapshot) for as long as it reads lazily, so it sees one
generation, never a mix, whatever other processes commit meanwhile.

A database made by another apxtui version, schema or query set, with an unexpected
table layout, or unreadable, is rebuilt with one notice; one that cannot be written
disables the cache for the run, also with one notice.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from apxtui import __version__

SCHEMA = 8  # bump when a table or a stored record changes shape

TABLES = {
    "meta": "CREATE TABLE meta (key TEXT PRIMARY KEY, value BLOB)",
    "stat": "CREATE TABLE stat (rel TEXT PRIMARY KEY, size INTEGER, mtime INTEGER, ctime INTEGER, ino INTEGER, "
            "sha TEXT) WITHOUT ROWID",
    "facts": "CREATE TABLE facts (rel TEXT, key TEXT, facts BLOB, iface BLOB, contrib BLOB, words BLOB, "
             "added INTEGER, PRIMARY KEY (rel, key))",
    "files": "CREATE TABLE files (rel TEXT PRIMARY KEY, rank INTEGER, key TEXT, lazy INTEGER, link BLOB, shared BLOB)",
    "nodes": "CREATE TABLE nodes (id TEXT PRIMARY KEY, owner TEXT, seq INTEGER, kind TEXT, last TEXT, attrs BLOB, "
             "out BLOB)",
    "rev": "CREATE TABLE rev (dst TEXT, src TEXT, PRIMARY KEY (dst, src)) WITHOUT ROWID",
    "tabs": "CREATE TABLE tabs (tab TEXT, key TEXT, rank INTEGER, value BLOB, PRIMARY KEY (tab, key, rank)) "
            "WITHOUT ROWID",
    "drops": "CREATE TABLE drops (cat TEXT, rank INTEGER, rel TEXT, line INTEGER, how TEXT, "
             "PRIMARY KEY (cat, rank)) WITHOUT ROWID",
    "blobs": "CREATE TABLE blobs (key TEXT PRIMARY KEY, value BLOB NOT NULL)",
}
INDEXES = {
    "nodes_owner": "CREATE INDEX nodes_owner ON nodes (owner, kind)",
    "nodes_seq": "CREATE INDEX nodes_seq ON nodes (seq)",
    "nodes_last": "CREATE INDEX nodes_last ON nodes (last)",
    "tabs_rank": "CREATE INDEX tabs_rank ON tabs (rank)",
    "drops_rank": "CREATE INDEX drops_rank ON drops (rank)",
}
#: Code whose change changes what is stored: facts, links, node ids.
FINGERPRINTED = ("facts.py", "scan.py", "vocab.py", "parse", "index")


#: A source changed more recently than this is hashed by content, its stat signature not trusted yet.
_RACY_NS = 2_000_000_000


def _fingerprinted() -> list[Path]:
    pkg = Path(__file__).resolve().parent.parent
    out: list[Path] = []
    for sub in FINGERPRINTED:
        p = pkg / sub
        out += sorted(p.rglob("*.py")) if p.is_dir() else [p]
    return out


def _content_fingerprint(files: list[Path]) -> str:
    h = hashlib.blake2b(digest_size=8)
    for f in files:
        try:
            h.update(f.name.encode() + b"\0" + f.read_bytes())
        except OSError:
            pass
    return h.hexdigest()


def code_fingerprint() -> str:
    """Hash of the extractor, scanner and linker sources: a changed apxtui invalidates the cache.

    Remembered in the cache directory under the sources' stat signatures (path, size, mtime,
    ctime, inode: any write to a source changes its ctime), so a start reads them only after a
    change (or in a new install)."""
    files = _fingerprinted()
    sig = hashlib.blake2b(digest_size=16)
    newest = 0
    for f in files:
        try:
            st = f.stat()
            sig.update(f"{f}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0{st.st_ino}\n".encode())
            newest = max(newest, st.st_ctime_ns)
        except OSError:
            sig.update(f"{f}\0-\n".encode())
    if time.time_ns() - newest <= _RACY_NS:  # written just now: another write could keep the signature
        return _content_fingerprint(files)
    memo = cache_dir() / f"code-{sig.hexdigest()}"
    try:
        got = memo.read_text("ascii")
        if len(got) == 16 and all(c in "0123456789abcdef" for c in got):
            return got
    except OSError:
        pass
    digest = _content_fingerprint(files)
    try:  # a new name per signature: written whole (renamed into place) or not at all; the others go
        memo.parent.mkdir(parents=True, exist_ok=True)
        tmp = memo.with_name(f"{memo.name}.{os.getpid()}")
        tmp.write_text(digest, "ascii")
        os.replace(tmp, memo)
        for old in memo.parent.glob("code-*"):
            if old != memo:
                old.unlink(missing_ok=True)
    except OSError:
        pass
    return digest


def cache_dir() -> Path:
    base = os.environ.get("APXTUI_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "apxtui"


def db_path(root: Path) -> Path:
    key = hashlib.blake2b(str(root).encode(), digest_size=8).hexdigest()
    return cache_dir() / f"{root.name}-{key}.sqlite"


class CacheUnavailable(Exception):
    """The database cannot be opened or written (the notice says why)."""


class Database:
    """One connection to the index database (or a private temporary one: ``temporary=True``).

    ``notices`` collects what the user should be told (one line each).  Writes go through
    :meth:`write` (one transaction, rolled back on any error); lazy readers call
    :meth:`begin_read` once and read inside that snapshot until :meth:`end_read`.
    """

    def __init__(self, path: Path | None, stamp: str, *, temporary: bool = False):
        self.notices: list[str] = []
        self.stamp = stamp
        self._tmpdir: str | None = None
        if temporary:
            import tempfile  # lazy: start-up (a cached index needs no temporary database)

            self._tmpdir = tempfile.mkdtemp(prefix="apxtui-")
            path = Path(self._tmpdir) / "index.sqlite"
        assert path is not None
        self.path = path
        self.temporary = temporary
        self.reading = False
        self.lock = threading.RLock()  # one connection, read from the explorer's worker threads too
        self.conn = self._connect_or_rebuild()

    # -- opening -------------------------------------------------------------------------

    def _connect_or_rebuild(self) -> sqlite3.Connection:
        try:
            return self._connect()
        except CacheUnavailable as e:
            raise CacheUnavailable(f"cache disabled: {self.path}: {e}") from None
        except sqlite3.DatabaseError as e:  # corrupt, not a database, unexpected layout
            self.notices.append(f"cache {self.path}: unreadable ({e}); rebuilding")
        self._unlink()
        try:
            return self._connect()
        except (CacheUnavailable, sqlite3.DatabaseError) as e:
            raise CacheUnavailable(f"cache disabled: {self.path}: {e}") from None

    def _connect(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise CacheUnavailable(e.strerror or str(e)) from None
        if not os.access(self.path.parent, os.W_OK) or (self.path.exists() and not os.access(self.path, os.W_OK)):
            raise CacheUnavailable("not writable")
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        try:
            if not self.temporary:
                conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL" if not self.temporary else "PRAGMA synchronous=OFF")
            self._check_schema(conn)
        except sqlite3.OperationalError as e:
            conn.close()
            if "readonly" in str(e) or "unable to open" in str(e):
                raise CacheUnavailable(str(e)) from None
            raise
        except BaseException:
            conn.close()
            raise
        return conn

    def _check_schema(self, conn: sqlite3.Connection) -> None:
        """Create the tables, or drop and re-create them all when the stamp or layout differs."""
        have = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type IN ('table', 'index') "
                                 "AND name NOT LIKE 'sqlite_%'"))
        want = {**TABLES, **INDEXES}
        stamp = None
        if "meta" in have:
            row = conn.execute("SELECT value FROM meta WHERE key='stamp'").fetchone()
            stamp = row[0] if row else None
        if have == want and stamp == self.stamp:
            conn.execute("SELECT count(*) FROM files").fetchone()  # surfaces corruption now
            return
        if have and stamp is not None and stamp != self.stamp:
            self.notices.append(f"cache {self.path}: made by {stamp}, now {self.stamp}; rebuilding")
        elif have and have != want:
            self.notices.append(f"cache {self.path}: unexpected table layout; rebuilding")
        conn.execute("BEGIN IMMEDIATE")
        try:
            kinds = dict(conn.execute("SELECT name, type FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"))
            for name, kind in kinds.items():
                if kind == "table":  # its indexes go with it
                    conn.execute(f'DROP TABLE IF EXISTS "{name}"')
            for sql in (*TABLES.values(), *INDEXES.values()):
                conn.execute(sql)
            conn.execute("INSERT INTO meta VALUES ('stamp', ?)", (self.stamp,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _unlink(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(str(self.path) + suffix)
            except OSError:
                pass

    # -- transactions --------------------------------------------------------------------

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: committed when the block ends, rolled back on any error.  A
        database that cannot be written now (read-only, full disk, locked by another writer
        past the timeout) raises :class:`CacheUnavailable`."""
        if self.reading:
            self.end_read()
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as e:
            raise CacheUnavailable(f"cache disabled: {self.path}: {e}") from None
        try:
            yield self.conn
            self.conn.execute("COMMIT")
        except BaseException as e:
            try:
                self.conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            if isinstance(e, sqlite3.OperationalError):
                raise CacheUnavailable(f"cache disabled: {self.path}: could not store ({e})") from None
            raise

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the database now (after a big write), not in some
        later, small command's commit.  Passive: never waits for a reader holding an older
        snapshot (an open explorer); what it still reads stays in the log."""
        if not self.temporary:
            try:
                self.conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            except sqlite3.Error:
                pass

    def begin_read(self) -> None:
        """Start the snapshot every later read sees (until :meth:`end_read`)."""
        if self.reading:
            self.end_read()
        self.conn.execute("BEGIN")
        self.conn.execute("SELECT count(*) FROM meta").fetchone()  # takes the snapshot now
        self.reading = True

    def end_read(self) -> None:
        if self.reading:
            self.reading = False
            try:
                self.conn.execute("COMMIT")
            except sqlite3.Error:
                pass

    def store_beside(self, key: str, value: bytes, replaces: str) -> None:
        """Store ``value`` under ``key`` in ``blobs`` (deleting the keys starting with ``replaces``) on a
        connection of its own, so the read snapshot this one holds stays as it is.  Best effort: a
        temporary, read-only or busy database stores nothing (the value is made again next time)."""
        if self.temporary:
            return
        try:
            with closing(sqlite3.connect(self.path, timeout=0.5, isolation_level=None)) as c:
                c.execute("BEGIN IMMEDIATE")
                c.execute("DELETE FROM blobs WHERE substr(key, 1, ?) = ?", (len(replaces), replaces))
                c.execute("INSERT OR REPLACE INTO blobs VALUES (?, ?)", (key, value))
                c.execute("COMMIT")
        except sqlite3.Error:
            pass

    def meta(self, key: str) -> Any:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else row[0]

    def close(self) -> None:
        try:
            self.conn.close()
        except sqlite3.Error:
            pass
        if self._tmpdir:
            import shutil  # lazy: start-up

            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    def detach_temporary(self) -> None:
        """A temporary database is only read from now on: remove its file (the open
        connection keeps reading it), so nothing is left behind however the process ends."""
        if self._tmpdir:
            import shutil  # lazy: start-up

            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None


def stamp(queries: str) -> str:
    return f"{__version__}/{SCHEMA}/{queries}/{code_fingerprint()}"
