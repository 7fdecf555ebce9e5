"""The warm verifier (a zygote forking per verify): the cold runner's verdicts and isolation."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from envhub.core.hub import Hub
from envhub.errors import FailureClass
from envhub.verify.runner import VerifierRunner
from tests.conftest import make_settings
from tests.verify.test_runner import PASSING, make_task, state

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the local backend's sandbox uids need root")


@pytest.fixture
async def runners() -> AsyncIterator[tuple[VerifierRunner, VerifierRunner]]:
    """A cold and a warm runner over one hub's local backend."""
    hub = Hub.build(make_settings(families=["echo"]))
    await hub.start()
    cold = VerifierRunner(hub.settings, hub.backend, warm=False)
    warm = VerifierRunner(hub.settings, hub.backend, warm=True)
    try:
        yield cold, warm
    finally:
        await warm.aclose()
        await hub.stop()


async def judge(runner: VerifierRunner, tmp_path: Path, body: str, files: dict[str, str], *, timeout: int = 30,
                wait_warm: bool = True):
    task = make_task(tmp_path / f"t{os.urandom(4).hex()}", body, verify_timeout=timeout)
    if wait_warm:
        await runner.warmed()  # a zygote ready (cold runners: nothing)
    folder = tmp_path / "states" / os.urandom(4).hex()
    folder.mkdir(parents=True)
    return await runner.verify(task, state(folder, files), [{"step": 1, "tool": "noop"}])


def key(result):
    return (result.failure_class, result.reward, result.passed,
            [(c.id, c.kind, c.passed, c.score) for c in result.checks])


CASES = [  # (test body, state files): passing, failing, crashing, env fault, no network, read-only state
    (PASSING, {"ok.txt": "ok"}),
    (PASSING, {"ok.txt": "no"}),
    ("import this_module_does_not_exist\n\ndef test_x():\n    pass\n", {}),
    ("from verifiers import EnvFault\n\ndef test_x():\n    raise EnvFault('db gone')\n", {}),
    ("import socket\nfrom verifiers import STATE, check\n\n@check('net', kind='soft')\ndef test_net():\n"
     "    s = socket.socket()\n    s.settimeout(2)\n    s.connect(('1.1.1.1', 80))\n\n"
     "@check('ro', kind='soft')\ndef test_ro():\n    (STATE / 'x').write_text('x')\n\n"
     "@check('sub', kind='soft')\ndef test_sub(request):\n    request.node.user_properties.append(('score', 0.25))\n"
     "    assert False\n", {"a/b.txt": "b"}),
    ("import json\nfrom verifiers import TRAJECTORY, TASK\n\ndef test_views():\n"
     "    assert json.loads(TRAJECTORY.read_text().splitlines()[0])['tool'] == 'noop'\n"
     "    assert (TASK / 'task.yaml').is_file() and (TASK / 'tests' / 'test_probe.py').is_file()\n", {}),
]


@pytest.mark.parametrize("body,files", CASES)
async def test_warm_and_cold_give_the_same_verdict(runners, tmp_path, body, files):
    cold, warm = runners
    c = await judge(cold, tmp_path, body, files)
    w = await judge(warm, tmp_path, body, files)
    assert c.timings.get("verify_warm", 0.0) == 0.0 and w.timings["verify_warm"] == 1.0, (c.detail, w.timings)
    assert key(w) == key(c)


