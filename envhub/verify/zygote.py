"""The warm verifier's zygote: one Python with pytest and `verifiers` imported, forking per verify.

It runs inside a bubblewrap sandbox of its own (`envhub.verify.warm` starts it) with the same
read-only /usr, /etc, /verify/lib and /verify/site as a cold verifier, its own host uid, and
CAP_SYS_ADMIN + CAP_NET_ADMIN in that sandbox's user namespace only. Those caps are what let a
verify enter fresh namespaces and mount its own view; they are dropped before any judged code runs.

The processes of the next verify are made before its request arrives (a standby), so that a verify
waits for none of the forks, nor for the copies a fork's child makes of the pages it writes:

    middle   unshares mount, pid, net, ipc and uts namespaces; a fresh /dev; loopback up; hostname
             `sandbox`; then waits for the request. On it: binds this verify's state, tests, task and
             trajectory read-only at the cold runner's paths, a fresh /tmp and /dev/shm, hides the
             spool that holds the per-verify folders, and only then hands the request on
    init     pid 1 of the new pid namespace: mounts its /proc, drops every capability, sets
             no_new_privs; reaps orphans until the verifier process ends
    pytest   copies the pages it inherited while it waits (`_prefault`). On the request: the rlimits,
             stdout/stderr to the output pipe, the result pipe at fd 3, every other descriptor closed;
             runs pytest in-process on the configuration the zygote parsed once (plugins registered,
             arguments read; `pytest_configure` and everything after it run in the child)

A standby is never reused and the zygote itself never runs a test, so no module state survives one
verify into the next; no judged code runs before its own verify's mounts are in place. The exit
status goes back on the control socket; the result never does (it travels in the pipe the server
passed, as on the cold path). Standard library and pytest only.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import resource
import socket
import struct
import sys
import traceback
from typing import Any

_LIBC = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWNET = (
    0x00020000, 0x04000000, 0x08000000, 0x20000000, 0x40000000)
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = (
    1, 2, 4, 8, 32, 4096, 0x4000, 1 << 18)
PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 38, 47, 4
MADV_POPULATE_WRITE = 23  # Linux 5.14+: fault a range in for writing now (copies inherited pages)
SPOOL = "/verify/spool"  # this zygote's per-verify folders, hidden from every verify
HOST_DEV = "/verify/.dev"  # device nodes to bind into each verify's fresh /dev, then hidden
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
RESULT_FD = 3
STARTUP_ENV = dict(os.environ)  # what bubblewrap set, as for a cold verifier
#: What most verifies import: the test framework, the verifier library and its document parsers.
PRELOAD = ("pytest", "_pytest.python", "_pytest.fixtures", "sqlite3", "yaml", "lxml.etree", "openpyxl", "docx", "pptx",
           "pypdf", "verifiers", "verifiers.db_state", "verifiers.fs_state", "verifiers.office", "verifiers.swe")


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(src: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def enc(s: str | None) -> bytes | None:
        return None if s is None else s.encode()

    _check(_LIBC.mount(enc(src), target.encode(), enc(fstype), flags, enc(data)), f"mount {target}")


def _bind_ro(src: str, target: str) -> None:
    _mount(src, target, None, MS_BIND | MS_REC)
    _mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def _fresh_dev() -> None:
    """A tmpfs /dev per verify (files written there die with it) with the usual nodes bound in; its
    /dev/shm is mounted with the verify's size when the request comes (`_mount_request`)."""
    _mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755")
    for name in DEVICES:
        open(f"/dev/{name}", "w").close()
        _mount(f"{HOST_DEV}/{name}", f"/dev/{name}", None, MS_BIND)
    os.mkdir("/dev/pts")
    _mount(f"{HOST_DEV}/pts", "/dev/pts", None, MS_BIND)
    os.symlink("pts/ptmx", "/dev/ptmx")
    for i, name in enumerate(("stdin", "stdout", "stderr")):
        os.symlink(f"/proc/self/fd/{i}", f"/dev/{name}")
    os.symlink("/proc/self/fd", "/dev/fd")
    os.mkdir("/dev/shm")


def _loopback_up() -> None:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        ifr = fcntl.ioctl(s, 0x8913, struct.pack("16sh", b"lo", 0))  # SIOCGIFFLAGS
        flags = struct.unpack("16sh", ifr[:18])[1]
        fcntl.ioctl(s, 0x8914, struct.pack("16sh", b"lo", flags | 0x1 | 0x40))  # SIOCSIFFLAGS: UP|RUNNING
    finally:
        s.close()


