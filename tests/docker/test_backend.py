"""The Docker sandbox backend against a real engine: contract, isolation and classified faults."""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path

import pytest

from envhub.errors import AgentError, EnvError, SandboxGone, SandboxOOM, Unavailable
from envhub.sandbox.base import SandboxLimits, SandboxSpec
from envhub.sandbox.docker import DockerBackend, DockerSettings
from tests.conftest import running_hub
from tests.docker.conftest import IMAGE, docker


async def test_shell_persists_and_workspace_is_a_copy(backend: DockerBackend, template: Path) -> None:
    sb = await backend.start(SandboxSpec(template=template))
    try:
        r = await sb.run("cd sub && export X=42 && ./run.sh && id -u", timeout_s=20)
        assert r.exit_code == 0 and r.output.split() == ["ran", "1000"], r
        r = await sb.run("pwd; echo $X; echo new > /workspace/made.txt", timeout_s=20)
        assert r.output.split() == ["/workspace/sub", "42"], r
        assert not (template / "made.txt").exists(), "the template itself was written"
        out = backend.root.parent / "export"
        await sb.export(out)
        assert (out / "made.txt").read_text() == "new\n"
        assert (out / "sub" / "run.sh").stat().st_mode & 0o777 == 0o750, "modes not kept"
    finally:
        await sb.close()


async def test_no_network_and_limits(backend: DockerBackend) -> None:
    sb = await backend.start(SandboxSpec(limits=SandboxLimits(processes=64, memory_mb=256)))
    try:
        r = await sb.run("ls /sys/class/net; cat /sys/fs/cgroup/pids/pids.max 2>/dev/null "
                         "|| cat /sys/fs/cgroup/pids.max", timeout_s=20)
        assert r.output.split() == ["lo", "64"], r
        r = await sb.run("python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=2)\"",
                         timeout_s=20)
        assert r.exit_code != 0 and "Network is unreachable" in r.output, r
    finally:
        await sb.close()


async def test_deadline_kills_the_command_not_the_shell(backend: DockerBackend) -> None:
    sb = await backend.start(SandboxSpec())
    try:
        await sb.run("sleep 300 &", timeout_s=10)  # a background job from before survives
        started = time.monotonic()
        r = await sb.run("setsid sleep 300 & sleep 300", timeout_s=1.5)
        assert r.timed_out and r.exit_code is None and time.monotonic() - started < 10
        r = await sb.run("pgrep -c -u 1000 sleep", timeout_s=10)
        # (bash may first report the killed job) only the earlier background sleep is left
        assert r.output.strip().splitlines()[-1] == "1", r
    finally:
        await sb.close()


async def test_reset_takes_a_warm_container(backend: DockerBackend, template: Path) -> None:
    """A reset takes an already running container from the pool instead of starting one (how much
    that saves is measured by benchmarks/sandbox_reset.py, not asserted here)."""
    await backend.warm(SandboxLimits())
    warm = {box.cid for boxes in backend.pool.boxes.values() for box in boxes}
    assert warm, "warm() started no containers"
    sb = await backend.start(SandboxSpec(template=template))
    try:
        assert sb.container_id in warm
        assert (await sb.run("cat notes.txt", timeout_s=10)).output == "hello\n"
    finally:
        await sb.close()


async def test_memory_limit_is_the_agents_fault_not_a_hang(backend: DockerBackend) -> None:
    sb = await backend.start(SandboxSpec(limits=SandboxLimits(memory_mb=128)))
    try:
        started = time.monotonic()
        with pytest.raises(SandboxOOM) as err:
            await sb.run("python3 -c 'b = bytearray(1 << 30); print(len(b))'", timeout_s=60)
        assert isinstance(err.value, AgentError) and "128 MiB" in err.value.detail
        assert time.monotonic() - started < 30
        assert (await sb.run("echo still here", timeout_s=10)).output == "still here\n"
    finally:
        await sb.close()


async def test_agent_ending_its_shell_is_agent_error(backend: DockerBackend) -> None:
    sb = await backend.start(SandboxSpec())
    try:
        with pytest.raises(SandboxGone):
            await sb.run("kill -9 $$", timeout_s=10)
    finally:
        await sb.close()


async def test_container_killed_from_outside_is_env_error(backend: DockerBackend) -> None:
    sb = await backend.start(SandboxSpec())
    try:
        await sb.run("true", timeout_s=10)
        docker("kill", sb.container_id)
        with pytest.raises(EnvError) as err:
            await sb.run("echo hi", timeout_s=10)
        assert not isinstance(err.value, AgentError)
        assert not await sb.is_alive()
    finally:
        await sb.close()


async def test_verifier_result_travels_out_of_band(backend: DockerBackend, tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "answer.txt").write_text("42\n")
    script = ("echo FORGED-ON-STDOUT; test -w /workspace/answer.txt && echo WRITABLE; "
              "ls /run/envhub-result 2>&1 | head -1; printf '{\"ok\": true}' >&$ENVHUB_RESULT_FD")
    res = await backend.run_once(SandboxSpec(template=state, read_only_workspace=True), ["bash", "-c", script],
                                 timeout_s=60, result=True)
    assert res.exit_code == 0, res
    assert res.result == b'{"ok": true}', res.result
    assert "WRITABLE" not in res.output and "Permission denied" in res.output, res.output


