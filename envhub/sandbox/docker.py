"""The Docker backend: one container per session, from a warm pool, on this host's engine.

Same contract as the bubblewrap backend (`local.py`), with a container as the isolation unit:

- **Session sandboxes** are containers of `ENVHUB_DOCKER_IMAGE` with `--network none`, a memory
  cgroup limit (no swap), a pids limit, a CPU quota, rlimits for CPU seconds / file size / open
  files, no capabilities and `no-new-privileges`. PID 1 is `docker-init` + `sleep` as root; the
  agent's persistent `bash` is a `docker exec -i` as uid 1000 and cannot signal PID 1, so the
  container outlives anything the agent does to its own shell.
- **The workspace** is a host folder (a copy of the task template, owned by the sandbox uid)
  bind-mounted at `/workspace`, as in the local backend; `export` pauses the container (freezer
  cgroup: nothing changes under the copy) and copies that folder.
- **The warm pool** keeps `ENVHUB_DOCKER_POOL` started containers per limits shape, each with its
  shell already running, so `start()` only copies the template (reset pays no container start-up).
- **Fault evidence comes from the host**, never from agent output: the container's cgroup (the
  process list for deadline kills, the OOM-kill counter) and the engine's view of the container.
  A command that blew the memory limit raises `SandboxOOM` (an `AgentError`); a container that
  stopped although the agent could not stop it is an `EnvError`; an engine that cannot be reached
  or refuses to create/start a container is `Unavailable` (retryable).
- **The verifier** (`run_once`) runs in a fresh container over a read-only bind of the exported
  state. Its result cannot travel through an inherited pipe, so each requested fd becomes a file in
  a fresh host folder bind-mounted at `/run/envhub-result` (mode 0700, root): the container starts
  as root, opens `fd 3` on that file, then drops to uid 1000 with `setpriv` (losing every
  capability) before exec'ing the verifier. Its seccomp profile (`seccomp.py`) allows the
  namespaces the SWE harness jails the code under test in, which Docker's default forbids. Only
  the verifier's inherited descriptor can write the result; the judged state is a different,
  read-only mount, stdout is never parsed, and the folder is created per run and never shown to
  the agent. The backend copies the file into the caller's pipe afterwards, so `VerifierRunner`
  is unchanged.

Requirements: the server runs on the engine's host as root (bind mounts are host paths; the
cgroup and `/proc` are read from the host). Inside containers the server uses the `local` backend
instead (see `docker/README.md`).
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import logging
import os
import secrets
import shlex
import shutil
import signal
import socket
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from pydantic_settings import BaseSettings, SettingsConfigDict

from envhub.config import Settings
from envhub.errors import AgentError, EnvError, SandboxUnavailable, Unavailable
from envhub.sandbox.base import WORKSPACE, ExecResult, Sandbox, SandboxBackend, SandboxLimits, SandboxSpec
from envhub.sandbox.local import PATH, SHELL, _children, _signal_all
from envhub.sandbox.seccomp import VERIFIER_HOST_CONFIG
from envhub.sandbox.shell import RUNAWAY_NOTE, SHELL_GRACE_S, Clip, SandboxGone, converse, frame

log = logging.getLogger("envhub.sandbox.docker")
MiB = 1024 * 1024
LABEL = "envhub.sandbox"
RESULT_DIR = "/run/envhub-result"


class DockerSettings(BaseSettings):
    """`ENVHUB_DOCKER_*` variables (kept here so the core settings need no Docker fields)."""

    model_config = SettingsConfigDict(env_prefix="ENVHUB_DOCKER_", extra="ignore")

    #: Image for sandboxes and verifiers: needs bash, Debian's python3 and the family's tools.
    image: str = "envhub-sandbox:latest"
    socket: str = "/var/run/docker.sock"
    #: The CLI, used only for the shells' `docker exec -i` streams.
    cli: str = "/usr/bin/docker" if os.path.exists("/usr/bin/docker") else "docker"
    #: Started containers kept ready per limits shape; 0 turns the pool off.
    pool: int = 2
    cpus: float = 1.0
    uid: int = 1000
    #: Seconds an engine call may take before the engine counts as unavailable.
    api_timeout_s: float = 60.0


class SandboxOOM(AgentError):
    """A process in the sandbox exceeded the memory limit and the kernel killed it."""

    code = "sandbox_oom"


# -- the engine API (HTTP over the unix socket) -----------------------------------------------------
class Engine:
    """A minimal Docker Engine API client; one aiohttp session per event loop."""

    def __init__(self, sock: str, timeout_s: float) -> None:
        self.sock = sock
        self.timeout_s = timeout_s
        self._sessions: dict[asyncio.AbstractEventLoop, aiohttp.ClientSession] = {}

    def _session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        s = self._sessions.get(loop)
        if s is None or s.closed:
            for old in [lp for lp in self._sessions if lp.is_closed()]:
                self._sessions.pop(old, None)
            s = aiohttp.ClientSession(connector=aiohttp.UnixConnector(path=self.sock))
            self._sessions[loop] = s
        return s

    async def call(self, method: str, path: str, *, body: Any = None, params: dict | None = None,
                   timeout_s: float | None = None, ok: Sequence[int] = (200, 201, 204, 304)) -> Any:
        """One API call; engine faults become `Unavailable`, our own bad requests `EnvError`."""
        try:
            async with self._session().request(
                    method, f"http://docker{path}", json=body, params=params,
                    timeout=aiohttp.ClientTimeout(total=timeout_s or self.timeout_s)) as r:
                raw = await r.read()
                status = r.status
        except (TimeoutError, aiohttp.ClientError, OSError) as e:
            raise Unavailable(f"the container engine is unreachable at {self.sock}: {e!r}", retry_after_s=2) from e
        data: Any = None
        if raw:
            try:
                data = json.loads(raw)
            except ValueError:
                data = raw
        if status in ok:
            return data
        message = data.get("message") if isinstance(data, dict) else str(data)[:300]
        if status >= 500 or status == 409:
            raise Unavailable(f"the container engine refused {method} {path}: {message}", retry_after_s=2,
                              status=status)
        if status == 404 and path.startswith("/containers/create"):
            raise SandboxUnavailable(f"sandbox image missing: {message}; build it (see docker/README.md)")
        raise EnvError(f"container engine answered {status} to {method} {path}: {message}", status=status)

    async def logs(self, cid: str, clip: Clip) -> None:
        """Demultiplex a non-TTY container's stdout+stderr into `clip`."""
        async with self._session().get(f"http://docker/containers/{cid}/logs",
                                       params={"stdout": "1", "stderr": "1"},
                                       timeout=aiohttp.ClientTimeout(total=self.timeout_s)) as r:
            buf = await r.read()
        i = 0
        while i + 8 <= len(buf):
            size = int.from_bytes(buf[i + 4:i + 8], "big")
            clip.add(buf[i + 8:i + 8 + size])
            i += 8 + size

    def ping(self) -> None:
        """Blocking liveness probe for the synchronous `check()`."""
        conn = _UnixHTTP(self.sock, timeout=5)
        try:
            conn.request("GET", "/_ping")
            r = conn.getresponse()
            if r.status != 200:
                raise SandboxUnavailable(f"the container engine at {self.sock} answered {r.status} to a ping")
        finally:
            conn.close()

    def image_exists(self, image: str) -> bool:
        conn = _UnixHTTP(self.sock, timeout=5)
        try:
            conn.request("GET", f"/images/{image}/json")
            r = conn.getresponse()
            r.read()
            return r.status == 200
        finally:
            conn.close()

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        s = self._sessions.pop(loop, None)
        if s is not None:
            await s.close()


