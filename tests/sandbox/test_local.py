"""The bubblewrap backend, for real: isolation, limits, deadlines and fault classification."""

import asyncio
import os
import shutil
import signal
import tempfile
from pathlib import Path

import pytest

from envhub.config import get_settings
from envhub.errors import AgentError, EnvError, SandboxGone, SandboxUnavailable
from envhub.sandbox import local
from envhub.sandbox.base import SandboxLimits, SandboxSpec
from envhub.sandbox.local import LocalBackend
from envhub.sandbox.process import children, descendants


@pytest.fixture
async def sandbox(tmp_path):
    template = tmp_path / "template"
    template.mkdir()
    (template / "hello.txt").write_text("hi\n")
    backend = LocalBackend(get_settings().data_dir / "sandboxes")
    sb = await backend.start(SandboxSpec(template=template, limits=SandboxLimits(processes=64, memory_mb=512)))
    yield sb
    await sb.close()


async def test_shell_state_persists_between_commands(sandbox):
    await sandbox.run("mkdir -p sub && cd sub && export GREETING=hello", timeout_s=10)
    res = await sandbox.run('pwd; echo "$GREETING"; cat ../hello.txt', timeout_s=10)
    assert res.exit_code == 0
    assert res.output.split() == ["/workspace/sub", "hello", "hi"]


#: Without a CPU quota a sandbox starts through prlimit, setpriv and env (so Python spawns it by
#: vfork); with one, through a preexec function that joins its cgroup. Both must give the same.
EITHER_START = pytest.mark.parametrize("cpus", [None, 1.0], ids=["launcher", "preexec"])


@EITHER_START
async def test_a_sandbox_starts_with_no_signal_ignored_whatever_the_server_inherited(tmp_path, cpus):
    """A server started in the background (`&` in a script) ignores SIGINT and SIGQUIT, and an
    ignored signal survives exec: a sandbox must not inherit that."""
    backend = LocalBackend(get_settings().data_dir / "sandboxes")
    spec = SandboxSpec(template=None, limits=SandboxLimits(processes=64, memory_mb=512, cpus=cpus))
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP)}
    try:
        sb = await backend.start(spec)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    try:
        res = await sb.run("grep -E '^Sig(Ign|Blk):' /proc/self/status", timeout_s=10)
    finally:
        await sb.close()
    masks = dict(line.split(":") for line in res.output.split("\n") if line)
    ignored = int(masks["SigIgn"].strip(), 16)
    for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP):
        assert not ignored & (1 << (sig - 1)), (sig, res.output)
    assert int(masks["SigBlk"].strip(), 16) == 0, res.output


@EITHER_START
async def test_a_sandbox_has_its_specs_limits_and_its_own_host_uid_either_way_it_starts(cpus):
    backend = LocalBackend(get_settings().data_dir / "sandboxes")
    limits = SandboxLimits(cpu_s=123, memory_mb=600, processes=77, file_mb=9, open_files=321, cpus=cpus)
    sb = await backend.start(SandboxSpec(template=None, limits=limits))
    try:
        res = await sb.run("cat /proc/self/limits; echo pid=$$", timeout_s=10)
        shell = int(res.output.rsplit("pid=", 1)[1])
        host_pid = next(p for p in descendants(sb._proc.pid) if _ns_pid(p) == shell)
        host_uid = os.stat(f"/proc/{host_pid}").st_uid
    finally:
        await sb.close()
    rows = {line[:26].strip(): line[26:].split()[:2] for line in res.output.splitlines()[1:] if line[:26].strip()}
    assert rows["Max cpu time"] == ["123", "123"]
    assert rows["Max address space"] == [str(600 * 2**20)] * 2
    assert rows["Max processes"] == ["77", "77"]
    assert rows["Max file size"] == [str(9 * 2**20)] * 2
    assert rows["Max open files"] == ["321", "321"]
    assert rows["Max core file size"] == ["0", "0"]
    assert host_uid == (sb.uid if os.geteuid() == 0 else os.geteuid())


async def test_a_sandbox_closed_as_soon_as_it_starts_ends_without_waiting_out_the_grace(monkeypatch):
    """A fork closed at once: its sandbox's outer process may still be the launcher, with nothing
    under it yet. Close must end it, not wait for an exit that nothing would cause (it waited 2 s,
    then killed it)."""
    timeouts: list[float] = []
    real_wait_for = asyncio.wait_for

    async def wait_for(aw, timeout):
        try:
            return await real_wait_for(aw, timeout)
        except TimeoutError:
            timeouts.append(timeout)
            raise

    monkeypatch.setattr(local.asyncio, "wait_for", wait_for)
    backend = LocalBackend(get_settings().data_dir / "sandboxes")
    for _ in range(5):
        sb = await backend.start(SandboxSpec(template=None, limits=SandboxLimits(processes=64, memory_mb=512)))
        await sb.close()
        assert sb._proc.returncode is not None and not descendants(sb._proc.pid)
    assert 2 not in timeouts, timeouts


