"""Background jobs that cannot starve the event loop: CPU-bound work in a forked child process.

A job is a generator function ``fn(*args)`` that yields picklable messages.  It runs in a
child forked from this process, so it sees the index already in memory (copy-on-write) and
the session exactly as it was when the job started; the parent reads the messages as they
arrive (``async for msg in job.messages()``) without a thread.  A job may end by yielding
:class:`Serve`: the child then keeps its results and answers :meth:`Job.request` calls
(while the consumer is still iterating ``messages()``).  :meth:`Job.cancel` kills the child
at once: this is what makes ``q`` and a superseded analysis immediate.  :meth:`Jobs.pause` stops
the children still computing while the UI handles a key (SIGSTOP; a watchdog thread continues them
after ``MAX_PAUSE`` at the latest), so on two cores the UI never shares its CPU with its own analysis.

Where ``fork`` is unavailable (macOS and Windows default to spawn) the same API runs the
generator in a daemon thread instead; cancelling it then takes effect at its next message.
Nothing here imports Textual.
"""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

JobFn = Callable[..., Iterator[Any]]

#: What ``Job.messages()`` yields when the job starts serving requests (see :class:`Serve`).
SERVING = "<serving>"

#: How much lower than the UI a forked job runs (``nice``): on a busy machine keys still come first.
NICE = 10
#: Groups whose result the user is waiting for (the map after ``]``, an export): not niced, or a busy
#: machine's other processes starve them (a 0.2 s map update took 5-14 s at load 20 when niced).
INTERACTIVE = frozenset({"map", "export", "copy"})

#: The longest a computing job stays stopped for keys (:meth:`Jobs.pause`) …
MAX_PAUSE = 0.3
#: … after which it runs at least this long whatever keys come (a held key does not starve it).
MIN_RUN = 0.1

#: Run jobs in forked children (False: threads).  Tests may flip it to cover the fallback.
USE_FORK = "fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin"


_IN_CHILD = False
#: The parent's ends of the running jobs' pipes.  A forked child closes its copies at once: a copy
#: kept open in one job would stop another job seeing the parent go (no EOF), so two serving jobs
#: could outlive the app holding each other's pipes.
_PARENT_ENDS: set[Any] = set()


def in_child() -> bool:
    """True in a forked job process (where locks copied from the parent may be held forever)."""
    return _IN_CHILD


class JobFailed(RuntimeError):
    """The job raised (the message names the exception) or its process died."""


@dataclass
class Serve:
    """Yielded last by a job that answers requests: ``handler(request) -> reply`` runs where the job runs."""

    handler: Callable[[Any], Any]


def _resolve(fut: asyncio.Future[Any]) -> None:
    if not fut.done():
        fut.set_result(None)


def _error(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


def _detach_signals() -> None:
    """The child leaves the terminal's signals to the UI: its own process group (no SIGWINCH, SIGINT …
    from the terminal), no wakeup fd (asyncio's points at the parent's event loop) and the default
    actions for job control (the UI's handlers need its event loop)."""
    try:
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGWINCH, signal.SIGINT, signal.SIGTSTP):
            signal.signal(sig, signal.SIG_IGN)
        for sig in (signal.SIGCONT, signal.SIGTTIN, signal.SIGTTOU):  # the terminal driver's handlers, inherited:
            signal.signal(sig, signal.SIG_DFL)  # its SIGCONT one (asyncio) raised in a job continued by Jobs.resume
        os.setpgrp()
    except (OSError, ValueError, AttributeError):
        pass