PROBE = """
import os, resource, socket
from pathlib import Path
from verifiers import STATE

def status(field):
    return next(l.split()[1] for l in open('/proc/self/status') if l.startswith(field + ':'))

def test_identity_and_privileges():
    assert (os.getuid(), os.getgid()) == (1000, 1000)
    assert socket.gethostname() == 'sandbox'
    assert int(status('CapEff'), 16) == 0 and int(status('CapPrm'), 16) == 0 and int(status('CapAmb'), 16) == 0
    assert status('NoNewPrivs') == '1'

def test_limits():
    assert resource.getrlimit(resource.RLIMIT_AS)[0] == 2048 * 1024 * 1024
    assert resource.getrlimit(resource.RLIMIT_NPROC) == (256, 256)
    assert resource.getrlimit(resource.RLIMIT_CPU)[1] == 35
    assert resource.getrlimit(resource.RLIMIT_CORE) == (0, 0)

def test_own_pid_namespace():
    pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())
    assert pids[0] == 1 and len(pids) <= 3, pids

def test_views_read_only_and_spool_hidden():
    for p in ('/workspace/x', '/verify/tests/x', '/verify/task/x', '/verify/lib/x', '/usr/x',
              '/proc/sys/net/ipv4/ip_forward', '/proc/sys/kernel/hostname', '/proc/sysrq-trigger'):
        try:
            open(p, 'w').close()
        except OSError:
            continue
        raise AssertionError(p + ' is writable')
    assert os.listdir('/verify/spool') == [] and not os.path.exists('/verify/.dev/null')
    assert sorted(os.listdir('/verify/tests')) == ['test_probe.py']

def test_no_socket_to_the_zygote():
    for fd in os.listdir('/proc/self/fd'):
        target = os.readlink('/proc/self/fd/' + fd) if os.path.exists('/proc/self/fd/' + fd) else ''
        assert not target.startswith('socket:'), target

def test_nothing_from_an_earlier_verify():
    import verifiers
    assert not hasattr(verifiers, 'LEAKED')
    for p in ('/tmp/left', '/dev/shm/left', '/dev/left'):
        assert not os.path.exists(p), p
    procs = [open(f'/proc/{p}/cmdline', 'rb').read() for p in os.listdir('/proc') if p.isdigit()]
    assert not any(b'sleep' in c for c in procs), procs

def test_leave_things_behind():
    import subprocess, verifiers
    verifiers.LEAKED = True
    for p in ('/tmp/left', '/dev/shm/left', '/dev/left'):
        try:
            open(p, 'w').write('x')
        except OSError:
            pass
    subprocess.Popen(['sleep', '1000'], start_new_session=True)
"""


async def test_a_warm_verify_keeps_the_cold_runners_isolation(runners, tmp_path):
    _, warm = runners
    for _ in range(2):  # the second verify must see nothing the first left
        result = await judge(warm, tmp_path, PROBE, {"f.txt": "x"})
        assert result.timings["verify_warm"] == 1.0
        failed = {c.id: c.message for c in result.checks if not c.passed}
        assert result.failure_class is FailureClass.ok and not failed, (failed, result.detail)


async def test_the_same_probe_passes_cold(runners, tmp_path):
    """The probe describes today's runner: it must hold on the cold path too (or the warm one is not the same)."""
    cold, _ = runners
    body = PROBE.replace("assert pids[0] == 1 and len(pids) <= 3", "assert len(pids) <= 4")  # bwrap's own init
    body = body.replace("assert os.listdir('/verify/spool') == [] and not os.path.exists('/verify/.dev/null')", "")
    result = await judge(cold, tmp_path, body, {"f.txt": "x"})
    failed = {c.id: c.message for c in result.checks if not c.passed}
    assert result.failure_class is FailureClass.ok and not failed, (failed, result.detail)


async def test_a_backend_that_hosts_no_services_verifies_cold_with_the_same_verdicts(runners, tmp_path,
                                                                                  monkeypatch):
    """The warm path is asked of the backend through the interface (`no_services`), not by its class."""
    cold, _ = runners
    monkeypatch.setattr(cold.backend, "no_services", "not here")
    runner = VerifierRunner(cold.settings, cold.backend, warm=True)
    try:
        assert not await runner.warmed() and runner.warm is None
        for files, reward in (({"ok.txt": "ok"}, 1.0), ({"ok.txt": "no"}, 0.0)):
            result = await judge(runner, tmp_path, PASSING, files)
            assert (result.failure_class, result.reward) == (FailureClass.ok, reward)
            assert result.timings["verify_warm"] == 0.0
    finally:
        await runner.aclose()


async def test_a_verify_never_waits_for_a_zygote_to_start(runners, tmp_path):
    _, warm = runners
    first = await judge(warm, tmp_path, PASSING, {"ok.txt": "ok"}, wait_warm=False)
    assert (first.reward, first.timings["verify_warm"]) == (1.0, 0.0)  # cold, and one starts meanwhile
    assert warm.warm is not None and warm.warm.count == 1
    assert await warm.warmed()
    second = await judge(warm, tmp_path, PASSING, {"ok.txt": "ok"}, wait_warm=False)
    assert (second.reward, second.timings["verify_warm"]) == (1.0, 1.0)


