"""The warm verifier: zygotes with Python, pytest and `verifiers` already imported, forking per verify.

A zygote is one bubblewrap sandbox (own host uid, user/pid/net/ipc/uts namespaces, read-only
/usr, /etc and verifier runtime) running `envhub_zygote` (envhub/verify/zygote.py), which forks
fresh processes per verify that enter new namespaces, mount this verify's folders read-only at
the cold runner's paths, drop every capability and apply the same rlimits. It makes them before
the verify's request comes (a standby that has copied the memory it will write: about 45 MB per
zygote), and the request only adds the verify's own mounts. Each zygote serves one verify at a
time, so RLIMIT_NPROC still bounds one verify; the pool holds up to `POOL_SIZE`.

A zygote is a `Service` of the sandbox backend (`SandboxBackend.start_service`): the local backend
hosts them; a backend that does not says why (`no_services`), and its verifies are all cold.
Zygotes start in the background when a verify finds none free (that verify, like any verify while
none is free or when one fails before the tests run, takes the cold path:
`SandboxBackend.run_once`), so a one-off verify is never slower than a cold one.
`ENVHUB_WARM_VERIFY=0` turns the warm path off.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import socket
import uuid
from pathlib import Path

from envhub.errors import Unavailable
from envhub.sandbox.base import UNLIMITED_MB, ExecResult, SandboxBackend, SandboxLimits, SandboxSpec, Service
from envhub.sandbox.shell import Clip
from envhub.verify import runtime

log = logging.getLogger(__name__)

POOL_SIZE = max(1, min(8, os.cpu_count() or 1))
START_TIMEOUT_S = 60.0
#: Statuses the zygote's children use for a failure of their own set-up (before any test ran).
SETUP_FAILED = (71, 72)
#: Set-up failures in a row after which this server stops trying the warm path.
MAX_SETUP_FAILURES = 3
#: Only what bubblewrap must grant for a child to make its own namespaces and mounts; dropped
#: by the child before the verifier's code runs.
CAPS = ("CAP_SYS_ADMIN", "CAP_NET_ADMIN")
#: The zygote's own ceilings: each verify lowers them to its task's limits.
ZYGOTE_LIMITS = SandboxLimits(cpu_s=10**9, memory_mb=UNLIMITED_MB, processes=512, file_mb=65536, open_files=4096)


def enabled() -> bool:
    return os.environ.get("ENVHUB_WARM_VERIFY", "1") != "0"


class Zygote:
    def __init__(self, service: Service, sock: socket.socket, spool: Path) -> None:
        self.service = service
        self.sock = sock
        self.spool = spool
        self._closed = False

    @property
    def alive(self) -> bool:
        return self.service.alive

    async def run(self, folder: Path, *, args: list[str], env: dict[str, str], workdir: str, limits: SandboxLimits,
                  timeout_s: float, result_fd: int, max_output: int) -> ExecResult | None:
        """Judge `folder` (under `self.spool`, holding state/, task/ and trajectory.jsonl).

        None when the zygote could not judge it (it died, or a child's set-up failed): the
        caller takes the cold path."""
        await self.service.hand_over(folder / "state")
        loop = asyncio.get_running_loop()
        started = loop.time()
        req = {"dir": folder.name, "args": args, "env": env, "workdir": workdir,
               "limits": {"cpu_s": limits.cpu_s, "processes": limits.processes, "file_mb": limits.file_mb,
                          "open_files": limits.open_files,
                          "memory_mb": None if limits.memory_mb >= UNLIMITED_MB else limits.memory_mb}}
        out_r, out_w = os.pipe()
        try:
            socket.send_fds(self.sock, [json.dumps(req).encode()], [result_fd, out_w])
        except OSError:
            os.close(out_r)
            return None
        finally:
            os.close(out_w)
        reader = loop.run_in_executor(None, _read_clip, out_r, max_output)
        timed_out = False
        try:
            reply = await asyncio.wait_for(loop.sock_recv(self.sock, 4096), timeout=timeout_s)
        except TimeoutError:
            timed_out, reply = True, b""
            self.kill()
        except OSError:
            reply = b""
        except BaseException:  # cancelled: a zygote whose child may still run is never used again
            self.kill()
            raise
        clip = await reader
        if timed_out:
            return ExecResult(exit_code=None, output=clip.text(), timed_out=True, truncated=clip.truncated,
                              elapsed_s=loop.time() - started)
        if not reply:
            log.warning("warm verifier zygote died; using the cold path")
            self.kill()
            return None
        code = json.loads(reply)["exit_code"]
        if code in SETUP_FAILED:
            log.warning("warm verifier set-up failed (status %s): %s", code, clip.text()[-2000:])
            return None
        return ExecResult(exit_code=code, output=clip.text(), truncated=clip.truncated,
                          elapsed_s=loop.time() - started)

    def kill(self) -> None:
        """End the zygote now, with any verify still running in it. Its spool stays until `close`
        (a cold retry may use it)."""
        self.service.kill()

    async def close(self) -> None:
        """End the service and remove the spool."""
        if self._closed:
            return
        self._closed = True
        await self.service.close()
        self.sock.close()
        await asyncio.to_thread(shutil.rmtree, self.spool, True)


class WarmPool:
    def __init__(self, backend: SandboxBackend, data_dir: Path, lib: Path, env: dict[str, str],
                 args: list[str]) -> None:
        self.backend = backend
        self.args = args  # the pytest arguments each zygote parses once
        self.data_dir = data_dir
        self.lib = lib
        self.env = env
        self.idle: list[Zygote] = []
        self.count = 0
        self.setup_failures = 0
        self.disabled = False
        self.closed = False
        self._starting: set[asyncio.Task[None]] = set()

    async def acquire(self) -> Zygote | None:
        """A started zygote, or None (judge cold): a verify never waits for one to start; it
        starts one in the background for the verifies after it."""
        await self._prune()
        if self.idle:
            return self.idle.pop()
        self.grow()
        return None

    def grow(self) -> None:
        """Start one more zygote in the background (up to POOL_SIZE)."""
        if self.disabled or self.closed or self.count >= POOL_SIZE:
            return
        self.count += 1
        task = asyncio.get_running_loop().create_task(self._grow())
        self._starting.add(task)
        task.add_done_callback(self._starting.discard)

    async def ready(self) -> bool:
        """Start a zygote if none is idle and wait for the starting ones: whether the next verify
        will be warm (tests and benchmarks)."""
        await self._prune()
        if not self.idle:
            self.grow()
        while self._starting:
            await asyncio.gather(*self._starting, return_exceptions=True)
        return bool(self.idle)

    async def _prune(self) -> None:
        for z in [z for z in self.idle if not z.alive]:  # killed from outside since its last verify
            self.idle.remove(z)
            self.count -= 1
            await z.close()

    async def _grow(self) -> None:
        try:
            z = await self._start()
        except Unavailable:  # no sandbox uid free right now: try again at a later verify
            self.count -= 1
            return
        except Exception as e:  # noqa: BLE001 - any other failure: every verify judges cold
            self.count -= 1
            self.disabled = True
            log.warning("the warm verifier cannot start here (%s); every verify takes the cold path", e)
            return
        except BaseException:
            self.count -= 1
            raise
        if self.closed:
            self.count -= 1
            await z.close()
        else:
            self.idle.append(z)

    async def release(self, z: Zygote, *, setup_failed: bool = False) -> None:
        if setup_failed:
            self.setup_failures += 1
            if self.setup_failures >= MAX_SETUP_FAILURES:
                self.disabled = True
                log.warning("the warm verifier failed %d times in a row; every verify takes the cold path",
                            self.setup_failures)
        else:
            self.setup_failures = 0
        if z.alive and not self.closed:
            self.idle.append(z)
        else:
            self.count -= 1
            await z.close()

    async def aclose(self) -> None:
        """Close the idle and starting zygotes now; busy ones close when their verify ends."""
        self.closed = True
        for task in list(self._starting):
            task.cancel()
        await asyncio.gather(*self._starting, return_exceptions=True)
        idle, self.idle = self.idle, []
        for z in idle:
            await z.close()
        self.count -= len(idle)

    async def _start(self) -> Zygote:
        base = self.data_dir / "verifier" / "warm"
        mounts = base / "mountpoints"  # empty placeholders each verify mounts its own folders over
        if not mounts.is_dir():
            tmp = base / f"mountpoints.{uuid.uuid4().hex[:8]}"
            for name in ("workspace", "tests", "task"):
                (tmp / name).mkdir(parents=True)
            (tmp / "trajectory.jsonl").touch()
            with contextlib.suppress(OSError):
                tmp.rename(mounts)
            shutil.rmtree(tmp, ignore_errors=True)
        spool = base / f"spool-{uuid.uuid4().hex[:12]}"
        spool.mkdir(parents=True)
        for p in (self.data_dir / "verifier", base, spool):
            p.chmod(0o755)
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        spec = SandboxSpec(
            template=mounts / "workspace", read_only_workspace=True,
            ro_binds={str(self.lib): "/verify/lib", str(runtime.site_dir(self.data_dir)): "/verify/site",
                      str(mounts / "tests"): "/verify/tests", str(mounts / "task"): "/verify/task",
                      str(mounts / "trajectory.jsonl"): "/verify/trajectory.jsonl", str(spool): "/verify/spool"},
            env=self.env, limits=ZYGOTE_LIMITS, workdir="/verify/tests")
        try:
            service = await self.backend.start_service(
                spec, [runtime.PYTHON, "-s", "-B", "-m", "envhub_zygote", str(child.fileno()), json.dumps(self.args)],
                capabilities=CAPS, device_root="/verify/.dev", pass_fds=(child.fileno(),))
        except BaseException:
            parent.close()
            shutil.rmtree(spool, ignore_errors=True)
            raise
        finally:
            child.close()
        parent.setblocking(False)
        z = Zygote(service, parent, spool)
        loop = asyncio.get_running_loop()
        try:
            ready = await asyncio.wait_for(loop.sock_recv(parent, 4096), timeout=START_TIMEOUT_S)
            if not ready:
                raise RuntimeError("the zygote exited at start")
        except Exception as e:
            output = await service.output(4000)
            await z.close()
            raise RuntimeError(f"{e!r}: {output}") from e
        except BaseException:  # cancelled while starting: end it before passing the cancellation on
            await asyncio.shield(z.close())
            raise
        return z


def _read_clip(fd: int, max_output: int) -> Clip:
    clip = Clip(max_output)
    try:
        while chunk := os.read(fd, 65536):
            clip.add(chunk)
    finally:
        os.close(fd)
    return clip