class _UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("docker", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self._path)


# -- host views of a container's cgroup --------------------------------------------------------------
@dataclass
class _Cgroup:
    """The container's memory cgroup folder on the host (v1 or v2)."""

    path: Path
    v2: bool

    @classmethod
    def of(cls, pid: int) -> _Cgroup:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
        for line in lines:
            _, controllers, rel = line.split(":", 2)
            if "memory" in controllers.split(","):
                return cls(Path("/sys/fs/cgroup/memory") / rel.lstrip("/"), v2=False)
        for line in lines:
            if line.startswith("0::"):
                return cls(Path("/sys/fs/cgroup") / line[3:].lstrip("/"), v2=True)
        raise EnvError(f"cannot find the memory cgroup of pid {pid}")

    def pids(self) -> set[int]:
        try:
            return {int(p) for p in (self.path / "cgroup.procs").read_text().split()}
        except FileNotFoundError:
            return set()

    def task_count(self) -> int:
        """Threads included: what the pids limit counts."""
        try:
            return len((self.path / ("cgroup.threads" if self.v2 else "tasks")).read_text().split())
        except FileNotFoundError:
            return 0

    def oom_kills(self) -> int:
        name = "memory.events" if self.v2 else "memory.oom_control"
        try:
            for line in (self.path / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except FileNotFoundError:
            pass
        return 0


def _ns_pid(host_pid: int) -> int | None:
    """The pid a host process has inside its own pid namespace."""
    try:
        for line in Path(f"/proc/{host_pid}/status").read_text().splitlines():
            if line.startswith("NSpid:"):
                return int(line.split()[-1])
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


def _chown_tree(root: Path, uid: int) -> None:
    os.chown(root, uid, uid, follow_symlinks=False)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            os.chown(os.path.join(dirpath, name), uid, uid, follow_symlinks=False)


def _limits_key(limits: SandboxLimits) -> tuple[int, ...]:
    return (limits.memory_mb, limits.processes, limits.cpu_s, limits.file_mb, limits.open_files)


# -- one session's container ----------------------------------------------------------------------------
@dataclass(eq=False)
class _Box:
    """A started container with its shell: what the pool holds and a sandbox owns."""

    cid: str
    root: Path
    cgroup: _Cgroup
    init_pid: int
    shell: asyncio.subprocess.Process
    shell_pid: int
    limits: SandboxLimits
    #: Host pids that keep the container and its shell alive: PID 1, its `sleep`, the shell.
    core_pids: frozenset[int] = frozenset()
    loop: asyncio.AbstractEventLoop = field(default_factory=asyncio.get_running_loop)

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"


class DockerSandbox(Sandbox):
    def __init__(self, backend: DockerBackend, box: _Box) -> None:
        self._backend = backend
        self._box = box
        self._closed = False
        self._paused = False
        self._ended = False

    @property
    def container_id(self) -> str:
        return self._box.cid

    @property
    def workspace(self) -> Path:
        return self._box.workspace

    async def is_alive(self) -> bool:
        if self._closed or self._box.shell.returncode is not None:
            return False
        return await self._backend.running(self._box.cid)

    async def _died(self) -> AgentError | EnvError:
        """Classify a dead shell from the engine's and the host's view, not from its output."""
        box = self._box
        if self._ended:  # the agent wedged its shell and we ended the container (see `_end_keep_files`)
            return SandboxGone("the shell was ended after a command wedged it; files in /workspace are kept for "
                               "the verifier")
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            os.kill(box.shell_pid, 0)
            return EnvError("the sandbox's shell stream broke while the shell was still running")
        try:
            running = await self._backend.running(box.cid)
        except Unavailable as e:
            return EnvError(f"the container engine went away: {e.detail}")
        if not running:
            # PID 1 is root and out of the agent's reach: only the host, an operator or the engine
            # can have stopped the container.
            return EnvError("the sandbox container was stopped from outside", container=box.cid)
        if box.cgroup.oom_kills() > self._backend.oom_base.get(box.cid, 0):
            return SandboxOOM(f"the shell was killed for exceeding the sandbox's {box.limits.memory_mb} MiB "
                              "memory limit. Files in /workspace are kept for the verifier.")
        return SandboxGone(f"the shell exited (status {box.shell.returncode}); the agent's command ended it. "
                           "Files in /workspace are kept for the verifier.", exit_code=box.shell.returncode)

    async def run(self, command: str, *, timeout_s: float, max_output: int = 64_000) -> ExecResult:
        if self._closed:
            raise EnvError("sandbox is closed")
        box = self._box
        if box.shell.returncode is not None:
            raise await self._died()
        started = time.monotonic()
        marker = secrets.token_hex(12)
        script = frame(command, marker)
        cleared = self._clear_runaway()
        before = box.cgroup.pids()
        ooms_before = box.cgroup.oom_kills()

        async def on_idle() -> bool:  # a bomb still forking from an earlier command
            return self._clear_runaway()

        reply = await converse(box.shell, script, marker, deadline=started + timeout_s, max_output=max_output,
                               grace_s=SHELL_GRACE_S, kill_new=lambda: self._kill_new(before), died=self._died,
                               hard_kill=self._end_keep_files, on_idle=on_idle)
        if box.cgroup.oom_kills() > ooms_before:
            self._backend.oom_base[box.cid] = box.cgroup.oom_kills()
            raise SandboxOOM(f"the command exceeded the sandbox's {box.limits.memory_mb} MiB memory limit and the "
                             f"kernel killed it (exit status {reply.status}). Output (tail):\n{reply.output[-1500:]}",
                             exit_code=reply.status)
        runaway = cleared or reply.cleared or self._clear_runaway()
        return reply.result(started, RUNAWAY_NOTE if runaway else "")

    def _clear_runaway(self) -> bool:
        """A runaway (fork bomb) leaves the container at its pids limit, where the shell cannot fork:
        kill every process but PID 1, its `sleep` and the shell, background services included."""
        box = self._box
        if box.cgroup.task_count() < 0.8 * box.limits.processes:
            return False
        for _ in range(100):
            rest = [p for p in box.cgroup.pids() - box.core_pids]
            if not rest:
                break
            _signal_all(rest, signal.SIGKILL)
        return True

    def _kill_new(self, before: set[int]) -> None:
        """Kill every process the current command started (orphans too), sparing PID 1, the shell
        and background processes that were running before it. Host pids, from the cgroup."""
        box = self._box
        for _ in range(100):
            new = [p for p in box.cgroup.pids() - before if p != box.shell_pid]
            if not new:
                return
            _signal_all(new, signal.SIGKILL)

    async def _end_keep_files(self) -> None:
        """The agent wedged its shell: end every process in the container (it stops) but keep
        /workspace for the verifier, as the local backend does; `close` removes the rest."""
        box = self._box
        with contextlib.suppress(ProcessLookupError):
            box.shell.kill()
        _signal_all(list(box.cgroup.pids()), signal.SIGKILL)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(box.shell.wait(), timeout=5)
        self._ended = True

    async def export(self, dest: Path) -> None:
        if self._closed:
            raise EnvError("sandbox is closed")
        if not self._paused and not self._ended:  # an ended container has nothing left to pause
            await self._backend.engine.call("POST", f"/containers/{self._box.cid}/pause")
            self._paused = True
        proc = await asyncio.create_subprocess_exec(
            "cp", "-a", "--reflink=auto", "--no-target-directory", str(self.workspace), str(dest),
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        _, err = await proc.communicate()
        if proc.returncode != 0:
            raise EnvError(f"copying the workspace failed: {err.decode(errors='replace').strip()}")

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self._backend.remove(self._box)


# -- the backend ----------------------------------------------------------------------------------------
class DockerBackend(SandboxBackend):
    """Containers on the local Docker engine."""

    name = "docker"

    def __init__(self, settings: Settings | None = None, *, root: Path | None = None,
                 docker: DockerSettings | None = None) -> None:
        self.cfg = docker or DockerSettings()
        data = settings.data_dir if settings is not None else Path("/var/lib/envhub")
        self.root = root or data / "docker-sandboxes"
        self.engine = Engine(self.cfg.socket, self.cfg.api_timeout_s)
        self.owner = f"{socket.gethostname()}:{os.getpid()}"
        self.oom_base: dict[str, int] = {}
        self._pool: dict[tuple[int, ...], list[_Box]] = {}
        self._filling: dict[tuple[int, ...], asyncio.Task[None]] = {}
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
            "PidsLimit": limits.processes, "NanoCpus": int(self.cfg.cpus * 1e9),
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

    async def _launch(self, limits: SandboxLimits) -> _Box:
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
            cgroup = _Cgroup.of(init_pid)
            env = {"PATH": PATH, "HOME": WORKSPACE, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "dumb",
                   "USER": "agent", "TZ": "UTC", "TMPDIR": "/tmp"}
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
            shell_pid = next((p for p in cgroup.pids() if _ns_pid(p) == inner), 0)
            if not shell_pid:
                raise EnvError("cannot find the sandbox shell's host pid")
            self.oom_base[cid] = cgroup.oom_kills()
            return _Box(cid=cid, root=root, cgroup=cgroup, init_pid=init_pid, shell=shell, shell_pid=shell_pid,
                        limits=limits, core_pids=frozenset({init_pid, shell_pid, *_children(init_pid)}))
        except BaseException:
            if cid is not None:
                with contextlib.suppress(Exception):
                    await self.engine.call("DELETE", f"/containers/{cid}", params={"force": "1"})
            shutil.rmtree(root, ignore_errors=True)
            raise

    async def remove(self, box: _Box) -> None:
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

    # -- the warm pool ----------------------------------------------------------------------------------
    def _take(self, key: tuple[int, ...]) -> _Box | None:
        loop = asyncio.get_running_loop()
        boxes = self._pool.get(key, [])
        while boxes:
            box = boxes.pop()
            if box.loop is loop and box.shell.returncode is None:
                return box
            asyncio.ensure_future(self.remove(box))  # stale: another event loop, or dead
        return None

    def _refill(self, key: tuple[int, ...], limits: SandboxLimits) -> None:
        if self.cfg.pool <= 0:
            return
        task = self._filling.get(key)
        if task is not None and not task.done():
            return

        async def fill() -> None:
            while len(self._pool.setdefault(key, [])) < self.cfg.pool:
                try:
                    box = await self._launch(limits)
                except Exception as e:  # the engine may be down: the next start() tries cold and reports it
                    log.warning("warm pool refill failed: %s", e)
                    return
                self._pool.setdefault(key, []).append(box)

        self._filling[key] = asyncio.ensure_future(fill())

    async def warm(self, limits: SandboxLimits | None = None) -> None:
        """Fill the pool for `limits` now (benchmarks and servers that want a warm first reset)."""
        limits = limits or SandboxLimits()
        key = _limits_key(limits)
        self._refill(key, limits)
        task = self._filling.get(key)
        if task is not None:
            await task

    # -- the interface ------------------------------------------------------------------------------------
    async def start(self, spec: SandboxSpec) -> DockerSandbox:
        if spec.ro_binds or spec.rw_binds or spec.read_only_workspace:
            raise EnvError("the docker backend's session sandboxes take no extra binds; use run_once")
        key = _limits_key(spec.limits)
        box = self._take(key)
        self._refill(key, spec.limits)
        if box is None:
            box = await self._launch(spec.limits)  # engine faults surface here as Unavailable
        sandbox = DockerSandbox(self, box)
        try:
            if spec.template is not None:
                await self._fill_workspace(spec.template, box.workspace)
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

    async def _fill_workspace(self, template: Path, ws: Path) -> None:
        proc = await asyncio.create_subprocess_exec(
            "cp", "-a", "--reflink=auto", f"{template}/.", f"{ws}/",
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        _, err = await proc.communicate()
        if proc.returncode != 0:
            raise EnvError(f"copying {template} failed: {err.decode(errors='replace').strip()}")
        await asyncio.to_thread(_chown_tree, ws, self.cfg.uid)

    async def run_once(self, spec: SandboxSpec, argv: Sequence[str], *, timeout_s: float,
                       pass_fds: Sequence[int] = (), max_output: int = 64_000) -> ExecResult:
        if spec.template is None:
            raise ValueError("run_once needs spec.template (the state to show)")
        self.check()
        await self._reap_orphans()
        uid = self.cfg.uid
        await asyncio.to_thread(_chown_tree, spec.template, uid)
        result = self.root / f"result-{uuid.uuid4().hex[:16]}"
        result.mkdir(parents=True, mode=0o700)
        binds = [(str(spec.template), WORKSPACE, spec.read_only_workspace),
                 *((str(Path(h).resolve()), c, True) for h, c in spec.ro_binds.items()),
                 *((str(Path(h).resolve()), c, False) for h, c in spec.rw_binds.items()),
                 (str(result), RESULT_DIR, False)]
        # Each inherited fd becomes fd 3, 4, ... opened by root on a file only root can open.
        fd_map = {str(fd): str(3 + i) for i, fd in enumerate(pass_fds)}
        env = {"PATH": PATH, "HOME": WORKSPACE, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "dumb",
               "USER": "agent", "TZ": "UTC", "TMPDIR": "/tmp"}
        env.update({k: fd_map.get(v, v) if k.endswith("_FD") else v for k, v in spec.env.items()})
        opens = " ".join(f"{3 + i}>{RESULT_DIR}/{i}" for i in range(len(pass_fds)))
        script = (f"{'exec ' + opens + ' && ' if opens else ''}"
                  f'exec setpriv --reuid={uid} --regid={uid} --clear-groups -- "$@"')
        cid = await self._create(["/bin/sh", "-c", script, "sh", *argv], spec.limits, binds, user="0:0",
                                 workdir=spec.workdir, env=env, cap_add=("SETUID", "SETGID"),
                                 host_extra=VERIFIER_HOST_CONFIG)  # the SWE harness jails the code under test
        started = time.monotonic()
        timed_out = False
        exit_code: int | None = None
        clip = Clip(max_output)
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
            for i, fd in enumerate(pass_fds):
                path = result / str(i)
                if path.is_file() and not path.is_symlink():
                    await asyncio.to_thread(_forward, path, fd)
        finally:
            with contextlib.suppress(Exception):
                await self.engine.call("DELETE", f"/containers/{cid}", params={"force": "1"}, timeout_s=30)
            await asyncio.to_thread(shutil.rmtree, result, True)
        return ExecResult(exit_code=None if timed_out else exit_code, output=clip.text(), timed_out=timed_out,
                          truncated=clip.truncated, elapsed_s=time.monotonic() - started)

    async def aclose(self) -> None:
        for task in self._filling.values():
            task.cancel()
        boxes = [b for bs in self._pool.values() for b in bs]
        self._pool.clear()
        loop = asyncio.get_running_loop()
        await asyncio.gather(*(self.remove(b) for b in boxes if b.loop is loop), return_exceptions=True)
        await self.engine.aclose()


def _forward(path: Path, fd: int, limit: int = 4 * MiB + 1) -> None:
    """Copy a result file into the caller's pipe, never more than the reader takes (no deadlock)."""
    with path.open("rb") as f:
        data = f.read(limit)
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]
