"""The local backend: bubblewrap namespaces on this machine (the embedded default).

Each sandbox is `bwrap` with user, pid, net, ipc and uts namespaces, the host's `/usr` and
`/etc` read-only, a private `/tmp`, and a writable `/workspace` that is a fresh copy of the
task's template (a reflink where the filesystem has them). It runs as a host uid of its own
from a pool, so RLIMIT_NPROC caps the processes of *that* sandbox (a fork bomb stays inside)
and sessions cannot touch each other's files. A persistent `bash` per sandbox means a step pays
no process start-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import errno
import fcntl
import json
import logging
import os
import resource
import secrets
import shutil
import signal
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

from envhub.errors import EnvError, SandboxGone, SandboxUnavailable, Unavailable
from envhub.sandbox.base import (
    RESULT_FD_ENV,
    RESULT_LIMIT,
    UNLIMITED_MB,
    WORKSPACE,
    ExecResult,
    Sandbox,
    SandboxBackend,
    SandboxLimits,
    SandboxSpec,
    Service,
)
from envhub.sandbox.process import (
    AGENT,
    SHELL,
    base_env,
    children,
    chown_tree,
    copy_tree,
    cpu_set,
    descendants,
    signal_all,
)
from envhub.sandbox.shell import RUNAWAY_NOTE, SHELL_GRACE_S, Clip, converse, frame
from envhub.sandbox.spawn import Process, spawn

log = logging.getLogger("envhub.sandbox.local")
SANDBOX_UID = 1000  # what the agent sees inside
#: Host folders some Debian toolchains need read-only beside /usr and /etc (GHC's package
#: database: /usr/lib/ghc/package.conf.d links to /var/lib/ghc).
TOOLCHAIN_STATE = ("/var/lib/ghc",)
#: Where servers claim sandbox uids (flock per uid file): one folder for the whole host. Uids are the
#: kernel's: a root server in a container binds this folder from the host (docker/ray/compose.yaml).
UID_LOCKS = Path("/run/lock/envhub-uids")


def identity_files(dest: Path, uid: int = SANDBOX_UID) -> tuple[Path, Path]:
    """The host's /etc/passwd and /etc/group with `uid` renamed `agent`: files in the sandbox show
    as owned by `agent` (`ls -l`, `id`, `whoami`), never by a host account that happens to hold uid 1000."""
    dest.mkdir(parents=True, exist_ok=True)
    out = []
    for name, line in (("passwd", f"{AGENT}:x:{uid}:{uid}:{AGENT}:{WORKSPACE}:/bin/bash"),
                       ("group", f"{AGENT}:x:{uid}:")):
        host = Path("/etc", name).read_text(encoding="utf-8", errors="replace").splitlines()
        kept = [h for h in host if h.split(":")[0] != AGENT and (h.split(":") + ["", "", ""])[2] != str(uid)]
        target = dest / name
        tmp = dest / f".{name}.{os.getpid()}"
        tmp.write_text("\n".join([*kept, line]) + "\n", encoding="utf-8")
        tmp.chmod(0o644)
        tmp.replace(target)  # atomic: a sandbox starting now sees the old or the new file, never half
        out.append(target)
    return out[0], out[1]


_LIBC = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG = 1


class CpuQuota:
    """A sandbox's CPU limit that holds: a CFS quota cgroup (v1 `cpu.cfs_quota_us`, v2 `cpu.max`)
    under this server's own, where the host lets us make one. Affinity alone (what `nproc`
    reports) does not hold: a process may widen its own with `taskset`."""

    PERIOD_US = 100_000
    _parent: Path | None | bool = False  # not looked up yet

    @classmethod
    def parent(cls) -> Path | None:
        """`<our cpu cgroup>/envhub`, or None where no writable cpu controller is ours."""
        if cls._parent is False:
            cls._parent = None
            with contextlib.suppress(OSError, ValueError):
                for line in Path("/proc/self/cgroup").read_text().splitlines():
                    _, controllers, rel = line.split(":", 2)
                    rel = rel.lstrip("/")
                    if "cpu" in controllers.split(","):
                        candidates = [Path("/sys/fs/cgroup", mount, rel) for mount in ("cpu", "cpu,cpuacct")]
                    elif controllers == "" and "cpu" in (Path("/sys/fs/cgroup", rel, "cgroup.subtree_control")
                                                         .read_text().split()):
                        candidates = [Path("/sys/fs/cgroup", rel)]
                    else:
                        continue
                    for c in candidates:
                        if os.access(c, os.W_OK):
                            (c / "envhub").mkdir(exist_ok=True)
                            cls._parent = c / "envhub"
                            break
                    if cls._parent:
                        break
        return cls._parent or None

    @classmethod
    def make(cls, name: str, cpus: float) -> Path | None:
        """A fresh cgroup limited to `cpus` CPUs; None where none can be made (affinity only)."""
        parent = cls.parent()
        if parent is None:
            return None
        group = parent / name
        quota = max(1000, int(cpus * cls.PERIOD_US))
        try:
            group.mkdir()
            if (group / "cpu.max").exists():
                (group / "cpu.max").write_text(f"{quota} {cls.PERIOD_US}")
            else:
                (group / "cpu.cfs_period_us").write_text(str(cls.PERIOD_US))
                (group / "cpu.cfs_quota_us").write_text(str(quota))
        except OSError as e:
            log.warning("cannot make a cpu cgroup for a sandbox (the CPU limit is affinity only): %s", e)
            cls.remove(group)
            return None
        return group

    @staticmethod
    def remove(group: Path | None) -> None:
        if group is not None:
            with contextlib.suppress(OSError):
                group.rmdir()


def _moved(src: Path, dest: Path) -> bool:
    """Move the folder `src` to `dest` if both are on one filesystem (a rename: no byte is copied)."""
    try:
        os.rename(src, dest)
    except OSError as e:
        if e.errno == errno.EXDEV:
            return False
        raise
    return True


#: util-linux's and coreutils' programs that set what `_limits_preexec` sets, one exec each.
_LAUNCH_TOOLS = tuple(shutil.which(name) for name in ("prlimit", "setpriv", "env"))


def _launcher(limits: SandboxLimits, uid: int | None) -> list[str] | None:
    """An argv prefix that sets the limits, the uid and the signals `_limits_preexec` sets and then
    execs the rest, or None where a tool is missing. No Python runs between fork and exec, so
    Python spawns by vfork: no copy of the server's page tables, and no copy-on-write of its
    pages by a child that touches Python objects (a sandbox's start took 2 to 3 times as long).
    CPU quotas and pinning still need the preexec (a cgroup is joined before exec)."""
    prlimit, setpriv, env = _LAUNCH_TOOLS
    if not (prlimit and setpriv and env):
        return None
    mb = 1024 * 1024
    space = "unlimited" if limits.memory_mb >= UNLIMITED_MB else str(limits.memory_mb * mb)
    ids = ["--reuid", str(uid), "--regid", str(uid), "--clear-groups"] if uid is not None else []
    # pdeathsig after the uid change, which clears it: die with the server.
    return [prlimit, f"--cpu={limits.cpu_s}", f"--as={space}", f"--nproc={limits.processes}",
            f"--fsize={limits.file_mb * mb}", f"--nofile={limits.open_files}", "--core=0", "--",
            setpriv, *ids, "--pdeathsig", "KILL", "--",
            env, "--default-signal", "--"]  # signals as a fresh process has them (see `_limits_preexec`)


def _limits_preexec(limits: SandboxLimits, uid: int | None, cpu_group: Path | None = None):
    """Runs in the child between fork and exec: signals as a fresh process has them, CPUs, limits,
    then the sandbox's own uid."""
    mb = 1024 * 1024
    pinned = cpu_set(limits.cpus)
    # An ignored signal stays ignored across fork and exec: a server started in the background
    # (`cmd &` in a script ignores SIGINT and SIGQUIT, `nohup` SIGHUP) passed that on to every
    # sandbox, and what the code inside could do to a process depended on how the server was
    # launched (a SWE test run shrugged off the SIGINT its code under test sent it). Handlers are
    # reset by exec; ignored signals are reset here, and nothing is blocked.
    ignored = [sig for sig in signal.valid_signals() if signal.getsignal(sig) is signal.SIG_IGN]

    def apply() -> None:
        for sig in ignored:
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, ())
        if cpu_group is not None:
            (cpu_group / "cgroup.procs").write_text(str(os.getpid()))
        if pinned is not None:
            os.sched_setaffinity(0, pinned)
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s))
        space = resource.RLIM_INFINITY if limits.memory_mb >= UNLIMITED_MB else limits.memory_mb * mb
        resource.setrlimit(resource.RLIMIT_AS, (space, space))
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_mb * mb, limits.file_mb * mb))
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if uid is not None:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # after setuid, which clears it: die with the server

    return apply


