"""Starting host processes without holding up the event loop.

uvloop (uvicorn's loop where it is installed, as here) starts a child with fork() and waits on the
loop's thread until the child has exec'd: the server copies its page tables for every start and
every connection waits meanwhile. Python's own `subprocess` starts a child with vfork where it may
(no `preexec_fn`; fork otherwise); `spawn` does so on a worker thread, then hands the child's pipes
to the loop and watches its exit through a pidfd. `benchmarks/spawn.py` (`cp -a` from a 150 MB
process, 2 cores under load): 2.52 ms of CPU, 20.9 ms wall and a loop lag p99 of 32 ms per start
the loop's way; 0.62 ms, 5.7 ms and 5 ms this way.

`Process` is the part of `asyncio.subprocess.Process` the backends use. Only the child this module
started reaps it: neither uvloop nor asyncio's child watchers wait for a pid they did not start.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import subprocess
from collections.abc import Callable, Sequence
from functools import partial


class Process:
    """A child started by `spawn`: its pid, its pipes as streams, and its exit."""

    def __init__(self, popen: subprocess.Popen[bytes], stdin: asyncio.StreamWriter | None,
                 stdout: asyncio.StreamReader | None, exited: asyncio.Future[int]) -> None:
        self._popen = popen
        self.pid = popen.pid
        self.stdin = stdin
        self.stdout = stdout
        self._exited = exited

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    async def wait(self) -> int:
        """The exit status, once the child has ended (a cancelled wait leaves the child watched)."""
        return await asyncio.shield(self._exited)


async def spawn(argv: Sequence[str], *, stdin: int | None = subprocess.PIPE, stdout: int | None = subprocess.PIPE,
                stderr: int | None = subprocess.STDOUT, pass_fds: Sequence[int] = (), start_new_session: bool = False,
                preexec_fn: Callable[[], None] | None = None) -> Process:
    """Start `argv` as `asyncio.create_subprocess_exec` would, with streams for PIPE stdin and stdout.

    The pipes are made here, not by `Popen`: the loop's transport must be the only one to close
    the parent's ends (see `_handed`)."""
    loop = asyncio.get_running_loop()
    parent_in = parent_out = None
    child_in, child_out = stdin, stdout
    theirs: list[int] = []  # the child's ends made here: closed here once it has started
    if stdin == subprocess.PIPE:
        child_in, parent_in = os.pipe()  # both close-on-exec; the child's end is dup'ed onto its fd 0
        theirs.append(child_in)
    if stdout == subprocess.PIPE:
        parent_out, child_out = os.pipe()
        theirs.append(child_out)
    ours = [fd for fd in (parent_in, parent_out) if fd is not None]
    start = loop.run_in_executor(None, partial(subprocess.Popen, list(argv), stdin=child_in, stdout=child_out,
                                               stderr=stderr, pass_fds=tuple(pass_fds),
                                               start_new_session=start_new_session, preexec_fn=preexec_fn))
    try:
        popen = await asyncio.shield(start)
    except BaseException as e:
        if isinstance(e, asyncio.CancelledError):  # cancelled while the thread starts it: still ours to end
            with contextlib.suppress(Exception):
                late = await start
                late.kill()
                await loop.run_in_executor(None, late.wait)
        for fd in ours:
            os.close(fd)
        raise
    finally:
        for fd in theirs:
            os.close(fd)
    try:
        return await _watch(loop, popen, parent_in, parent_out)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            popen.kill()
        await loop.run_in_executor(None, popen.wait)
        raise


def _handed(loop: asyncio.AbstractEventLoop, fd: int, mode: str) -> io.FileIO:
    """A pipe end as a file object for `connect_*_pipe`. asyncio's transports close it through the
    object; uvloop's has libuv close the descriptor and then closes the object too, a second
    close(2) that, with threads opening files meanwhile, can close another's descriptor (seen: a
    session's SQLite file, a sandbox's pipe). So for uvloop the object leaves the closing to libuv."""
    return io.FileIO(fd, mode, closefd=isinstance(loop, asyncio.BaseEventLoop))


async def _watch(loop: asyncio.AbstractEventLoop, popen: subprocess.Popen[bytes], parent_in: int | None,
                 parent_out: int | None) -> Process:
    """Hand the parent's pipe ends to the loop (each closed here if the loop did not take it) and
    watch the child's exit."""
    writer = reader = None
    write_transport: asyncio.BaseTransport | None = None
    taken: list[int] = []
    try:
        if parent_in is not None:
            write_transport, protocol = await loop.connect_write_pipe(_WriteProtocol, _handed(loop, parent_in, "wb"))
            taken.append(parent_in)
            writer = asyncio.StreamWriter(write_transport, protocol, None, loop)  # type: ignore[arg-type]
        if parent_out is not None:
            reader = asyncio.StreamReader(limit=2**16)
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), _handed(loop, parent_out, "rb"))
            taken.append(parent_out)
    except BaseException:
        for fd in (parent_in, parent_out):
            if fd is not None and fd not in taken:
                with contextlib.suppress(OSError):
                    os.close(fd)
        if write_transport is not None:
            write_transport.close()
        raise
    exited: asyncio.Future[int] = loop.create_future()
    pidfd = os.pidfd_open(popen.pid)

    def on_exit() -> None:
        if popen.poll() is None:  # readable means ended; poll reaps it
            return
        loop.remove_reader(pidfd)
        os.close(pidfd)
        if write_transport is not None:
            write_transport.close()
        if not exited.done():
            exited.set_result(popen.returncode)

    loop.add_reader(pidfd, on_exit)
    return Process(popen, writer, reader, exited)


class _WriteProtocol(asyncio.streams.FlowControlMixin, asyncio.Protocol):
    """What `StreamWriter.drain` needs of a pipe's protocol: pausing, resuming, a lost connection."""
