"""`envhub.sandbox.spawn`: children started on a worker thread behave as the loop's own would, on
asyncio's loop and on uvloop (uvicorn's loop where it is installed, as in `envhub serve`)."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from envhub.sandbox.spawn import spawn


def _uvloop_run(main: Coroutine[Any, Any, Any]) -> Any:
    uvloop = pytest.importorskip("uvloop")
    return uvloop.run(main)


LOOPS = [pytest.param(asyncio.run, id="asyncio"), pytest.param(_uvloop_run, id="uvloop")]
Run = Callable[[Coroutine[Any, Any, Any]], Any]


@pytest.mark.parametrize("run", LOOPS)
def test_stdin_and_stdout_are_streams_and_the_exit_is_seen(run: Run) -> None:
    async def main() -> tuple[bytes, int | None, int, int | None]:
        proc = await spawn(["sh", "-c", "cat; echo done >&2; exit 3"])
        assert proc.stdin and proc.stdout
        before = proc.returncode
        proc.stdin.write(b"hello\n")
        await proc.stdin.drain()
        proc.stdin.close()  # cat sees the end of its input
        out = await proc.stdout.read()
        return out, before, await proc.wait(), proc.returncode

    out, before, status, after = run(main())
    assert (out, before, status, after) == (b"hello\ndone\n", None, 3, 3)


@pytest.mark.parametrize("run", LOOPS)
def test_a_cancelled_wait_leaves_the_child_watched(run: Run) -> None:
    async def main() -> tuple[int | None, int]:
        proc = await spawn(["sleep", "0.3"], stdin=subprocess.DEVNULL)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(proc.wait(), timeout=0.01)
        running = proc.returncode
        return running, await proc.wait()

    assert run(main()) == (None, 0)


@pytest.mark.parametrize("run", LOOPS)
def test_writing_to_a_dead_child_fails_as_with_the_loops_own_children(run: Run) -> None:
    """What `converse` sees when the shell is gone: the same error as before (asyncio: a lost
    connection; uvloop: a closed handle), so its handling does not change."""
    async def write_after_exit(start: Callable[[], Coroutine[Any, Any, Any]]) -> str:
        proc = await start()
        await proc.wait()
        await asyncio.sleep(0.05)
        try:
            proc.stdin.write(b"echo hi\n")
            await proc.stdin.drain()
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            return type(e).__name__
        return "none"

    async def main() -> tuple[str, str]:
        own = await write_after_exit(lambda: asyncio.create_subprocess_exec("true", stdin=subprocess.PIPE))
        mine = await write_after_exit(lambda: spawn(["true"]))
        return own, mine

    own, mine = run(main())
    assert mine == own != "none"


@pytest.mark.parametrize("run", LOOPS)
def test_passed_descriptors_reach_the_child_and_others_do_not(run: Run) -> None:
    async def main() -> bytes:
        import os

        r, w = os.pipe()
        other_r, other_w = os.pipe()
        try:
            proc = await spawn(["bash", "-c", f"echo via-fd >&{w}; ls /proc/self/fd"], pass_fds=(w,),
                               stdin=subprocess.DEVNULL)
            assert proc.stdout
            listed = (await proc.stdout.read()).split()
            await proc.wait()
            assert str(w).encode() in listed and str(other_w).encode() not in listed, listed
            os.close(w)
            w = -1
            return os.read(r, 100)
        finally:
            for fd in (r, w, other_r, other_w):
                if fd >= 0:
                    os.close(fd)

    assert run(main()) == b"via-fd\n"


def _hammer_sqlite(path: str, stop: threading.Event, errors: list[str]) -> None:
    """Open, read and close a database over and over: SQLite opens its file with the GIL released."""
    while not stop.is_set():
        try:
            db = sqlite3.connect(path)
            for _ in range(20):
                db.execute("select count(*) from t").fetchall()
            db.close()
        except sqlite3.Error as e:
            errors.append(repr(e))


def test_no_descriptor_is_closed_twice_under_uvloop(tmp_path: Path) -> None:
    """uvloop's pipe transports have libuv close the descriptor and then close the file object too;
    a file object that owns its descriptor then closes it a second time, by when another thread may
    have opened something under its number. Seen as `disk I/O error` from a session's SQLite and
    `Bad file descriptor` at sandbox starts; here it fails within a few hundred starts."""
    uvloop = pytest.importorskip("uvloop")
    path = str(tmp_path / "x.db")
    db = sqlite3.connect(path)
    db.execute("create table t(x)")
    db.executemany("insert into t values (?)", [(i,) for i in range(1000)])
    db.commit()
    db.close()
    stop, errors = threading.Event(), []
    threads = [threading.Thread(target=_hammer_sqlite, args=(path, stop, errors)) for _ in range(3)]

    async def main() -> None:
        for _ in range(100):
            procs = [await spawn(["true"]) for _ in range(8)]
            for proc in procs:
                assert proc.stdout
                await proc.stdout.read()
                await proc.wait()

    for t in threads:
        t.start()
    try:
        uvloop.run(main())
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert errors == []
