"""Background jobs (apxtui/tui/jobs.py): streamed messages, served requests, failures, cancel — forked and threaded."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest

from apxtui.tui import jobs
from apxtui.tui.jobs import SERVING, Job, JobFailed, Jobs, Serve, serve_first


def counting(n: int):
    yield from range(n)


def failing():
    yield "first"
    raise ValueError("bad [input]")


def serving(base: int):
    yield os.getpid()
    yield Serve(lambda req: base + req if req >= 0 else 1 // 0)


def slow_to_serve(base: int):
    yield "progress"
    yield base  # the result, then a pause before serving: the window a busy machine opens
    time.sleep(0.3)
    yield Serve(lambda req: base + req)


def endless():
    yield os.getpid()
    while True:
        time.sleep(0.01)


def ticking():
    yield os.getpid()
    while True:
        time.sleep(0.01)
        yield "tick"


async def _gone(pid: int) -> None:
    """Wait until process ``pid`` no longer exists (fails after 5 s)."""
    for _ in range(500):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        await asyncio.sleep(0.01)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def _serving(base: int, fork: bool) -> tuple[Job, list, asyncio.Task]:
    """A serving job, its messages so far (read by the returned task), once it serves."""
    job = Job("serve", serving, base, fork=fork)
    got: list = []

    async def consume():
        async for m in job.messages():
            got.append(m)

    reader = asyncio.create_task(consume())
    for _ in range(500):
        if job.serving:
            break
        await asyncio.sleep(0.01)
    assert job.serving
    return job, got, reader


MODES = [pytest.param(True, id="forked", marks=pytest.mark.skipif(not jobs.USE_FORK, reason="no fork here")),
         pytest.param(False, id="thread")]


@pytest.mark.parametrize("fork", MODES)
async def test_messages_arrive_in_order_and_failures_name_the_exception(fork):
    assert [m async for m in Job("count", counting, 5, fork=fork).messages()] == [0, 1, 2, 3, 4]
    got = []
    with pytest.raises(JobFailed, match=r"ValueError: bad \[input\]"):
        async for m in Job("fail", failing, fork=fork).messages():
            got.append(m)
    assert got == ["first"]


@pytest.mark.parametrize("fork", MODES)
async def test_a_serving_job_answers_requests_while_its_messages_are_read(fork):
    job, pids, reader = await _serving(40, fork)
    assert await job.request(2) == 42
    with pytest.raises(JobFailed, match="ZeroDivisionError"):
        await job.request(-1)
    assert await job.request(3) == 43  # one failed request does not end the server
    assert (pids[0] != os.getpid()) is fork  # forked: computed in another process
    assert pids[1:] == [SERVING]
    job.cancel()
    await asyncio.wait_for(reader, 2)
    with pytest.raises(JobFailed, match="not serving"):
        await job.request(1)


@pytest.mark.parametrize("fork", MODES)
async def test_serve_first_gives_the_result_once_the_job_serves_and_the_failure_with_its_reason(fork):
    job = Job("slow", slow_to_serve, 40, fork=fork)
    first = asyncio.get_running_loop().create_future()
    notes: list = []
    reader = asyncio.create_task(serve_first(job, first, notes.append, lambda m: isinstance(m, int)))
    assert await asyncio.wait_for(first, 10) == 40
    assert await job.request(2) == 42  # resolved on the result itself, this request was refused ("not serving")
    assert notes == ["progress", SERVING]
    job.cancel()
    await asyncio.wait_for(reader, 2)
    with pytest.raises(JobFailed, match=r"not serving \(cancelled\)"):
        await job.request(1)
    failed = asyncio.get_running_loop().create_future()
    await serve_first(Job("fail", failing, fork=fork), failed, notes.append, lambda m: m == "first")
    with pytest.raises(JobFailed, match=r"ValueError: bad \[input\]"):  # the job's own exception, not "not serving"
        failed.result()


async def test_cancel_kills_the_child_at_once_and_a_new_job_replaces_the_old():
    if not jobs.USE_FORK:
        pytest.skip("no fork here")
    js = Jobs()
    job = js.start("analysis", endless)
    it = job.messages().__aiter__()
    pid = await asyncio.wait_for(it.__anext__(), 10)
    newer = js.start("analysis", counting, 2)  # same group: the endless one is cancelled
    assert job.cancelled and not job.running
    await _gone(pid)  # killed at once; reaped by a thread, off the event loop
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(it.__anext__(), 2)  # the consumer ends instead of hanging
    assert [m async for m in newer.messages()] == [0, 1]
    js.cancel_all()
    assert js.running() == []


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


async def _stopped(pid: int, want: bool = True) -> bool:
    """Whether the process is stopped, once it is (``want``) or is not: a signal takes effect when the
    process next runs, which on a loaded machine is a moment later."""
    for _ in range(500):
        if (_state(pid) == "T") == want:
            break
        await asyncio.sleep(0.01)
    return _state(pid) == "T"


async def test_keys_stop_computing_jobs_not_serving_ones_and_a_watchdog_continues_them(monkeypatch):
    if not jobs.USE_FORK or not os.path.exists("/proc/self/stat"):
        pytest.skip("no fork or /proc here")
    monkeypatch.setattr(jobs, "MAX_PAUSE", 0.2)
    monkeypatch.setattr(jobs, "MIN_RUN", 1.0)  # long enough that the checks below come within it

    def terminal_driver_sigcont(*_args):  # Textual's Linux driver installs one that needs the event loop
        raise RuntimeError("no running event loop")

    old_handler = signal.signal(signal.SIGCONT, terminal_driver_sigcont)
    try:
        await _stop_and_continue()
    finally:
        signal.signal(signal.SIGCONT, old_handler)


async def _stop_and_continue():
    js = Jobs()
    job = js.start("analysis", ticking)
    it = job.messages().__aiter__()
    pid = await asyncio.wait_for(it.__anext__(), 10)
    server, _got, reader = await _serving(1, True)
    js._by_group["sol-serve"] = server
    js.pause()
    assert js.paused and job.stopped and not server.stopped  # a reply may be what the key waits for
    assert await _stopped(pid) and _state(server._proc.pid) != "T"
    assert await server.request(2) == 3
    js.resume()
    assert not js.paused and not await _stopped(pid, False)
    js.pause()
    assert await _stopped(pid)
    assert not await _stopped(pid, False)  # the watchdog continues it (the event loop may be busy) …
    assert not js.paused
    js.pause()  # … and lets it run a moment before the next pause
    assert not job.stopped
    await asyncio.sleep(jobs.MIN_RUN)
    js.pause()
    assert job.stopped
    js.resume()
    for _ in range(3):  # continued, the child goes on (the UI's SIGCONT handler is not its own)
        assert await asyncio.wait_for(it.__anext__(), 5) == "tick"
    js.pause()
    js.cancel_all()  # a stopped child is killed too
    await _gone(pid)
    await asyncio.wait_for(reader, 2)


async def test_a_consumer_blocked_on_the_pipe_wakes_when_the_job_is_cancelled():
    if not jobs.USE_FORK:
        pytest.skip("no fork here")
    job = Job("endless", endless)
    got = []

    async def consume():
        async for m in job.messages():
            got.append(m)

    reader = asyncio.create_task(consume())
    for _ in range(500):
        if got:
            break
        await asyncio.sleep(0.01)
    job.cancel()
    await asyncio.wait_for(reader, 2)
    assert len(got) == 1


def test_daemon_executor_never_waits_at_shutdown():
    ex = jobs.DaemonThreadExecutor()
    fut = ex.submit(time.sleep, 5)
    ex.shutdown(wait=True)  # returns at once: the sleeping thread is a daemon, abandoned at exit
    assert not fut.done()
    assert ex.submit(sum, [1, 2]).result(timeout=5) == 3


@pytest.mark.skipif(not jobs.USE_FORK, reason="no fork here")
async def test_a_serving_child_ends_when_the_ui_end_of_its_pipe_is_gone():
    """The UI process killed (SSH dropped): its pipe ends close, and the waiting child must see EOF and
    end. It held a copy of the UI's end of its own pipe, so it waited for requests forever."""
    job, _, reader = await _serving(1, True)
    reader.cancel()
    job._conn.close()  # what the kernel does to a dead process's descriptors; no cancel, no kill
    job._proc.join(30)
    assert job._proc.exitcode is not None, "the child still waits on a pipe nobody can write to"
    job.cancel()
