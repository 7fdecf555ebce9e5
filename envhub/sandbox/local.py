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
import fcntl
import json
import os
import resource
import secrets
import shutil
import signal
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

from envhub.errors import AgentError, EnvError, SandboxUnavailable, Unavailable
from envhub.sandbox.base import WORKSPACE, ExecResult, Sandbox, SandboxBackend, SandboxLimits, SandboxSpec

SHELL = ("/bin/bash", "--noprofile", "--norc")
SANDBOX_UID = 1000  # what the agent sees inside
#: Host folders some Debian toolchains need read-only beside /usr and /etc (GHC's package
#: database: /usr/lib/ghc/package.conf.d links to /var/lib/ghc).
TOOLCHAIN_STATE = ("/var/lib/ghc",)
#: Where servers claim sandbox uids (flock per uid file): one folder for the whole host.
UID_LOCKS = Path("/run/lock/envhub-uids")
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class SandboxGone(AgentError):
    """The agent's own command ended its shell (e.g. `exit`, `kill -9 $$`)."""

    code = "sandbox_gone"


def _descendants(pid: int) -> list[int]:
    """Every live descendant of `pid`, parents before children."""
    out: list[int] = []
    stack = [pid]
    while stack:
        p = stack.pop()
        try:
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children") as f:
                    kids = [int(c) for c in f.read().split()]
                out.extend(kids)
                stack.extend(kids)
        except (FileNotFoundError, ProcessLookupError, NotADirectoryError):
            continue
    return out


_LIBC = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG = 1


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except FileNotFoundError:
        return []


def _signal_all(pids: Sequence[int], sig: int) -> None:
    for p in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(p, sig)


def _limits_preexec(limits: SandboxLimits, uid: int | None):
    """Runs in the child between fork and exec: limits, then the sandbox's own uid."""
    mb = 1024 * 1024

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s))
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_mb * mb, limits.memory_mb * mb))
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