def _drop_privileges() -> None:
    """Every capability gone (ambient, effective, permitted, inheritable), and no way back."""
    _check(_LIBC.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clear ambient caps")

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    _check(_LIBC.capset(ctypes.byref(Header(0x20080522, 0)), (Data * 2)()), "capset")
    _check(_LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


def _limits(lim: dict) -> None:
    mb = 1024 * 1024
    space = resource.RLIM_INFINITY if lim["memory_mb"] is None else lim["memory_mb"] * mb
    for which, value in ((resource.RLIMIT_CPU, lim["cpu_s"]), (resource.RLIMIT_AS, space),
                         (resource.RLIMIT_NPROC, lim["processes"]), (resource.RLIMIT_FSIZE, lim["file_mb"] * mb),
                         (resource.RLIMIT_NOFILE, lim["open_files"]), (resource.RLIMIT_CORE, 0)):
        resource.setrlimit(which, (value, value))


def _middle(link: socket.socket) -> int:
    """A standby's namespaces; on the request on `link`, this verify's mounts, then the go to the
    verifier process. Returns the verifier's exit status."""
    _check(_LIBC.unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS), "unshare")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _fresh_dev()
    _check(_LIBC.sethostname(b"sandbox", 7), "sethostname")
    _loopback_up()
    pid, go = _fork_linked(_init, 72, link)
    msg, fds, _, _ = socket.recv_fds(link, 1 << 20, 2)
    if not msg:  # discarded unused (the zygote ends): the kernel ends init's namespace with us
        return 0
    try:
        try:
            _mount_request(json.loads(msg))
        except BaseException:  # said in the verify's output (the server logs it), then status 71
            with contextlib.suppress(OSError, IndexError):
                os.write(fds[1], f"envhub warm verifier (mounts): {traceback.format_exc()}".encode())
            raise
        socket.send_fds(go, [msg], fds)
    finally:
        for fd in fds:
            os.close(fd)
        go.close()
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _mount_request(req: dict) -> None:
    """This verify's view: its folders read-only at the cold runner's paths, a fresh /tmp and
    /dev/shm of its size, and the spool and host devices hidden."""
    name = req["dir"]
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"bad verify folder {name!r}")
    here = f"{SPOOL}/{name}"
    _bind_ro(f"{here}/state", "/workspace")
    _bind_ro(f"{here}/task", "/verify/task")
    _bind_ro(f"{here}/task/tests", "/verify/tests")
    _bind_ro(f"{here}/trajectory.jsonl", "/verify/trajectory.jsonl")
    size = req["limits"]["file_mb"] * 1024 * 1024
    _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"size={size}")
    _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={size}")
    for hidden in (SPOOL, HOST_DEV):  # an empty read-only tmpfs over what no verify may see
        _mount("tmpfs", hidden, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=0")


def _init(go: socket.socket) -> int:
    """pid 1 of the verify's pid namespace: when it returns, the kernel kills everything left."""
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    _drop_privileges()
    pid = os.fork()
    if pid == 0:
        _child(_standby, go, failed=72)
    go.close()
    while True:
        try:
            done, status = os.wait()
        except ChildProcessError:
            return 70
        if done == pid:
            code = os.waitstatus_to_exitcode(status)
            return code if code >= 0 else 128 - code


def _prefault() -> None:
    """Copy now the inherited pages this process will write: each first write to a page shared
    with the zygote is a fault and a copy, about 4,000 of them per verify, which cost a verify
    several milliseconds when they came during its collection. Only mappings mostly resident
    (what the zygote used), so reserved but untouched ranges stay unallocated."""
    try:
        _populate_resident()
    except Exception:  # noqa: BLE001 - only the gain is lost: the pages are copied on first write
        pass


def _populate_resident() -> None:
    madvise = _LIBC.madvise
    madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    span = None
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            first = line.split(maxsplit=5)
            if "-" in first[0] and len(first) >= 5:  # a mapping's header line
                perms, name = first[1], first[5].strip() if len(first) > 5 else ""
                writable = perms.startswith("rw") and perms[3] == "p"
                anon = not name or name == "[heap]"
                start, end = (int(x, 16) for x in first[0].split("-"))
                span = (start, end) if writable and anon else None
            elif span is not None and first[0] == "Rss:":
                start, end = span
                if int(first[1]) * 1024 * 2 >= end - start:
                    madvise(start, end - start, MADV_POPULATE_WRITE)  # a refusal only loses the gain
                span = None


def _standby(go: socket.socket) -> int:
    """The verifier process: ready before its request, it runs nothing judged until the middle
    has mounted that verify's view and handed the request on."""
    _prefault()
    msg, fds, _, _ = socket.recv_fds(go, 1 << 20, 2)
    if not msg:  # discarded unused
        return 0
    go.close()
    req = json.loads(msg)
    _limits(req["limits"])
    try:  # from here on a failure is the verify's (status 70), not the set-up's (72)
        return _pytest(req, *fds)
    except BaseException:  # noqa: BLE001 - the status and the output say what broke
        _report("pytest")
        return 70


def _pytest(req: dict, result_fd: int, out_fd: int) -> int:
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    os.dup2(result_fd, RESULT_FD)
    os.closerange(RESULT_FD + 1, 1 << 16)
    os.environ.clear()
    os.environ.update(STARTUP_ENV, **req["env"], ENVHUB_RESULT_FD=str(RESULT_FD))
    os.chdir(req["workdir"])
    import pytest

    sys.argv = ["pytest", *req["args"]]
    if _prepared is None or req["args"] != _prepared[0]:
        return int(pytest.main(req["args"]))
    # What pytest.main does after building the configuration, which the zygote built already.
    config = _prepared[1]
    os.environ["PYTEST_VERSION"] = pytest.__version__
    capture = config.pluginmanager.getplugin("capturemanager")
    if capture is not None:  # as _prepareconfig leaves it: started, suspended (its files are this child's)
        capture.start_global_capturing()
        capture.suspend_global_capture()
    try:
        return int(config.hook.pytest_cmdline_main(config=config))
    except pytest.UsageError as e:
        sys.stderr.write(f"ERROR: {e}\n")
        return int(pytest.ExitCode.USAGE_ERROR)
    finally:
        config._ensure_unconfigure()


def _prepare(args: list[str]):
    """pytest's configuration for `args`, built once (plugins registered, options parsed): a third
    of a verify's pytest time. Only what precedes `pytest_configure` happens here; the capture
    it starts is stopped so that no file it opened is shared with the children. None if pytest
    refuses (each verify then runs `pytest.main`)."""
    from _pytest.config import _prepareconfig

    try:
        config = _prepareconfig(list(args))
    except Exception:  # noqa: BLE001 - the plain path still works
        traceback.print_exc()
        return None
    capture = config.pluginmanager.getplugin("capturemanager")
    if capture is not None:
        capture.stop_global_capturing()
    return (list(args), config)


def _child(body, arg: Any, failed: int = 70) -> None:
    """Run `body(arg)` in this forked process and exit with its status, or `failed` if it raised
    (71 and 72: the namespaces or the privileges could not be set up; the server judges cold).
    What broke goes to the verify's output pipe once it has one, the zygote's stderr before."""
    code = failed
    try:
        code = body(arg)
    except BaseException:  # noqa: BLE001 - the status and the output say what broke
        _report(body.__name__)
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)