def _die_with(parent: int) -> None:
    """Be killed when the UI process dies, even while stopped (:meth:`Jobs.pause`): Linux's parent-death
    signal.  Elsewhere (no prctl) the pipe's EOF ends the child once it runs."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(0)


def _child_main(conn: Connection, fn: JobFn, args: tuple[Any, ...], nice: int = NICE, parent: int = 0) -> None:
    """In the forked child: run ``fn``, send what it yields, serve requests; never touch the terminal."""
    global _IN_CHILD
    _IN_CHILD = True
    if parent:
        _die_with(parent)
    for end in list(_PARENT_ENDS):
        try:
            end.close()
        except OSError:
            pass
    _PARENT_ENDS.clear()
    _detach_signals()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # the terminal belongs to the parent's UI
        os.dup2(devnull, fd)
    sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the child
    gc.disable()  # short-lived: a collection would only copy the parent's pages
    try:
        if nice:
            os.nice(nice)  # the keys come first: the UI process keeps its priority, the background yields
    except OSError:
        pass
    try:
        handler = None
        for msg in fn(*args):
            if isinstance(msg, Serve):
                handler = msg.handler
                break
            conn.send(("msg", msg))
        conn.send(("serving" if handler else "done", None))
        while handler is not None:
            rid, request = conn.recv()
            try:
                conn.send(("reply", (rid, True, handler(request))))
            except Exception as e:  # noqa: BLE001 - this request failed; the next may not
                conn.send(("reply", (rid, False, _error(e))))
    except EOFError:  # the parent closed the pipe: it is gone or done with us
        pass
    except BaseException as e:  # noqa: BLE001 - reported to the parent, which shows it
        try:
            conn.send(("error", _error(e)))
        except Exception:  # noqa: BLE001 - the parent is gone
            pass
    finally:
        conn.close()
        os._exit(0)


class Job:
    """One running job; iterate :meth:`messages` once, from the event loop."""

    def __init__(self, name: str, fn: JobFn, *args: Any, fork: bool | None = None, nice: int = NICE) -> None:
        self.name = name
        self.cancelled = False
        self.serving = False  # the job finished computing and answers requests
        self.forked = USE_FORK if fork is None else fork
        self._replies: dict[int, asyncio.Future[Any]] = {}  # a request's reply: whatever the handler returns
        self._next_id = 0
        self._handler: Callable[[Any], Any] | None = None
        self._wake: asyncio.Future[None] | None = None  # what the pipe reader awaits (cancel resolves it)
        self._settled = asyncio.Event()  # set when the job serves, ends or is cancelled
        self.ended: str | None = None  # why the job stopped (its exception, "cancelled" …), said by request()
        self.stopped = False  # SIGSTOPped by Jobs.pause
        if self.forked:
            ctx = multiprocessing.get_context("fork")
            self._conn, child = ctx.Pipe(duplex=True)
            self._proc = ctx.Process(target=_child_main, args=(child, fn, args, nice, os.getpid()), daemon=True,
                                     name=f"apxtui-{name}")
            # Listed before the fork: the child closes its copy of this end too, so it sees EOF (and ends)
            # when the UI process dies; holding it, the child waited for requests forever.
            _PARENT_ENDS.add(self._conn)
            try:
                with warnings.catch_warnings():  # 3.12+ warns about fork with threads; the child runs no thread
                    warnings.simplefilter("ignore", DeprecationWarning)
                    self._proc.start()
            except BaseException:
                _PARENT_ENDS.discard(self._conn)
                raise
            child.close()
        else:
            self._queue: asyncio.Queue[tuple[str, Any]] | None = None
            self._pending: list[tuple[str, Any]] = []
            self._lock = threading.Lock()
            self._loop: asyncio.AbstractEventLoop | None = None
            self._thread = threading.Thread(target=self._thread_main, args=(fn, args), daemon=True,
                                            name=f"apxtui-{name}")
            self._thread.start()

    # -- thread fallback -------------------------------------------------------------------

    def _put(self, item: tuple[str, Any]) -> None:
        with self._lock:
            if self._loop is None or self._queue is None:
                self._pending.append(item)
                return
            loop, queue = self._loop, self._queue
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the loop is closed: the app has exited
            pass

    def _thread_main(self, fn: JobFn, args: tuple[Any, ...]) -> None:
        try:
            for msg in fn(*args):
                if self.cancelled:
                    return
                if isinstance(msg, Serve):
                    self._handler = msg.handler
                    self._put(("serving", None))
                    return
                self._put(("msg", msg))
            self._put(("done", None))
        except BaseException as e:  # noqa: BLE001 - reported to the consumer
            self._put(("error", _error(e)))

    # -- consuming -------------------------------------------------------------------------

    async def messages(self) -> AsyncIterator[Any]:
        """What the job yields, as it arrives; raises :class:`JobFailed`; ends early when cancelled."""
        try:
            if self.forked:
                async for m in self._from_pipe():
                    yield m
            else:
                async for m in self._from_queue():
                    yield m
        finally:
            self.cancel()  # a consumer that stops early (or is cancelled) ends the job

    async def wait_serving(self) -> bool:
        """Wait until the job serves requests (True) or ends without serving (False)."""
        if not self.serving and not self.cancelled:
            await self._settled.wait()
        return self.serving

    async def _from_pipe(self) -> AsyncIterator[Any]:
        loop = asyncio.get_running_loop()
        fd = self._conn.fileno()
        while not self.cancelled:
            if not self._conn.poll():
                self._wake = ready = loop.create_future()
                loop.add_reader(fd, _resolve, ready)
                try:
                    await ready
                finally:
                    loop.remove_reader(fd)
                    self._wake = None
                if self.cancelled:
                    return
            self.cont()  # stopped halfway through a message, the child would never finish it for recv()
            try:
                tag, payload = self._conn.recv()
            except (EOFError, OSError):
                if self.cancelled:
                    return
                self._proc.join(0.5)
                raise JobFailed(self._end(f"the background process ended unexpectedly "
                                          f"(exit code {self._proc.exitcode})")) from None
            if tag == "msg":
                yield payload
            elif tag == "reply":
                self._reply(*payload)
            elif tag == "serving":
                self.serving = True
                self._settled.set()
                yield SERVING
            elif tag == "error":
                raise JobFailed(self._end(payload, named=False))
            else:
                self._end("it ended without serving")
                return

    def _end(self, why: str, named: bool = True) -> str:
        """Record why the job stopped (the first reason wins) and return it as a message naming the job."""
        if self.ended is None:
            self.ended = why
        self._settled.set()
        return f"{self.name}: {why}" if named else why

    def _reply(self, rid: int, ok: bool, value: Any) -> None:
        fut = self._replies.pop(rid, None)
        if fut is not None and not fut.done():
            fut.set_result(value) if ok else fut.set_exception(JobFailed(value))

    async def request(self, request: Any) -> Any:
        """Ask a serving job (see :class:`Serve`); raises :class:`JobFailed` if it cannot answer."""
        if self.cancelled or not self.serving:
            raise JobFailed(f"{self.name}: not serving ({self.ended or 'it has not started serving yet'})")
        if not self.forked:
            assert self._handler is not None
            try:
                return await asyncio.to_thread(self._handler, request)
            except Exception as e:  # noqa: BLE001 - the same contract as a forked server
                raise JobFailed(_error(e)) from e
        self._next_id += 1
        fut = asyncio.get_running_loop().create_future()
        self._replies[self._next_id] = fut
        try:
            self._conn.send((self._next_id, request))
        except (OSError, ValueError) as e:
            self._replies.pop(self._next_id, None)
            raise JobFailed(f"{self.name}: {e}") from None
        return await fut

    async def _from_queue(self) -> AsyncIterator[Any]:
        with self._lock:
            self._loop = asyncio.get_running_loop()
            self._queue = asyncio.Queue()
            for item in self._pending:
                self._queue.put_nowait(item)
            self._pending.clear()
        while not self.cancelled:
            tag, payload = await self._queue.get()
            if tag == "msg":
                yield payload
            elif tag == "serving":
                self.serving = True
                self._settled.set()
                yield SERVING
                self._wake = asyncio.get_running_loop().create_future()
                await self._wake  # keep "iterating" until cancelled, as a forked server does
                return
            elif tag == "error":
                raise JobFailed(self._end(payload, named=False))
            else:
                self._end("it ended without serving")
                return

    def stop(self) -> None:
        """Stop a forked child that is still computing (SIGSTOP) until :meth:`cont`; a serving one, a
        thread or an ended job is left alone (a request's reply is what the UI waits for)."""
        # is_alive() reaps a child that has ended: its pid, perhaps another process's now, is never signalled
        pid = self._proc.pid if self.forked else None
        if pid and not (self.stopped or self.serving or self.cancelled) and self._proc.is_alive():
            try:
                os.kill(pid, signal.SIGSTOP)
            except OSError:
                return
            self.stopped = True

    def cont(self) -> None:
        """Continue a child stopped by :meth:`stop` (safe from any thread, and twice)."""
        pid = self._proc.pid if self.forked else None
        if self.stopped and pid and self._proc.is_alive():
            self.stopped = False
            try:
                os.kill(pid, signal.SIGCONT)
            except OSError:
                pass

    def cancel(self) -> None:
        """Stop the job now (kills the child; a thread stops at its next message)."""
        if self.cancelled:
            return
        self.cancelled = True
        self.serving = False
        self.stopped = False  # killed even when stopped; nothing continues a pid that may be reused
        self._end("cancelled")
        for fut in self._replies.values():
            if not fut.done():
                fut.set_exception(JobFailed(f"{self.name}: cancelled"))
        self._replies.clear()
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)
        if self.forked:
            if self._proc.is_alive():
                self._proc.kill()
            _PARENT_ENDS.discard(self._conn)
            self._conn.close()
            # reaped off the event loop: a child with a large heap takes a moment to be torn down
            threading.Thread(target=self._proc.join, daemon=True, name="apxtui-reap").start()

    @property
    def running(self) -> bool:
        if self.cancelled:
            return False
        return self._proc.is_alive() if self.forked else self._thread.is_alive()