class _Clip:
    """Keeps the head and the tail of a stream within `limit` bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.limit // 2 - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            del self.tail[: max(0, len(self.tail) - self.limit // 2)]

    @property
    def truncated(self) -> bool:
        return self.total > len(self.head) + len(self.tail)

    def text(self) -> str:
        if self.truncated:
            skipped = self.total - len(self.head) - len(self.tail)
            body = bytes(self.head) + f"\n[... {skipped} bytes of output omitted ...]\n".encode() + bytes(self.tail)
        else:
            body = bytes(self.head) + bytes(self.tail)
        return body.decode("utf-8", errors="replace")


class LocalSandbox(Sandbox):
    def __init__(self, backend: LocalBackend, proc: asyncio.subprocess.Process, root: Path, uid: int,
                 limits: SandboxLimits) -> None:
        self._backend = backend
        self._proc = proc
        self.root = root
        self.uid = uid
        self.limits = limits
        self._closed = False
        #: bwrap's pid 1 inside the sandbox, as the host sees it, and its pid namespace: killing it
        #: ends every process of the sandbox, even after the outer bwrap is gone.
        self._init: tuple[int, str] | None = None
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
            init = self._init[0] if self._init else next(iter(_children(self._proc.pid)), None)
            kids = _children(init) if init else []
            if kids:
                self._machinery = {init, kids[0]}
        return self._machinery or set()

    def _sandbox_pids(self) -> set[int]:
        return set(_descendants(self._proc.pid))

    async def is_alive(self) -> bool:
        return not self._closed and self._proc.returncode is None

    def _died(self) -> EnvhubErrorType:
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
            raise self._died()
        started = time.monotonic()
        marker = secrets.token_hex(12).encode()
        if "\0" in command:
            raise AgentError("a command cannot contain NUL bytes")
        # The command travels as a here-document read by a builtin: no fork and no decoding
        # process, so it runs (or fails visibly) even when the sandbox is at its process limit.
        # The random marker ends the document and frames the exit status; no output can fake it.
        tag = marker.decode()
        script = (f"IFS= read -r -d '' __envhub_cmd <<'{tag}'\n{command}\n{tag}\n"
                  f'{{ eval "$__envhub_cmd"; }} </dev/null 2>&1; printf "\\n{tag}:%s\\n" "$?"\n')
        cleared = self._clear_runaway()
        before = self._sandbox_pids()
        assert self._proc.stdin and self._proc.stdout
        try:
            self._proc.stdin.write(script.encode())
            await self._proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            await self._proc.wait()
            raise self._died() from None
        clip = _Clip(max_output)
        flood_cap = 16 * max_output
        timed_out = False
        deadline = started + timeout_s
        exit_code: int | None = None
        sentinel = b"\n" + marker + b":"
        pending = bytearray()
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 and not timed_out:
                timed_out = True
                self._kill_new(before)
                deadline = time.monotonic() + 30  # grace for the shell to report back (slow under load)
                continue
            if remaining <= 0:
                # The shell did not come back even after its children died: it is wedged.
                await self._hard_kill()
                raise SandboxGone("the shell stopped responding after a timed-out command")
            try:
                chunk = await asyncio.wait_for(self._proc.stdout.read(65536), timeout=min(remaining, 0.5))
            except TimeoutError:
                if self._proc.returncode is not None:  # bwrap is gone; its children may hold the pipe
                    self._kill_namespace()
                    raise self._died() from None
                cleared = self._clear_runaway() or cleared  # a bomb still forking from an earlier command
                continue
            if not chunk:
                await self._proc.wait()
                raise self._died()
            pending += chunk
            idx = pending.find(sentinel)
            if idx >= 0:
                end = pending.find(b"\n", idx + len(sentinel))
                if end < 0:
                    continue  # the status line is still arriving
                clip.add(bytes(pending[:idx]))
                exit_code = int(pending[idx + len(sentinel):end] or b"-1")
                break
            # Keep enough bytes to find a sentinel split across reads.
            keep = len(sentinel) + 16
            if len(pending) > keep:
                clip.add(bytes(pending[:-keep]))
                del pending[:-keep]
            if clip.total > flood_cap and not timed_out:
                self._kill_new(before)  # output flood: stop it, keep what was said
        output = clip.text()
        if cleared or self._clear_runaway():
            output += "\n[the sandbox hit its process limit; every process but the shell was killed]"
        return ExecResult(exit_code=None if timed_out else exit_code, output=output, timed_out=timed_out,
                          truncated=clip.truncated, elapsed_s=time.monotonic() - started)

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
            _signal_all(new, signal.SIGKILL)

    async def export(self, dest: Path) -> None:
        if self._closed:
            raise EnvError("sandbox is closed")
        _signal_all(list(self._sandbox_pids()), signal.SIGSTOP)  # freeze: nothing changes under the copy
        await self._backend.copy_tree(self.workspace, dest)

    async def _hard_kill(self) -> None:
        # The namespace first: its pid 1 dies, the outer bwrap reaps it and exits, and we reap
        # bwrap; killing bwrap first would leave its pid 1 to the host's init to reap.
        self._kill_namespace()
        for _ in range(100):  # rounds: a fork bomb keeps forking while it is being killed
            pids = list(self._sandbox_pids())
            if not pids:
                break
            _signal_all(pids, signal.SIGKILL)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._proc.wait(), timeout=2)
            return
        _signal_all([self._proc.pid], signal.SIGKILL)
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
        self._backend.release(self.uid)
        await asyncio.to_thread(shutil.rmtree, self.root, True)


EnvhubErrorType = EnvError | SandboxGone


class LocalBackend(SandboxBackend):
    """bubblewrap on this host."""

    name = "local"

    def __init__(self, root: Path, *, uid_base: int = 300_000, uid_count: int = 8192) -> None:
        self.root = root
        self._is_root = os.geteuid() == 0
        self._free_uids = list(range(uid_base + uid_count - 1, uid_base - 1, -1))
        self._taken_elsewhere: list[int] = []
        self._uid_locks: dict[int, int] = {}
        self._swept = False
        self._bwrap = shutil.which("bwrap")
        self._cp = shutil.which("cp") or "/bin/cp"

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
            _signal_all(pids, signal.SIGKILL)

    def release(self, uid: int) -> None:
        fd = self._uid_locks.pop(uid, None)
        if fd is not None:
            os.close(fd)  # drops the flock
            self._free_uids.insert(0, uid)  # reuse the least recently used uid last

    # -- file helpers --------------------------------------------------------------------------
    async def copy_tree(self, src: Path, dest: Path, uid: int | None = None) -> None:
        """Copy a tree with modes and symlinks as they are (`cp -a`, reflink where possible)."""
        dest.parent.mkdir(parents=True, exist_ok=True)
        proc = await asyncio.create_subprocess_exec(
            self._cp, "-a", "--reflink=auto", "--no-target-directory", str(src), str(dest),
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        _, err = await proc.communicate()
        if proc.returncode != 0:
            raise EnvError(f"copying {src} failed: {err.decode(errors='replace').strip()}")
        if uid is not None and self._is_root:
            await asyncio.to_thread(_chown_tree, dest, uid)

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
        for state in TOOLCHAIN_STATE:  # toolchains whose /usr files point outside /usr
            if os.path.isdir(state):
                argv += ["--ro-bind", state, state]
        for host, inside in spec.ro_binds.items():
            argv += ["--ro-bind", host, inside]
        for host, inside in spec.rw_binds.items():
            argv += ["--bind", host, inside]
        env = {"PATH": PATH, "HOME": WORKSPACE, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "dumb",
               "USER": "agent", "TZ": "UTC", "TMPDIR": "/tmp", **spec.env}
        argv.append("--clearenv")
        for k, v in env.items():
            argv += ["--setenv", k, v]
        argv += ["--chdir", spec.workdir]
        return argv

    async def _spawn(self, argv: list[str], uid: int, limits: SandboxLimits, pass_fds: Sequence[int] = (),
                     stdin: int = asyncio.subprocess.PIPE) -> asyncio.subprocess.Process:
        try:
            return await asyncio.create_subprocess_exec(
                *argv, stdin=stdin, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
                preexec_fn=_limits_preexec(limits, uid if self._is_root else None), pass_fds=tuple(pass_fds),
                start_new_session=True)
        except OSError as e:
            raise EnvError(f"cannot start bubblewrap: {e}") from e

    async def start(self, spec: SandboxSpec) -> LocalSandbox:
        self.check()
        uid = self._take_uid()
        root = self.root / f"sbx-{uuid.uuid4().hex[:16]}"
        try:
            root.mkdir(parents=True)
            workspace = root / "workspace"
            if spec.template is not None:
                await self.copy_tree(spec.template, workspace, uid)
            else:
                workspace.mkdir()
                if self._is_root:
                    os.chown(workspace, uid, uid)
            info_r, info_w = os.pipe()
            try:
                proc = await self._spawn([*self._argv(spec, workspace), "--info-fd", str(info_w), "--", *SHELL],
                                         uid, spec.limits, pass_fds=(info_w,))
            finally:
                os.close(info_w)
        except BaseException:
            self.release(uid)
            shutil.rmtree(root, ignore_errors=True)
            raise
        sandbox = LocalSandbox(self, proc, root, uid, spec.limits)
        sandbox.watch_info(info_r)
        return sandbox

    async def run_once(self, spec: SandboxSpec, argv: Sequence[str], *, timeout_s: float,
                       pass_fds: Sequence[int] = (), max_output: int = 64_000) -> ExecResult:
        self.check()
        if spec.template is None:
            raise ValueError("run_once needs spec.template (the state to show)")
        uid = self._take_uid()
        try:
            if self._is_root:
                await asyncio.to_thread(_chown_tree, spec.template, uid)
            started = time.monotonic()
            proc = await self._spawn([*self._argv(spec, spec.template), "--", *argv], uid, spec.limits,
                                     pass_fds=pass_fds, stdin=asyncio.subprocess.DEVNULL)
            clip = _Clip(max_output)
            timed_out = False

            async def pump() -> None:
                assert proc.stdout
                while chunk := await proc.stdout.read(65536):
                    clip.add(chunk)

            try:
                await asyncio.wait_for(asyncio.gather(pump(), proc.wait()), timeout=timeout_s)
            except TimeoutError:
                timed_out = True
                _signal_all([proc.pid, *_descendants(proc.pid)], signal.SIGKILL)
                await proc.wait()
            return ExecResult(exit_code=None if timed_out else proc.returncode, output=clip.text(),
                              timed_out=timed_out, truncated=clip.truncated,
                              elapsed_s=time.monotonic() - started)
        finally:
            self.release(uid)


def _chown_tree(root: Path, uid: int) -> None:
    os.chown(root, uid, uid, follow_symlinks=False)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            os.chown(os.path.join(dirpath, name), uid, uid, follow_symlinks=False)