def _report(where: str) -> None:
    """The exception being handled, to fd 2: the verify's output pipe once it has one. Before its
    request, fd 2 is the zygote's own output, which the server reads only while the zygote starts:
    once that pipe is full, a blocking write would hang the verify to its deadline, so the write
    never waits (the flag is shared with the zygote, which writes nothing while it serves)."""
    with contextlib.suppress(OSError):
        os.set_blocking(2, False)
        os.write(2, f"envhub warm verifier ({where}): {traceback.format_exc()}".encode())


_prepared: tuple[list[str], Any] | None = None


def serve(control: socket.socket, args: list[str]) -> None:
    global _prepared
    import gc
    import importlib

    from _pytest.config import default_plugins

    # Imported once here, inherited by every fork: pytest's own plugins too, or each verify
    # imports its 30 of them again.
    for name in (*PRELOAD, *(f"_pytest.{p}" for p in default_plugins)):
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    _prepared = _prepare(args)
    # Out of the collector's reach: pytest runs gc.collect() at exit, which would otherwise walk
    # (and, by touching every object, copy) the whole inherited heap in each child.
    gc.collect()
    gc.freeze()
    control.send(b'{"ready": true}')
    standby = _spawn(control)
    while True:
        msg, fds, _, _ = socket.recv_fds(control, 1 << 20, 2)
        if not msg:
            return  # the server went away
        pid, link = standby
        handed = False
        try:
            socket.send_fds(link, [msg], fds)
            handed = True
        except OSError:  # the standby is gone (it failed setting up, or was killed): judged cold
            pass
        finally:
            for fd in fds:
                os.close(fd)
            link.close()
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status) if handed else 71
        control.send(json.dumps({"exit_code": code}).encode())
        standby = _spawn(control)  # the next verify's processes, made while the server reads this one


def _spawn(control: socket.socket) -> tuple[int, socket.socket]:
    """Fork the next verify's middle (which forks its init and verifier process) and keep the link
    its request will travel on."""
    sys.stdout.flush()
    sys.stderr.flush()
    return _fork_linked(_middle, 71, control)


def _fork_linked(body, failed: int, unused: socket.socket) -> tuple[int, socket.socket]:
    """Fork a child that runs `body` on one end of a new socket pair (exiting with `failed` if it
    raises) and closes `unused`, a socket of ours it has no business with; we keep the other end."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:
        ours.close()
        unused.close()
        _child(body, theirs, failed=failed)
    theirs.close()
    return pid, ours


if __name__ == "__main__":
    serve(socket.socket(fileno=int(sys.argv[1])), json.loads(sys.argv[2]))