async def serve_first(job: Job, first: asyncio.Future[Any], note: Callable[[Any], None],
                      is_result: Callable[[Any], bool]) -> None:
    """Read a serving ``job`` until it ends: its first result (a message ``is_result`` accepts) goes to
    ``first`` once the job *serves*, so a request made on that result finds it serving (the result arrives
    just before the job serves; resolved at once, a request in between was refused).  ``note`` sees every
    other message (progress, :data:`SERVING`); the job's failure goes to ``first`` while it is not set."""
    built: list[Any] = []
    try:
        async for msg in job.messages():
            if msg is not SERVING and is_result(msg):
                if not built:
                    built.append(msg)
                continue
            note(msg)
            if msg is SERVING and built and not first.done():
                first.set_result(built[0])
    except JobFailed as e:
        if not first.done():
            first.set_exception(e)
    finally:
        if not first.done():
            first.set_exception(JobFailed(f"{job.name}: not serving ({job.ended or 'it ended without a result'})"))


class Jobs:
    """The app's running jobs, at most one per group; a new job in a group cancels the old one."""

    def __init__(self) -> None:
        self._by_group: dict[str, Job] = {}
        self._lock = threading.Lock()  # pause/resume from the event loop, the watchdog's continue from its thread
        self._paused: list[Job] = []
        self._watchdog: threading.Timer | None = None
        self._run_until = 0.0  # time.monotonic() before which pause() does nothing (the watchdog let them run)

    def pause(self) -> None:
        """Stop the jobs still computing while the UI handles keys, until :meth:`resume` — or ``MAX_PAUSE``
        later, when a watchdog thread continues them and lets them run ``MIN_RUN`` before the next pause."""
        with self._lock:
            if self._paused or time.monotonic() < self._run_until:
                return
            for job in self._by_group.values():
                job.stop()
                if job.stopped:
                    self._paused.append(job)
            if self._paused:
                self._watchdog = threading.Timer(MAX_PAUSE, self._resume, args=(True,))
                self._watchdog.daemon = True
                self._watchdog.start()

    def resume(self) -> None:
        """Continue the jobs :meth:`pause` stopped."""
        self._resume(False)

    def _resume(self, forced: bool) -> None:
        with self._lock:
            if self._watchdog is not None and not forced:
                self._watchdog.cancel()
            self._watchdog = None
            for job in self._paused:
                job.cont()
            self._paused.clear()
            if forced:
                self._run_until = time.monotonic() + MIN_RUN

    @property
    def paused(self) -> bool:
        return bool(self._paused)

    def start(self, group: str, fn: JobFn, *args: Any) -> Job:
        old = self._by_group.pop(group, None)
        if old is not None:
            old.cancel()
        job = Job(group, fn, *args, nice=0 if group in INTERACTIVE else NICE)
        self._by_group[group] = job
        return job

    def cancel(self, group: str) -> None:
        job = self._by_group.pop(group, None)
        if job is not None:
            job.cancel()

    def cancel_all(self) -> None:
        self.resume()  # no watchdog left to signal them
        for job in list(self._by_group.values()):
            job.cancel()
        self._by_group.clear()

    def running(self) -> list[str]:
        return [g for g, j in self._by_group.items() if j.running]


class DaemonThreadExecutor(ThreadPoolExecutor):
    """The event loop's default executor for thread workers: daemon threads, never joined at exit.

    asyncio's default pool joins its threads when the loop closes, so quitting waited for
    whatever a thread worker was computing (25–44 s on a big trace).  Threads here are
    abandoned at exit instead; they only compute and post messages.  (A ThreadPoolExecutor only
    because asyncio insists on one; its pool is never used.)
    """

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        fut: Future[Any] = Future()

        def run() -> None:
            if not fut.set_running_or_notify_cancel():
                return
            try:
                fut.set_result(fn(*args, **kwargs))
            except BaseException as e:  # noqa: BLE001 - handed to the awaiting worker
                fut.set_exception(e)

        threading.Thread(target=run, daemon=True, name="apxtui-worker").start()
        return fut

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        return None