def _ns_pid(pid: int) -> int | None:
    """The pid a host process has in its innermost pid namespace."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("NSpid:"):
            return int(line.split()[-1])
    return None


async def test_exit_code_and_stderr_are_reported(sandbox):
    res = await sandbox.run("echo out; echo err >&2; exit_code() { return 3; }; exit_code", timeout_s=10)
    assert res.exit_code == 3 and "out" in res.output and "err" in res.output


async def test_a_command_that_never_ends_is_killed_and_the_shell_survives(sandbox):
    await sandbox.run("export KEEP=1", timeout_s=5)
    res = await sandbox.run("sleep 1000", timeout_s=1)
    assert res.timed_out and res.exit_code is None
    after = await sandbox.run('echo "alive $KEEP"', timeout_s=5)
    assert after.output.strip() == "alive 1"


async def test_a_background_service_survives_a_later_timeout(sandbox):
    await sandbox.run("(sleep 600 &) ; true", timeout_s=5)
    await sandbox.run("sleep 100", timeout_s=1)
    res = await sandbox.run("pgrep -c -x sleep", timeout_s=5)
    assert res.output.strip() == "1"


async def test_fork_bomb_stays_inside(sandbox, tmp_path):
    """The bomb is capped by the sandbox's own process limit; the agent pays for it, the host does not."""
    await sandbox.run("true", timeout_s=10)  # the sandbox is up: its pid namespace exists
    try:
        namespace = os.readlink(f"/proc/{children(sandbox._proc.pid)[0]}/ns/pid")
    except PermissionError:  # another uid's namespace: root reads it with CAP_SYS_PTRACE only
        pytest.skip("cannot read the sandbox's pid namespace: needs CAP_SYS_PTRACE, which root has on a "
                    "machine but not in a default Docker container (docker run --cap-add SYS_PTRACE)")
    try:
        await sandbox.run(":(){ :|:& };:", timeout_s=3)
        after = await sandbox.run("echo still-here", timeout_s=20)
        assert "still-here" in after.output  # the runaway was cleared
    except SandboxGone:
        pass  # or the bomb took the agent's own shell down: an agent_error, never an env_error
    await sandbox.close()
    leftover = [p for p in os.listdir("/proc") if p.isdigit() and _pid_ns(p) == namespace]
    assert leftover == []
    # Other sandboxes are unaffected.
    backend = LocalBackend(get_settings().data_dir / "sandboxes")
    other = await backend.start(SandboxSpec(template=None))
    try:
        assert (await other.run("echo fine", timeout_s=10)).output.strip() == "fine"
    finally:
        await other.close()


def _pid_ns(pid: str) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except (FileNotFoundError, PermissionError):
        return None


async def test_output_flood_is_clipped(sandbox):
    res = await sandbox.run("yes flood", timeout_s=3, max_output=10_000)
    assert res.truncated
    assert len(res.output) < 20_000


async def test_no_network(sandbox):
    res = await sandbox.run("getent hosts pypi.org || echo no-dns; "
                            "(exec 3<>/dev/tcp/1.1.1.1/80) 2>&1 || echo no-tcp", timeout_s=10)
    assert "no-tcp" in res.output


async def test_host_files_and_other_uids_are_out_of_reach(sandbox, tasks_root):
    res = await sandbox.run(f"ls {tasks_root} 2>&1; cat /etc/shadow 2>&1; id -u", timeout_s=10)
    assert "No such file" in res.output
    assert "Permission denied" in res.output
    assert res.output.strip().endswith("1000")


async def test_file_size_limit(tmp_path):
    backend = LocalBackend(get_settings().data_dir / "sandboxes")
    sb = await backend.start(SandboxSpec(limits=SandboxLimits(file_mb=1)))
    try:
        res = await sb.run("head -c 3000000 /dev/zero > big; ls -l big | awk '{print $5}'", timeout_s=10)
        assert int(res.output.split()[-1]) <= 1024 * 1024
    finally:
        await sb.close()


async def test_the_agent_ending_its_own_shell_is_an_agent_error(sandbox):
    with pytest.raises(SandboxGone) as e:
        await sandbox.run("exit 7", timeout_s=5)
    assert isinstance(e.value, AgentError)


async def test_killed_from_outside_is_an_env_error(sandbox):
    await sandbox.run("true", timeout_s=10)
    os.kill(sandbox._proc.pid, signal.SIGKILL)  # the host (an operator, the OOM killer) kills it
    with pytest.raises(EnvError):
        await sandbox.run("sleep 3; echo hi", timeout_s=10)