class LocalSandbox(Sandbox):
    def __init__(self, backend: LocalBackend, proc: Process, root: Path, uid: int,
                 limits: SandboxLimits, cpu_group: Path | None = None) -> None:
        self._backend = backend
        self._cpu_group = cpu_group
        self._proc = proc
        self.root = root
        self.uid = uid
        self.limits = limits
        self._closed = False
        #: bwrap's pid 1 inside the sandbox, as the host sees it, and its pid namespace: killing it
        #: ends every process of the sandbox, even after the outer bwrap is gone.
        self._init: tuple[int, str] | None = None
        self._info_read = asyncio.Event()  # bwrap's --info-fd was read (or closed): `_init` is final
        self._machinery: set[int] | None = None

    def watch_info(self, fd: int) -> None:
        """Read bwrap's `--info-fd` JSON (the sandbox's pid 1) without delaying the reset."""
        loop = asyncio.get_running_loop()
        buf = bytearray()

        def readable() -> None:
            chunk = b""
            with contextlib.suppress(BlockingIOError):
                chunk = os.read(fd, 4096)
            buf.extend(chunk)
            if chunk and b"}" not in buf:
                return
            loop.remove_reader(fd)
            os.close(fd)
            with contextlib.suppress(ValueError, KeyError, OSError):
                pid = int(json.loads(buf)["child-pid"])
                self._init = (pid, os.readlink(f"/proc/{pid}/ns/pid"))
            self._info_read.set()

        os.set_blocking(fd, False)
        loop.add_reader(fd, readable)

    def _kill_namespace(self) -> None:
        if self._init is None:
            return
        pid, ns = self._init
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/{pid}/ns/pid") == ns:  # the same process, not a reused pid
                os.kill(pid, signal.SIGKILL)

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    def _keep(self) -> set[int]:
        """The sandbox's own machinery, never killed by a clean-up: bwrap's pid 1 and the shell.

        Found once from bwrap's --info-fd (the shell is the only child of pid 1) and cached:
        /proc's children lists are racy while processes fork, a cached pid is not.
        """
        if self._machinery is None:
            init = self._init[0] if self._init else next(iter(children(self._proc.pid)), None)
            kids = children(init) if init else []
            if kids:
                self._machinery = {init, kids[0]}
        return self._machinery or set()

    def _sandbox_pids(self) -> set[int]:
        return set(descendants(self._proc.pid))

    async def is_alive(self) -> bool:
        return not self._closed and self._proc.returncode is None

    async def _died(self) -> EnvhubErrorType:
        """Classify a dead shell from the host's view of the process, not from its output."""
        rc = self._proc.returncode
        if rc is not None and rc < 0:
            # The outer bwrap process was signalled: only the host (or an operator, or the OOM
            # killer acting on the host) can do that; the agent cannot see it from inside.
            return EnvError(f"sandbox killed from outside (signal {-rc})", signal=-rc)
        return SandboxGone(f"the shell exited (status {rc}); the agent's command ended it. "
                           "Files in /workspace are kept for the verifier.", exit_code=rc)

    async def run(self, command: str, *, timeout_s: float, max_output: int = 64_000) -> ExecResult:
        if self._closed:
            raise EnvError("sandbox is closed")
        if self._proc.returncode is not None:
            raise await self._died()
        started = time.monotonic()
        marker = secrets.token_hex(12)
        script = frame(command, marker)
        cleared = self._clear_runaway()
        before = self._sandbox_pids()
        reply = await converse(self._proc, script, marker, deadline=started + timeout_s, max_output=max_output,
                               grace_s=SHELL_GRACE_S, kill_new=lambda: self._kill_new(before), died=self._died,
                               hard_kill=self._hard_kill, on_idle=self._on_idle)
        runaway = cleared or reply.cleared or self._clear_runaway()
        return reply.result(started, RUNAWAY_NOTE if runaway else "")

    async def _on_idle(self) -> bool:
        """While a command is silent: notice bwrap dying while one of its children holds the pipe
        open, and clear a bomb still forking from an earlier command."""
        if self._proc.returncode is not None:
            self._kill_namespace()
            raise await self._died()
        return self._clear_runaway()

    def _clear_runaway(self) -> bool:
        """A runaway (fork bomb) leaves the sandbox unusable at its process limit: kill every
        process but the shell, background services included."""
        if len(self._sandbox_pids()) < 0.8 * self.limits.processes:
            return False
        self._kill_new(set())
        return True

    def _kill_new(self, before: set[int]) -> None:
        """Kill every process the current command started (orphans too), sparing the shell and
        the background processes that were running before it."""
        keep = self._keep()
        if not keep:
            return  # not set up yet: nothing of the command's can be running
        for _ in range(100):
            new = [p for p in self._sandbox_pids() - before - keep]
            if not new:
                return
            signal_all(new, signal.SIGKILL)

    async def export(self, dest: Path) -> None:
        if self._closed:
            raise EnvError("sandbox is closed")
        signal_all(list(self._sandbox_pids()), signal.SIGSTOP)  # freeze: nothing changes under the copy
        await self._backend.copy_tree(self.workspace, dest)

    async def snapshot(self, dest: Path) -> None:
        if self._closed:
            raise EnvError("sandbox is closed")
        pids = list(self._sandbox_pids())
        signal_all(pids, signal.SIGSTOP)  # nothing changes under the copy
        try:
            await self._backend.copy_tree(self.workspace, dest)
        finally:
            signal_all(list(self._sandbox_pids()), signal.SIGCONT)

    async def _hard_kill(self) -> None:
        # The namespace first: its pid 1 dies, the outer bwrap reaps it and exits, and we reap
        # bwrap; killing bwrap first would leave its pid 1 to the host's init to reap. A sandbox
        # closed as soon as it started (a fork closed at once) may not have said its pid 1 yet:
        # bwrap says it within milliseconds of its start, so wait for it a little.
        if self._proc.returncode is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._info_read.wait(), timeout=0.1)
        self._kill_namespace()
        for _ in range(100):  # rounds: a fork bomb keeps forking while it is being killed
            pids = list(self._sandbox_pids())
            if not pids:
                break
            signal_all(pids, signal.SIGKILL)
        if self._init is None and self._proc.returncode is None:  # not yet reaped: the pid is still its own
            # bwrap never said its pid 1: the outer process may still be the launcher, with nothing
            # under it to kill, so nothing would end it. Ending it ends what it starts (bwrap's
            # --die-with-parent).
            signal_all([self._proc.pid], signal.SIGKILL)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._proc.wait(), timeout=2)
            return
        signal_all([self._proc.pid], signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, TimeoutError):
            await asyncio.wait_for(self._proc.wait(), timeout=5)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self._hard_kill()
        for _ in range(500):  # the uid goes back to the pool only once none of its processes is left
            if self._init is None or not os.path.exists(f"/proc/{self._init[0]}/task"):
                break
            await asyncio.sleep(0.01)
        CpuQuota.remove(self._cpu_group)
        self._backend.release(self.uid)
        await asyncio.to_thread(shutil.rmtree, self.root, True)


