"""The Docker backend: creates, starts and removes containers; runs verifiers in throwaway ones.

See the package's docstring for the isolation contract; this module holds the engine calls
(a container's host config, its creation and start), the session container's launch with its
shell, orphan reaping, and `run_once` with its result channel.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shlex
import shutil
import socket
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from envhub.config import Settings
from envhub.errors import EnvError, SandboxUnavailable, Unavailable
from envhub.sandbox.base import (
    RESULT_FD_ENV,
    RESULT_LIMIT,
    WORKSPACE,
    ExecResult,
    SandboxBackend,
    SandboxLimits,
    SandboxSpec,
)
from envhub.sandbox.docker.cgroup import Cgroup, ns_pid
from envhub.sandbox.docker.engine import Engine
from envhub.sandbox.docker.pool import Box, WarmPool
from envhub.sandbox.docker.sandbox import DockerSandbox
from envhub.sandbox.docker.seccomp import VERIFIER_HOST_CONFIG
from envhub.sandbox.docker.settings import DockerSettings
from envhub.sandbox.process import PATH, SHELL, base_env, children, chown_tree, copy_tree
from envhub.sandbox.shell import Clip

log = logging.getLogger("envhub.sandbox.docker")
MiB = 1024 * 1024
LABEL = "envhub.sandbox"
#: The verifier's result channel: a fresh root-only host folder per run, mounted here.
RESULT_DIR = "/run/envhub-result"
#: The descriptor the verifier writes its result to, opened by root before it drops to the sandbox uid.
RESULT_FD = 3


class DockerBackend(SandboxBackend):
    """Containers on the local Docker engine."""

    name = "docker"
    no_services = ("a zygote mounts each verify's folders into a running sandbox, and a container's binds are "
                   "fixed when it is created (nor does any container here get CAP_SYS_ADMIN): every verify runs "
                   "cold, in a container of its own")

    def __init__(self, settings: Settings | None = None, *, root: Path | None = None,
                 docker: DockerSettings | None = None) -> None:
        self.cfg = docker or DockerSettings()
        data = settings.data_dir if settings is not None else Path("/var/lib/envhub")
        self.root = root or data / "docker-sandboxes"
        self.engine = Engine(self.cfg.socket, self.cfg.api_timeout_s)
        self.owner = f"{socket.gethostname()}:{os.getpid()}"
        self.oom_base: dict[str, int] = {}
        self.pool = WarmPool(self.cfg.pool, self._launch, self.remove)
        self._checked_at = 0.0
        self._reaped = False

    # -- health ---------------------------------------------------------------------------------------
    def check(self) -> None:
        if time.monotonic() - self._checked_at < 5:
            return  # `/ready` calls this per request: keep it cheap
        if not os.path.exists(self.cfg.socket):
            raise SandboxUnavailable(f"no Docker engine socket at {self.cfg.socket}: install docker.io and start "
                                     "dockerd (or set ENVHUB_DOCKER_SOCKET)")
        try:
            self.engine.ping()
            present = self.engine.image_exists(self.cfg.image)
        except OSError as e:
            raise SandboxUnavailable(f"the Docker engine at {self.cfg.socket} does not answer: {e}") from e
        if not present:
            raise SandboxUnavailable(f"sandbox image {self.cfg.image!r} is missing: build it with "
                                     "`docker build -f docker/sandbox.Dockerfile` (see docker/README.md)")
        self._checked_at = time.monotonic()

    async def running(self, cid: str) -> bool:
        try:
            info = await self.engine.call("GET", f"/containers/{cid}/json")
        except EnvError:
            return False  # 404: removed
        return bool(info["State"]["Running"])  # a paused (exported) container is still alive

    # -- containers -----------------------------------------------------------------------------------
    def _host_config(self, limits: SandboxLimits, binds: list[tuple[str, str, bool]]) -> dict[str, Any]:
        cpu = max(1, limits.cpu_s)
        fsize = limits.file_mb * MiB
        return {
            # `Mounts`, not `Binds`: a missing source is an error, never a silently created empty folder.
            "Mounts": [{"Type": "bind", "Source": h, "Target": c, "ReadOnly": ro} for h, c, ro in binds],
            "NetworkMode": "none", "Init": True,
            "Memory": max(16, limits.memory_mb) * MiB, "MemorySwap": max(16, limits.memory_mb) * MiB,
            "PidsLimit": limits.processes, "NanoCpus": int((limits.cpus or self.cfg.cpus) * 1e9),
            "Ulimits": [{"Name": "cpu", "Soft": cpu, "Hard": cpu}, {"Name": "fsize", "Soft": fsize, "Hard": fsize},
                        {"Name": "nofile", "Soft": limits.open_files, "Hard": limits.open_files},
                        {"Name": "core", "Soft": 0, "Hard": 0}],
            "Tmpfs": {"/tmp": f"rw,exec,nosuid,nodev,size={limits.file_mb}m,mode=1777"},  # docker defaults to noexec
            "CapDrop": ["ALL"], "SecurityOpt": ["no-new-privileges"],
        }

    async def _create(self, cmd: list[str], limits: SandboxLimits, binds: list[tuple[str, str, bool]], *, user: str,
                      workdir: str, env: dict[str, str], cap_add: Sequence[str] = (),
                      host_extra: dict[str, Any] | None = None) -> str:
        host = self._host_config(limits, binds)
        if cap_add:
            host["CapAdd"] = list(cap_add)
        for key, value in (host_extra or {}).items():
            host[key] = host.get(key, []) + value if key == "SecurityOpt" else value
        body = {"Image": self.cfg.image, "Cmd": cmd, "User": user, "WorkingDir": workdir, "Hostname": "sandbox",
                "Env": [f"{k}={v}" for k, v in env.items()], "Labels": {LABEL: "1", f"{LABEL}.owner": self.owner},
                "NetworkDisabled": True, "HostConfig": host}
        created = await self.engine.call("POST", "/containers/create", body=body)
        return created["Id"]

    async def _start_container(self, cid: str) -> None:
        """Start a created container; any refusal by the engine is `Unavailable` (a fresh try may work)."""
        try:
            await self.engine.call("POST", f"/containers/{cid}/start")
        except EnvError as e:
            raise Unavailable(f"the container engine refused to start a sandbox: {e.detail}", retry_after_s=2) from e

    async def _launch(self, limits: SandboxLimits) -> Box:
        """Start a session container and its shell (the cold path; the pool calls this ahead)."""
        await self._reap_orphans()
        root = self.root / f"sbx-{uuid.uuid4().hex[:16]}"
        ws = root / "workspace"
        ws.mkdir(parents=True)
        os.chown(ws, self.cfg.uid, self.cfg.uid)
        cid: str | None = None
        try:
            cid = await self._create(["sleep", "infinity"], limits, [(str(ws), WORKSPACE, False)], user="0:0",
                                     workdir=WORKSPACE, env={"PATH": PATH})
            await self._start_container(cid)
            info = await self.engine.call("GET", f"/containers/{cid}/json")
            init_pid = int(info["State"]["Pid"])
            cgroup = Cgroup.of(init_pid)
            env = base_env()
            argv = [self.cfg.cli, "-H", f"unix://{self.cfg.socket}", "exec", "-i",
                    "-u", f"{self.cfg.uid}:{self.cfg.uid}", "-w", WORKSPACE]
            for k, v in env.items():
                argv += ["-e", f"{k}={v}"]
            shell = await asyncio.create_subprocess_exec(
                *argv, cid, *SHELL, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT, start_new_session=True)
            assert shell.stdin and shell.stdout
            shell.stdin.write(b'printf "envhub-shell:%s\\n" "$$"\n')
            await shell.stdin.drain()
            line = await asyncio.wait_for(shell.stdout.readline(), timeout=30)
            if not line.startswith(b"envhub-shell:"):
                raise EnvError(f"the sandbox shell did not start: {line[:300]!r}")
            inner = int(line.split(b":")[1])
            shell_pid = next((p for p in cgroup.pids() if ns_pid(p) == inner), 0)
            if not shell_pid:
                raise EnvError("cannot find the sandbox shell's host pid")
            self.oom_base[cid] = cgroup.oom_kills()
            return Box(cid=cid, root=root, cgroup=cgroup, init_pid=init_pid, shell=shell, shell_pid=shell_pid,
                        limits=limits, core_pids=frozenset({init_pid, shell_pid, *children(init_pid)}))
        except BaseException:
            if cid is not None:
                with contextlib.suppress(Exception):
                    await self.engine.call("DELETE", f"/containers/{cid}", params={"force": "1"})
            shutil.rmtree(root, ignore_errors=True)
            raise

    async def remove(self, box: Box) -> None:
        if box.shell.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                box.shell.kill()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(box.shell.wait(), timeout=5)
        self.oom_base.pop(box.cid, None)
        with contextlib.suppress(Exception):
            await self.engine.call("DELETE", f"/containers/{box.cid}", params={"force": "1"}, timeout_s=30)
        await asyncio.to_thread(shutil.rmtree, box.root, True)

    async def _reap_orphans(self) -> None:
        """Remove sandbox containers left by a server on this host that died without closing them."""
        if self._reaped:
            return
        self._reaped = True
        host = socket.gethostname()
        found = await self.engine.call("GET", "/containers/json",
                                       params={"all": "1", "filters": json.dumps({"label": [LABEL]})})
        for c in found or []:
            owner = c.get("Labels", {}).get(f"{LABEL}.owner", "")
            h, _, pid = owner.rpartition(":")
            if h == host and pid.isdigit() and int(pid) != os.getpid() and not Path(f"/proc/{pid}").exists():
                log.info("removing orphaned sandbox container %s of dead server %s", c["Id"][:12], owner)
                with contextlib.suppress(Exception):
                    await self.engine.call("DELETE", f"/containers/{c['Id']}", params={"force": "1"})

    async def warm(self, limits: SandboxLimits | None = None) -> None:
        """Fill the pool for `limits` now (benchmarks and servers that want a warm first reset)."""
        await self.pool.warm(limits or SandboxLimits())

    # -- the interface ------------------------------------------------------------------------------------
    async def start(self, spec: SandboxSpec) -> DockerSandbox:
        if spec.ro_binds or spec.rw_binds or spec.read_only_workspace:
            raise EnvError("the docker backend's session sandboxes take no extra binds; use run_once")
        box = self.pool.take(spec.limits)
        if box is None:
            box = await self._launch(spec.limits)  # engine faults surface here as Unavailable
        sandbox = DockerSandbox(self, box)
        try:
            if spec.template is not None:
                await copy_tree(spec.template, box.workspace, into=True)
                await asyncio.to_thread(chown_tree, box.workspace, self.cfg.uid)
            setup = [f"cd {shlex.quote(spec.workdir)}"] if spec.workdir != WORKSPACE else []
            setup += [f"export {k}={shlex.quote(v)}" for k, v in spec.env.items() if k.isidentifier()]
            if setup:
                res = await sandbox.run(" && ".join(setup), timeout_s=30)
                if res.exit_code != 0:
                    raise EnvError(f"sandbox setup failed: {res.output[-300:]}")
        except BaseException:
            await sandbox.close()
            raise
        return sandbox

    async def run_once(self, spec: SandboxSpec, argv: Sequence[str], *, timeout_s: float, max_output: int = 64_000,
                       result: bool = False) -> ExecResult:
        """The result channel is a file in a fresh host folder only root can open, mounted at
        `RESULT_DIR`: the container starts as root, opens `RESULT_FD` on it, then drops to the
        sandbox uid with `setpriv` (losing every capability) before exec'ing `argv`. Only that
        inherited descriptor can write the result; the judged state is a different mount."""
        if spec.template is None:
            raise ValueError("run_once needs spec.template (the state to show)")
        self.check()
        await self._reap_orphans()
        uid = self.cfg.uid
        await asyncio.to_thread(chown_tree, spec.template, uid)
        channel = self.root / f"result-{uuid.uuid4().hex[:16]}"
        channel.mkdir(parents=True, mode=0o700)
        binds = [(str(spec.template), WORKSPACE, spec.read_only_workspace),
                 *((str(Path(h).resolve()), c, True) for h, c in spec.ro_binds.items()),
                 *((str(Path(h).resolve()), c, False) for h, c in spec.rw_binds.items()),
                 (str(channel), RESULT_DIR, False)]
        env = base_env() | spec.env | ({RESULT_FD_ENV: str(RESULT_FD)} if result else {})
        opens = f"exec {RESULT_FD}>{RESULT_DIR}/result && " if result else ""
        script = f'{opens}exec setpriv --reuid={uid} --regid={uid} --clear-groups -- "$@"'
        cid = await self._create(["/bin/sh", "-c", script, "sh", *argv], spec.limits, binds, user="0:0",
                                 workdir=spec.workdir, env=env, cap_add=("SETUID", "SETGID"),
                                 host_extra=VERIFIER_HOST_CONFIG)  # the SWE harness jails the code under test
        started = time.monotonic()
        timed_out = False
        exit_code: int | None = None
        clip = Clip(max_output)
        written: bytes | None = None
        try:
            await self._start_container(cid)
            try:
                waited = await self.engine.call("POST", f"/containers/{cid}/wait", timeout_s=timeout_s)
                exit_code = int(waited.get("StatusCode", -1))
            except Unavailable:
                if time.monotonic() - started < timeout_s - 0.5:
                    raise
                timed_out = True
                with contextlib.suppress(Exception):
                    await self.engine.call("POST", f"/containers/{cid}/kill")
            await self.engine.logs(cid, clip)
            if result:
                written = await asyncio.to_thread(_read_result, channel / "result")
        finally:
            with contextlib.suppress(Exception):
                await self.engine.call("DELETE", f"/containers/{cid}", params={"force": "1"}, timeout_s=30)
            await asyncio.to_thread(shutil.rmtree, channel, True)
        return ExecResult(exit_code=None if timed_out else exit_code, output=clip.text(), timed_out=timed_out,
                          truncated=clip.truncated, elapsed_s=time.monotonic() - started, result=written)

    async def aclose(self) -> None:
        await self.pool.drain()
        await self.engine.aclose()


def _read_result(path: Path) -> bytes:
    """The result file's bytes; empty when it is missing, not a plain file, or over `RESULT_LIMIT`."""
    if not path.is_file() or path.is_symlink():
        return b""
    with path.open("rb") as f:
        data = f.read(RESULT_LIMIT + 1)
    return b"" if len(data) > RESULT_LIMIT else data