async def test_export_copies_the_workspace_with_modes(sandbox, tmp_path):
    await sandbox.run("echo data > out.txt && chmod 640 out.txt && ln -s /etc/passwd link", timeout_s=5)
    dest = tmp_path / "export"
    await sandbox.export(dest)
    assert (dest / "out.txt").read_text() == "data\n"
    assert oct((dest / "out.txt").stat().st_mode & 0o777) == "0o640"
    assert (dest / "link").is_symlink()


def test_missing_bubblewrap_names_the_debian_package(tmp_path):
    backend = LocalBackend(tmp_path)
    backend._bwrap = None  # as on a machine without the package
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap"):
        backend.check()


async def test_files_inside_show_as_owned_by_agent(sandbox):
    """Whatever the host calls uid 1000, inside the sandbox it is `agent` (issue 17 item 10)."""
    res = await sandbox.run("whoami; id -gn; stat -c '%U:%G' hello.txt; touch new && stat -c '%U' new; "
                            "getent passwd agent | cut -d: -f3,6", timeout_s=10)
    assert res.exit_code == 0, res.output
    assert res.output.split() == ["agent", "agent", "agent:agent", "agent", "1000:/workspace"]


def _cpu_quota_of(pid: int) -> tuple[int, int] | None:
    """The CFS quota and period of `pid`'s cpu cgroup as the host sees it (v1 or v2); None: no quota."""
    for line in open(f"/proc/{pid}/cgroup").read().splitlines():
        _, controllers, rel = line.split(":", 2)
        if "cpu" in controllers.split(","):
            for mount in ("cpu", "cpu,cpuacct"):
                group = f"/sys/fs/cgroup/{mount}{rel}"
                if os.path.isdir(group):
                    quota = int(open(f"{group}/cpu.cfs_quota_us").read())
                    return None if quota < 0 else (quota, int(open(f"{group}/cpu.cfs_period_us").read()))
        elif controllers == "" and os.path.exists(f"/sys/fs/cgroup{rel}/cpu.max"):
            quota, period = open(f"/sys/fs/cgroup{rel}/cpu.max").read().split()
            return None if quota == "max" else (int(quota), int(period))
    return None


async def test_a_tasks_cpus_limit_its_sandbox(tmp_path):
    """`nproc` inside shows the task's CPUs, and a CFS quota holds even when the agent widens its
    own affinity (which any process may do)."""
    from envhub.sandbox.local import CpuQuota

    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs a host with at least 2 CPUs to show a limit")
    backend = LocalBackend(get_settings().data_dir / "sandboxes")
    sb = await backend.start(SandboxSpec(limits=SandboxLimits(cpus=1)))
    try:
        assert (await sb.run("nproc", timeout_s=10)).output.strip() == "1"
        if CpuQuota.parent() is None:
            pytest.skip("no writable cpu cgroup here: the limit is affinity only")
        quota = _cpu_quota_of(sb._proc.pid)
        assert quota is not None and quota[0] / quota[1] == 1.0, quota
    finally:
        await sb.close()
    unlimited = await backend.start(SandboxSpec())
    try:
        assert int((await unlimited.run("nproc", timeout_s=10)).output) == len(os.sched_getaffinity(0))
        assert _cpu_quota_of(unlimited._proc.pid) is None
    finally:
        await unlimited.close()


async def test_run_once_result_channel_is_out_of_band():
    """The program writes its result to the backend's pipe ($ENVHUB_RESULT_FD); the judged state is
    read-only and nothing in the sandbox's file system leads to the channel."""
    state = Path(tempfile.mkdtemp(prefix="envhub-state-", dir="/var/tmp"))  # reachable by the sandbox uid
    state.chmod(0o755)
    (state / "answer.txt").write_text("42\n")
    backend = LocalBackend(get_settings().data_dir / "sandboxes")
    script = ("echo FORGED-ON-STDOUT; echo x > /workspace/answer.txt || echo READ-ONLY; "
              "printf '{\"ok\": true}' >&$ENVHUB_RESULT_FD")
    res = await backend.run_once(SandboxSpec(template=state, read_only_workspace=True), ["bash", "-c", script],
                                 timeout_s=30, result=True)
    assert res.exit_code == 0, res
    assert res.result == b'{"ok": true}' and "READ-ONLY" in res.output, res
    plain = await backend.run_once(SandboxSpec(template=state), ["bash", "-c", "echo ${ENVHUB_RESULT_FD:-none}"],
                                   timeout_s=30)
    assert plain.result is None and plain.output.strip() == "none"
    shutil.rmtree(state, ignore_errors=True)