async def test_verifier_timeout(backend: DockerBackend, tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    res = await backend.run_once(SandboxSpec(template=state, read_only_workspace=True), ["sleep", "300"],
                                 timeout_s=2)
    assert res.timed_out and res.exit_code is None


async def test_unreachable_engine_is_unavailable(tmp_path: Path) -> None:
    dead = tmp_path / "engine.sock"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(dead))  # bound, never listening: connections are refused, as from a stopped engine
    try:
        b = DockerBackend(None, root=tmp_path / "sbx", docker=DockerSettings(image=IMAGE, socket=str(dead), pool=0))
        with pytest.raises(Unavailable) as err:
            await b.start(SandboxSpec())
        assert err.value.failure_class.retryable
        await b.aclose()
    finally:
        s.close()


class _VanishingMountBackend(DockerBackend):
    """Its workspace folder disappears between create and start (as when a disk cleaner races the
    server): the real engine then refuses to start the container."""

    async def _create(self, cmd, limits, binds, **kw):
        cid = await super()._create(cmd, limits, binds, **kw)
        for host, _, _ in binds:
            Path(host).rmdir()
        return cid


async def test_engine_refusing_to_start_is_unavailable(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    b = _VanishingMountBackend(None, root=tmp_path / "sbx", docker=DockerSettings(image=IMAGE, pool=0))
    try:
        with pytest.raises(Unavailable) as err:
            await b.start(SandboxSpec())
        assert err.value.failure_class.retryable and err.value.retry_after_s > 0
        assert "refused to start" in err.value.detail
        left = docker("ps", "-aq", "--filter", f"label=envhub.sandbox.owner={b.owner}").stdout.split()
        assert left == [], "a refused container was left behind"
    finally:
        await b.aclose()


async def test_closing_removes_the_container(backend: DockerBackend) -> None:
    sb = await backend.start(SandboxSpec())
    cid = sb.container_id
    await sb.close()
    await sb.close()  # idempotent
    await asyncio.sleep(0)
    assert docker("inspect", cid, check=False).returncode != 0


async def test_a_sandbox_at_its_pids_limit_is_cleared_and_the_shell_survives(backend: DockerBackend) -> None:
    """A runaway holds every pid the container may have (threads count); the next command that needs
    a fork must still run: the runaway is killed around the shell instead of the shell being lost."""
    fill = ("python3 -c 'import threading, time\ntry:\n    while True: threading.Thread(target=time.sleep, "
            "args=(600,), daemon=True).start()\nexcept RuntimeError: time.sleep(600)' >/dev/null 2>&1 &")
    sb = await backend.start(SandboxSpec(limits=SandboxLimits(processes=64)))
    try:
        await sb.run(fill, timeout_s=10)
        await asyncio.sleep(1)  # the filler reaches the limit
        after = await sb.run("/bin/echo still-here", timeout_s=20)  # /bin/echo is no builtin: it needs a fork
        assert not after.timed_out and "still-here" in after.output.split(), after
        assert "process limit" in after.output
    finally:
        await sb.close()


async def test_a_shell_the_agent_wedged_is_agent_timeout_through_the_manager() -> None:
    """The deadline ladder holds on this backend too: its shell grace ends before the manager's."""
    from tests.conftest import make_settings
    from tests.server.test_sessions import wedge_a_shell

    async with running_hub(make_settings(families=["terminal"], sandbox="docker")) as hub:
        await wedge_a_shell(hub)


async def test_files_inside_show_as_owned_by_agent(backend: DockerBackend, template: Path) -> None:
    """The image names uid 1000 `agent` (Dockerfile's `useradd`), as the local backend does (issue 17 item 10)."""
    sb = await backend.start(SandboxSpec(template=template))
    try:
        r = await sb.run("whoami; stat -c '%U:%G' sub/run.sh; touch new && stat -c '%U' new", timeout_s=20)
        assert r.exit_code == 0 and r.output.split() == ["agent", "agent:agent", "agent"], r
    finally:
        await sb.close()


async def test_a_tasks_cpus_bound_the_container(backend: DockerBackend, template: Path) -> None:
    """`SandboxLimits.cpus` becomes the container's CFS quota, which the agent reads inside (and
    cannot raise: the cgroup files are read-only to it)."""
    sb = await backend.start(SandboxSpec(template=template, limits=SandboxLimits(cpus=0.5)))
    try:
        res = await sb.run("cat /sys/fs/cgroup/cpu.max 2>/dev/null || "
                           "echo $(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu/cpu.cfs_period_us)",
                           timeout_s=10)
        quota, period = res.output.split()[:2]
        assert int(quota) / int(period) == 0.5, res.output
    finally:
        await sb.close()