async def test_a_timeout_ends_the_zygote_and_the_next_verify_is_warm_again(runners, tmp_path):
    _, warm = runners
    slow = await judge(warm, tmp_path, "import time\n\ndef test_slow():\n    time.sleep(60)\n", {}, timeout=2)
    assert slow.failure_class is FailureClass.verifier_error and "timed out" in slow.detail
    again = await judge(warm, tmp_path, PASSING, {"ok.txt": "ok"})
    assert (again.reward, again.timings["verify_warm"]) == (1.0, 1.0)


async def test_a_cancelled_verify_never_returns_its_zygote_to_the_pool(runners, tmp_path):
    _, warm = runners
    slow = asyncio.create_task(judge(warm, tmp_path, "import time\n\ndef test_slow():\n    time.sleep(60)\n", {}))
    spools = Path(warm.settings.data_dir) / "verifier" / "warm"
    while not list(spools.glob("spool-*/verify-*/state")):  # the verify is in its zygote
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)
    slow.cancel()
    with pytest.raises(asyncio.CancelledError):
        await slow
    assert warm.warm.idle == [] and warm.warm.count == 0
    again = await judge(warm, tmp_path, PASSING, {"ok.txt": "ok"})
    assert (again.reward, again.timings["verify_warm"]) == (1.0, 1.0)


async def test_a_dead_zygote_falls_back_to_the_cold_path(runners, tmp_path):
    _, warm = runners
    first = await judge(warm, tmp_path, PASSING, {"ok.txt": "ok"})
    assert first.timings["verify_warm"] == 1.0
    assert warm.warm is not None and warm.warm.idle
    zygote = warm.warm.idle[0]
    # Killed between verifies: the pool starts a new one.
    os.kill(zygote.service.proc.pid, signal.SIGKILL)
    await zygote.service.proc.wait()
    second = await judge(warm, tmp_path, PASSING, {"ok.txt": "ok"})
    assert (second.reward, second.timings["verify_warm"]) == (1.0, 1.0)
    # Unable to start any: cold, same verdict.
    await warm.aclose()
    warm.warm.disabled = True
    third = await judge(warm, tmp_path, PASSING, {"ok.txt": "no"})
    assert (third.failure_class, third.reward, third.timings["verify_warm"]) == (FailureClass.ok, 0.0, 0.0)


def _children(pid: int) -> list[int]:
    return [int(c) for t in os.listdir(f"/proc/{pid}/task")
            for c in Path(f"/proc/{pid}/task/{t}/children").read_text().split()]


async def test_a_standby_lost_before_its_request_is_judged_cold_and_the_next_is_warm(runners, tmp_path):
    """The zygote makes the next verify's processes ahead of its request; when they are gone by then
    (killed, or their set-up failed), that verify is judged cold, and the zygote makes new ones."""
    _, warm = runners
    first = await judge(warm, tmp_path, PASSING, {"ok.txt": "ok"})
    assert first.timings["verify_warm"] == 1.0
    assert warm.warm is not None and warm.warm.idle
    zygote = warm.warm.idle[0].service.proc.pid  # bubblewrap, then its children down to the zygote
    while Path(f"/proc/{zygote}/cmdline").read_bytes().split(b"\0")[0].endswith(b"bwrap"):
        zygote = _children(zygote)[0]
    for _ in range(1000):  # the standby is forked after the answer: on a loaded machine it may come later
        if _children(zygote):
            break
        await asyncio.sleep(0.01)
    [middle] = _children(zygote)  # the standby's first process (its init and verifier process below it)
    os.kill(middle, signal.SIGKILL)
    stat = Path(f"/proc/{middle}/stat")
    while stat.exists() and stat.read_text().split(")")[1].split()[0] != "Z":  # until dead
        await asyncio.sleep(0.01)
    second = await judge(warm, tmp_path, PASSING, {"ok.txt": "ok"})
    assert (second.reward, second.timings["verify_warm"]) == (1.0, 0.0), second.detail
    third = await judge(warm, tmp_path, PASSING, {"ok.txt": "ok"})
    assert (third.reward, third.timings["verify_warm"]) == (1.0, 1.0), third.detail