EnvhubErrorType = EnvError | SandboxGone


class LocalService(Service):
    """A service's bubblewrap process and the host uid it holds until `close`."""

    def __init__(self, backend: LocalBackend, proc: Process, uid: int) -> None:
        self.backend = backend
        self.proc = proc
        self.uid = uid
        self._killed = False
        self._closed = False

    @property
    def alive(self) -> bool:
        return not self._killed and self.proc.returncode is None

    def kill(self) -> None:
        """bwrap's --die-with-parent takes its pid namespace, with whatever still runs in it, down too."""
        self._killed = True
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.proc.pid, signal.SIGKILL)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.kill()
        with contextlib.suppress(ProcessLookupError):
            await self.proc.wait()
        self.backend.release(self.uid)  # once: the uid may be another sandbox's afterwards

    async def hand_over(self, folder: Path) -> None:
        if self.backend.is_root:
            await asyncio.to_thread(chown_tree, folder, self.uid)

    async def output(self, limit: int) -> str:
        if self.proc.stdout is None:
            return ""
        try:
            return (await asyncio.wait_for(self.proc.stdout.read(limit), timeout=1)).decode(errors="replace")
        except (TimeoutError, OSError, ValueError):
            return ""


class LocalBackend(SandboxBackend):
    """bubblewrap on this host."""

    name = "local"
    no_services = None

    def __init__(self, root: Path, *, uid_base: int = 300_000, uid_count: int = 8192) -> None:
        self.root = root
        self._is_root = os.geteuid() == 0
        self._free_uids = list(range(uid_base + uid_count - 1, uid_base - 1, -1))
        self._taken_elsewhere: list[int] = []
        self._uid_locks: dict[int, int] = {}
        self._swept = False
        self._bwrap = shutil.which("bwrap")
        self._identity: tuple[Path, Path] | None = None

    def check(self) -> None:
        if not self._bwrap:
            raise SandboxUnavailable(
                "bubblewrap is not installed; install the Debian package: apt-get install bubblewrap")

    # -- uid pool ------------------------------------------------------------------------------
    # Several servers may share a host: a uid is claimed with an flock on a file of its own, so two
    # processes never hand out the same uid (the kernel drops the lock if a server dies).
    def _take_uid(self) -> int:
        if not self._is_root:
            return os.geteuid()  # cannot switch users: one uid for all, no per-sandbox NPROC
        locks = UID_LOCKS  # host-wide, whatever data folder each server uses
        if not self._swept:
            locks.mkdir(parents=True, exist_ok=True)
            self._sweep_orphans(locks)
        while self._free_uids:
            uid = self._free_uids.pop()
            fd = os.open(locks / str(uid), os.O_CREAT | os.O_RDWR, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                self._taken_elsewhere.append(uid)
                continue
            self._uid_locks[uid] = fd
            return uid
        self._free_uids, self._taken_elsewhere = self._taken_elsewhere[::-1], []
        raise Unavailable("no free sandbox uid", retry_after_s=1)

    def _sweep_orphans(self, locks: Path) -> None:
        """Kill processes left by a server that died: their uid is in our range but no live server
        holds its lock."""
        self._swept = True
        lo, hi = min(self._free_uids), max(self._free_uids)
        owners: dict[int, list[int]] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                with contextlib.suppress(OSError):
                    uid = os.stat(f"/proc/{entry}").st_uid
                    if lo <= uid <= hi:
                        owners.setdefault(uid, []).append(int(entry))
        for uid, pids in owners.items():
            fd = os.open(locks / str(uid), os.O_CREAT | os.O_RDWR, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a live server's sandbox
            finally:
                os.close(fd)
            signal_all(pids, signal.SIGKILL)

    def release(self, uid: int) -> None:
        fd = self._uid_locks.pop(uid, None)
        if fd is not None:
            os.close(fd)  # drops the flock
            self._free_uids.insert(0, uid)  # reuse the least recently used uid last

    # -- file helpers --------------------------------------------------------------------------
    async def copy_tree(self, src: Path, dest: Path, uid: int | None = None) -> None:
        """Copy a tree as it is, given to `uid` where we may."""
        await copy_tree(src, dest)
        if uid is not None and self._is_root:
            await asyncio.to_thread(chown_tree, dest, uid)

    def _argv(self, spec: SandboxSpec, workspace: Path) -> list[str]:
        assert self._bwrap
        argv = [
            self._bwrap, "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc",
            "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent", "--new-session",
            "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--hostname", "sandbox",
            "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc",
            "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
            "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
            "--proc", "/proc", "--dev", "/dev",
            "--size", str(spec.limits.file_mb * 1024 * 1024), "--tmpfs", "/tmp",
            "--ro-bind" if spec.read_only_workspace else "--bind", str(workspace), WORKSPACE,
        ]
        if self._identity is None:
            self._identity = identity_files(self.root / "etc")
        argv += ["--ro-bind", str(self._identity[0]), "/etc/passwd", "--ro-bind", str(self._identity[1]), "/etc/group"]
        for state in TOOLCHAIN_STATE:  # toolchains whose /usr files point outside /usr
            if os.path.isdir(state):
                argv += ["--ro-bind", state, state]
        for host, inside in spec.ro_binds.items():
            argv += ["--ro-bind", host, inside]
        for host, inside in spec.rw_binds.items():
            argv += ["--bind", host, inside]
        env = base_env() | spec.env
        argv.append("--clearenv")
        for k, v in env.items():
            argv += ["--setenv", k, v]
        argv += ["--chdir", spec.workdir]
        return argv

    async def _spawn(self, argv: list[str], uid: int, limits: SandboxLimits, pass_fds: Sequence[int] = (),
                     stdin: int = asyncio.subprocess.PIPE, cpu_group: Path | None = None) -> Process:
        owner = uid if self._is_root else None
        launch = _launcher(limits, owner) if cpu_group is None and limits.cpus is None else None
        preexec = None if launch is not None else _limits_preexec(limits, owner, cpu_group)
        try:
            return await spawn([*(launch or ()), *argv], stdin=stdin, preexec_fn=preexec, pass_fds=pass_fds,
                               start_new_session=True)
        except OSError as e:
            raise EnvError(f"cannot start bubblewrap: {e}") from e

    async def start(self, spec: SandboxSpec) -> LocalSandbox:
        self.check()
        uid = self._take_uid()
        root = self.root / f"sbx-{uuid.uuid4().hex[:16]}"
        cpu_group = None
        try:
            root.mkdir(parents=True)
            if spec.limits.cpus is not None:
                cpu_group = CpuQuota.make(root.name, spec.limits.cpus)
            workspace = root / "workspace"
            if spec.template is not None and spec.take_template and _moved(spec.template, workspace):
                if self._is_root:
                    await asyncio.to_thread(chown_tree, workspace, uid)
            elif spec.template is not None:
                await self.copy_tree(spec.template, workspace, uid)
            else:
                workspace.mkdir()
                if self._is_root:
                    os.chown(workspace, uid, uid)
            info_r, info_w = os.pipe()
            try:
                proc = await self._spawn([*self._argv(spec, workspace), "--info-fd", str(info_w), "--", *SHELL],
                                         uid, spec.limits, pass_fds=(info_w,), cpu_group=cpu_group)
            finally:
                os.close(info_w)
        except BaseException:
            CpuQuota.remove(cpu_group)
            self.release(uid)
            shutil.rmtree(root, ignore_errors=True)
            raise
        sandbox = LocalSandbox(self, proc, root, uid, spec.limits, cpu_group)
        sandbox.watch_info(info_r)
        return sandbox

    async def start_service(self, spec: SandboxSpec, argv: Sequence[str], *, capabilities: Sequence[str] = (),
                            device_root: str | None = None, pass_fds: Sequence[int] = ()) -> LocalService:
        """A bubblewrap sandbox of its own uid around a long-lived process (see the interface)."""
        self.check()
        if spec.template is None:
            raise ValueError("start_service needs spec.template")
        extra = ["--dev", device_root] if device_root else []
        extra += [a for cap in capabilities for a in ("--cap-add", cap)]
        uid = self._take_uid()
        try:
            proc = await self._spawn([*self._argv(spec, spec.template), *extra, "--", *argv], uid, spec.limits,
                                     pass_fds=pass_fds, stdin=asyncio.subprocess.DEVNULL)
        except BaseException:
            self.release(uid)
            raise
        return LocalService(self, proc, uid)

    @property
    def is_root(self) -> bool:
        """Whether sandboxes get host uids of their own (files they must read are chowned to them)."""
        return self._is_root

    async def run_once(self, spec: SandboxSpec, argv: Sequence[str], *, timeout_s: float, max_output: int = 64_000,
                       result: bool = False) -> ExecResult:
        """The result channel is a pipe: the program inherits its write end, the backend reads the
        other; nothing in the sandbox's file system leads to it."""
        self.check()
        if spec.template is None:
            raise ValueError("run_once needs spec.template (the state to show)")
        uid = self._take_uid()
        cpu_group = CpuQuota.make(f"once-{uuid.uuid4().hex[:16]}", spec.limits.cpus) if spec.limits.cpus else None
        read_fd = write_fd = -1
        try:
            if self._is_root:
                await asyncio.to_thread(chown_tree, spec.template, uid)
            if result:
                read_fd, write_fd = os.pipe()
                spec = spec.model_copy(update={"env": {**spec.env, RESULT_FD_ENV: str(write_fd)}})
                reader = asyncio.get_running_loop().run_in_executor(None, _read_result, read_fd)
            started = time.monotonic()
            try:
                proc = await self._spawn([*self._argv(spec, spec.template), "--", *argv], uid, spec.limits,
                                         pass_fds=(write_fd,) if result else (), stdin=asyncio.subprocess.DEVNULL,
                                         cpu_group=cpu_group)
            finally:
                if result:
                    os.close(write_fd)  # the program holds the only write end: EOF when it is gone
            clip = Clip(max_output)
            timed_out = False

            async def pump() -> None:
                assert proc.stdout
                while chunk := await proc.stdout.read(65536):
                    clip.add(chunk)

            try:
                await asyncio.wait_for(asyncio.gather(pump(), proc.wait()), timeout=timeout_s)
            except TimeoutError:
                timed_out = True
                signal_all([proc.pid, *descendants(proc.pid)], signal.SIGKILL)
                await proc.wait()
            written = await reader if result else None
            return ExecResult(exit_code=None if timed_out else proc.returncode, output=clip.text(),
                              timed_out=timed_out, truncated=clip.truncated,
                              elapsed_s=time.monotonic() - started, result=written)
        finally:
            if read_fd >= 0:
                os.close(read_fd)
            CpuQuota.remove(cpu_group)
            self.release(uid)


def _read_result(fd: int) -> bytes:
    """Everything written to the result pipe; empty when it is over `RESULT_LIMIT`."""
    chunks: list[bytes] = []
    size = 0
    while chunk := os.read(fd, 65536):
        size += len(chunk)
        if size > RESULT_LIMIT:
            return b""
        chunks.append(chunk)
    return b"".join(chunks)
