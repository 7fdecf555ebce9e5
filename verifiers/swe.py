"""Grading a SWE task: run the repository's own tests over the agent's final state.

A task's `tests/test_swe.py` is two lines:

    from verifiers.swe import test_fail_to_pass, test_pass_to_pass, test_report_integrity  # noqa: F401

`grade()` (run once, cached) copies the read-only final state to a scratch folder, drops `.git`
(the agent controls it), restores the task's `protected_paths` from `tests/protected.tar` (the
base versions, shipped with the hidden tests; protected files the agent added are deleted),
applies `tests/test.patch` with `git apply` (no fuzz), plants twins of the required tests
(copies with one expected value changed, around the original renamed too, and one exact copy;
`verifiers.swe_twins`), then runs `build` and `test_command` offline with a fresh HOME/TMPDIR,
`TZ=UTC`, `LC_ALL=C.UTF-8` and `REPORT_DIR` a fresh folder outside the repository. Only the report
file the runner wrote there is parsed (`verifiers.swe_reports`); console text never counts.

The build and the tests run the agent's code, so they run in a jail (`jail_argv`): another uid,
their own pid, net and ipc namespaces, everything read-only but the repository, HOME/TMPDIR and
the report folder, and the task's hidden files out of sight. From there nothing can signal, trace
or write to this process, which reads the report after the run. The runner itself runs inside
the jail with the agent's code, so its report can still be forged from within (verdicts flipped
through the framework's objects, the output rewritten, a pass exception, answers read from the
calling test): whatever makes the required tests pass without the fix makes their twins pass too,
and that exposes it
(`report_integrity`).

Outcomes: a missing toolchain or a jail that cannot start raises `EnvFault` (env_error, masked
from training); the agent's code failing to build, a test patch that no longer applies, a run
that ends abnormally (killed, no report, a truncated one), a non-zero exit with a report that
shows no failure, or a forged report are failed checks (the agent's failure, reward 0).
Skipped tests count as not passing.

The same machinery runs outside pytest for validation: `python3 -m verifiers.swe run --task DIR
--repo DIR` prints one JSON line (`RunResult`) after the marker `ENVHUB-SWE-RESULT:`.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from verifiers import STATE, TASK, EnvFault, check
from verifiers import swe_twins
from verifiers.swe_reports import PASSED, ReportError, Statuses, parse_file

RESULT_MARKER = "ENVHUB-SWE-RESULT:"
CLEAN_PATH = "/usr/local/bin:/usr/bin:/bin"
#: Fixed for every run, so results do not depend on the host or the hour.
FIXED_ENV = {"PATH": CLEAN_PATH, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC", "PYTHONHASHSEED": "0",
             "SOURCE_DATE_EPOCH": "1700000000", "TERM": "dumb", "NO_COLOR": "1", "CI": "1",
             "PYTHONDONTWRITEBYTECODE": "1"}


class PatchError(RuntimeError):
    """A patch did not apply exactly."""


@dataclass(frozen=True)
class SweConfig:
    """The SWE facts of a task (`task.yaml` → `metadata`)."""

    language: str
    test_command: str
    report_format: str
    report_file: str
    build: str = ""
    env: dict[str, str] = field(default_factory=dict)
    protected_paths: tuple[str, ...] = ()
    toolchain_check: str = ""
    toolchain_apt: tuple[str, ...] = ()
    verify_timeout_s: float = 300.0

    @classmethod
    def from_task_dir(cls, task_dir: Path) -> SweConfig:
        import yaml

        raw = yaml.safe_load((task_dir / "task.yaml").read_text(encoding="utf-8")) or {}
        return cls.from_metadata(raw.get("metadata") or {},
                                 float((raw.get("limits") or {}).get("verify_timeout_s", 300)))

    @classmethod
    def from_metadata(cls, meta: dict[str, Any], verify_timeout_s: float = 300.0) -> SweConfig:
        report = meta.get("report") or {}
        toolchain = meta.get("toolchain") or {}
        return cls(language=str(meta.get("language", "")), test_command=str(meta["test_command"]),
                   report_format=str(report["format"]), report_file=str(report["file"]),
                   build=str(meta.get("build") or ""), env={str(k): str(v) for k, v in (meta.get("env") or {}).items()},
                   protected_paths=tuple(meta.get("protected_paths") or ()),
                   toolchain_check=str(toolchain.get("check") or ""), toolchain_apt=tuple(toolchain.get("apt") or ()),
                   verify_timeout_s=verify_timeout_s)


@dataclass
class RunResult:
    """One run of the task's tests over one repository state."""

    statuses: Statuses = field(default_factory=dict)
    build_ok: bool = True
    build_output: str = ""
    test_exit: int | None = None
    test_output: str = ""
    report_error: str = ""
    patch_error: str = ""
    timed_out: bool = False
    toolchain_error: str = ""
    harness_error: str = ""
    #: copies of the suite's own tests planted for this run (`verifiers.swe_twins.Planted`)
    copies: list[dict[str, Any]] = field(default_factory=list)
    #: ids the report listed more than once
    duplicates: list[str] = field(default_factory=list)
    #: whether the build and tests ran in the jail (`jail_available`)
    jailed: bool = False
    elapsed_s: dict[str, float] = field(default_factory=dict)

    def problem(self) -> str:
        """Why this run cannot be graded as-is ('' when its report stands)."""
        if self.harness_error:
            return f"the trusted harness failed: {self.harness_error}"
        if self.toolchain_error:
            return f"toolchain missing: {self.toolchain_error}"
        if self.patch_error:
            return f"the test patch does not apply to the final state: {self.patch_error}"
        if not self.build_ok:
            return f"the build failed:\n{self.build_output[-1500:]}"
        if self.timed_out:
            return "the tests did not finish in the time a run is given (the verifier's limit less a reserve)"
        if self.report_error:
            ended = (f"the test run ended abnormally (exit {self.test_exit}{_signal_name(self.test_exit)}) and left "
                     if self.test_exit not in (0, None) else "")
            return (f"{ended}no usable test report: {self.report_error}; test output (tail):\n"
                    f"{self.test_output[-1000:]}")
        if self.test_exit not in (0, None) and all(s == PASSED for s in self.statuses.values()):
            return (f"the test command failed (exit {self.test_exit}) but its report shows no failure; "
                    f"output (tail):\n{self.test_output[-1000:]}")
        return ""


def _signal_name(code: int | None) -> str:
    """`, killed by SIGKILL` for a shell's 128+N exit status."""
    if code is None or not 128 < code < 128 + 65:
        return ""
    try:
        return f", killed by {signal.Signals(code - 128).name}"
    except ValueError:
        return ""


# --- path protection --------------------------------------------------------------------------

@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """gitignore-like globs: `**` spans folders, `*` and `?` stay within one; a pattern with no
    slash matches a file name at any depth."""
    pattern = pattern.strip().lstrip("/")
    if "/" not in pattern:
        pattern = "**/" + pattern
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out + "$")


def is_protected(rel: str, patterns: tuple[str, ...] | list[str]) -> bool:
    """Whether repository path `rel` (posix, relative) matches one of `patterns`."""
    return any(_glob_regex(p).match(rel) for p in patterns)


def protected_files(repo: Path, patterns: tuple[str, ...] | list[str]) -> list[str]:
    """Relative paths of files and symlinks under `repo` (not `.git`) matching `patterns`."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(repo):
        rel_dir = Path(dirpath).relative_to(repo).as_posix()
        dirnames[:] = [d for d in dirnames if not (rel_dir == "." and d == ".git")]
        entries = filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        for name in entries:
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            if is_protected(rel, patterns):
                out.append(rel)
    return sorted(out)


def make_protected_tar(repo: Path, patterns: tuple[str, ...] | list[str], dest: Path) -> list[str]:
    """Write the base versions of the protected files of `repo` into tar `dest` (task creation)."""
    files = [f for f in protected_files(repo, patterns) if (repo / f).is_file() and not (repo / f).is_symlink()]
    with tarfile.open(dest, "w", format=tarfile.PAX_FORMAT) as tar:
        for rel in files:
            info = tar.gettarinfo(str(repo / rel), arcname=rel)
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = 0
            with open(repo / rel, "rb") as f:
                tar.addfile(info, f)
    return files


def restore_protected(repo: Path, patterns: tuple[str, ...] | list[str], tar_path: Path | None) -> None:
    """Delete every protected file of `repo`, then write back the shipped base versions.

    Nothing is followed through links: a folder on a restored file's way that is a symlink or a
    file is removed first, so a restore cannot write outside `repo`.
    """
    for rel in protected_files(repo, patterns):
        p = repo / rel
        if p.is_symlink() or p.is_file():
            p.unlink()
        elif p.is_dir():
            shutil.rmtree(p)
    if tar_path is None or not tar_path.is_file():
        return
    with tarfile.open(tar_path) as tar:
        for member in tar.getmembers():
            rel = Path(member.name)
            if not member.isfile() or rel.is_absolute() or ".." in rel.parts:
                raise EnvFault(f"protected.tar holds an unsafe entry {member.name!r}")
            cur = repo
            for part in rel.parts[:-1]:
                cur = cur / part
                if cur.is_symlink() or (cur.exists() and not cur.is_dir()):
                    cur.unlink()
                cur.mkdir(exist_ok=True)
            target = repo / rel
            if target.is_symlink() or target.is_file():
                target.unlink()
            elif target.is_dir():
                shutil.rmtree(target)
            src = tar.extractfile(member)
            assert src is not None
            target.write_bytes(src.read())
            target.chmod(member.mode & 0o777 | 0o600)


# --- patches and runs -------------------------------------------------------------------------

def git_env(home: Path) -> dict[str, str]:
    return {**FIXED_ENV, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_CEILING_DIRECTORIES": str(home.parent)}


def apply_patch(repo: Path, patch: Path | str, *, check_only: bool = False, reverse: bool = False) -> None:
    """`git apply` exactly (no fuzz, no 3-way) in `repo`; raises `PatchError` with git's words."""
    text = patch.read_text(encoding="utf-8") if isinstance(patch, Path) else patch
    if not text.strip():
        return
    home = Path(tempfile.mkdtemp(prefix="swe-git-"))
    argv = ["git", "apply", "--whitespace=nowarn"] + (["--check"] if check_only else []) + (["-R"] if reverse else [])
    try:
        proc = subprocess.run(argv, cwd=repo, input=text, capture_output=True, text=True, timeout=120,
                              env=git_env(home))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    if proc.returncode != 0:
        raise PatchError((proc.stderr or proc.stdout).strip()[-1500:])


def copy_repo(src: Path, dest: Path) -> None:
    """Copy a repository state without `.git` (the agent controls it) and keeping symlinks as links."""
    shutil.copytree(src, dest, symlinks=True, ignore=lambda d, names: [".git"] if Path(d) == src else [])
    for dirpath, dirnames, filenames in os.walk(dest):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            if not os.path.islink(p):
                os.chmod(p, os.lstat(p).st_mode | 0o600 | (0o100 if name in dirnames else 0))
    dest.chmod(0o700)


#: The jail's uid and gid: not the harness's, so nothing the tests start is the harness's peer.
JAIL_UID = 64123
#: Writable scratch of a jailed run that is not one of its own folders (tools that ignore TMPDIR).
JAIL_TMP_BYTES = 512 * 1024 * 1024
#: Processes (tasks) the harness keeps for itself whatever the code under test forks.
HARNESS_RESERVE = 32
#: The jail's process cap where nothing caps the harness.
JAIL_PROCESSES = 4096


class JailError(RuntimeError):
    """The trusted harness could not start its jail (never the agent's doing)."""


def jail_processes() -> int:
    """The jail's own process cap: what caps the harness (its RLIMIT_NPROC, its cgroup's
    pids.max) less `HARNESS_RESERVE`, so a fork bomb in the code under test cannot take the
    processes the harness needs to end the run and read the report."""
    caps = []
    soft, _ = resource.getrlimit(resource.RLIMIT_NPROC)
    if soft != resource.RLIM_INFINITY:
        caps.append(soft)
    for pids_max in ("/sys/fs/cgroup/pids.max", "/sys/fs/cgroup/pids/pids.max"):  # cgroup v2, v1 (a container's)
        try:
            text = Path(pids_max).read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            caps.append(int(text))
    return max(8, min(caps) - HARNESS_RESERVE) if caps else JAIL_PROCESSES


def jail_argv(command: str, *, cwd: Path, writable: tuple[Path, ...], status_fd: int,
              masked: tuple[Path, ...] = ()) -> list[str]:
    """`command` in a bubblewrap jail: its own user (another uid), pid, net, ipc and uts
    namespaces, the whole file system read-only except `writable`, a private /tmp, and each
    `masked` folder an empty one (the task's hidden files: `tests.json` names the tests that judge,
    `twins.json` which copies are twins, code that read them could flip exactly the right verdicts).
    From inside it no process of the harness can be seen, so none can be signalled, traced or
    written to.

    Its RLIMIT_NPROC (`jail_processes`) is set inside its user namespace: the kernel counts
    processes per user namespace and charges them to the parents too, so the jail's own count
    stops at its cap while the harness keeps the rest of its own."""
    bwrap = shutil.which("bwrap", path=CLEAN_PATH)
    if not bwrap:
        raise JailError("bubblewrap (bwrap) is not installed")
    argv = [bwrap, "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--new-session",
            "--uid", str(JAIL_UID), "--gid", str(JAIL_UID), "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev",
            "--size", str(JAIL_TMP_BYTES), "--tmpfs", "/tmp"]
    for path in masked:
        argv += ["--tmpfs", str(path)]
    for path in writable:
        argv += ["--bind", str(path), str(path)]
    return argv + ["--json-status-fd", str(status_fd), "--chdir", str(cwd), "--",
                   "/bin/bash", "--noprofile", "--norc", "-c", f"ulimit -u {jail_processes()}\n{command}"]


@lru_cache(maxsize=1)
def jail_available() -> bool:
    """Whether this host lets the harness build the jail (user namespaces allowed): probed with
    `true` before any of the agent's code runs, so the agent cannot influence the answer. The
    Docker backend's verifier containers allow them (`envhub/sandbox/docker/seccomp.py`); where nothing
    does, runs are unjailed (`RunResult.jailed`)."""
    try:
        code, _, _ = _shell("true", cwd=Path("/"), env=dict(FIXED_ENV), timeout=30, jail=())
    except JailError:
        return False
    return code == 0


def _shell(command: str, *, cwd: Path, env: dict[str, str], timeout: float,
           jail: tuple[Path, ...] | None = None, masked: tuple[Path, ...] = ()) -> tuple[int | None, str, bool]:
    """Run `command` with bash in its own process group; kill the whole group at the deadline.

    With `jail` (the folders it may write), the command runs untrusted in `jail_argv`; a jail that
    never started its command raises `JailError`.
    """
    status_r = status_w = -1
    argv = ["/bin/bash", "--noprofile", "--norc", "-c", command]
    if jail is not None:
        status_r, status_w = os.pipe()
        argv = jail_argv(command, cwd=cwd, writable=jail, status_fd=status_w, masked=masked)
    try:
        with tempfile.TemporaryFile() as out:
            proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True,
                                    pass_fds=(status_w,) if jail is not None else ())
            if jail is not None:
                os.close(status_w)
                status_w = -1
            timed_out = False
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)  # leftovers of a finished command too
                except ProcessLookupError:
                    pass
                proc.wait()
            out.seek(0, io.SEEK_END)
            size = out.tell()
            out.seek(max(0, size - 32_000))
            text = out.read().decode("utf-8", errors="replace")
        if jail is not None:
            os.set_blocking(status_r, False)  # what bwrap wrote is there; never wait on a writer
            with os.fdopen(status_r, "rb") as f:
                status_r = -1
                status = (f.read(65536) or b"").decode("utf-8", errors="replace")
            if '"child-pid"' not in status and not timed_out:
                raise JailError(f"the jail did not start (bwrap exit {proc.returncode}): {text.strip()[-500:]}")
    finally:
        for fd in (status_r, status_w):
            if fd >= 0:
                os.close(fd)
    return (None if timed_out else proc.returncode), text, timed_out


def suite_budget_s(cfg: SweConfig) -> float:
    """What a run may take, copying the state and planting the tests included: the verifier's limit
    less a reserve (a tenth of it, at least 20 s) for starting, reading the report and answering.
    So the agent's code that makes the build or the suite slow ends as a timed-out run (the agent's
    failure; the gold patch's runs were timed when the task was validated), never as the verifier's
    own time-out, which no policy should be blamed for."""
    return max(10.0, cfg.verify_timeout_s - max(20.0, cfg.verify_timeout_s / 10))


def run_env(cfg: SweConfig, work: Path, report_dir: Path) -> dict[str, str]:
    """The environment of a build or test run: fixed locale/time, private HOME and TMPDIR."""
    home, tmp = work / "home", work / "tmp"
    home.mkdir(exist_ok=True)
    tmp.mkdir(exist_ok=True)
    env = {**FIXED_ENV, "HOME": str(home), "TMPDIR": str(tmp), "REPORT_DIR": str(report_dir),
           "GIT_CONFIG_NOSYSTEM": "1"}
    for k, v in cfg.env.items():
        env[k] = v.replace("$HOME", str(home)).replace("$TMPDIR", str(tmp))
    return env


def run_suite(repo: Path, cfg: SweConfig, *, deadline: float | None = None, test_args: str = "",
              jail: bool = True, masked: tuple[Path, ...] = ()) -> RunResult:
    """Build and test `repo` in place (already prepared) and parse the runner's report; the build
    and the tests end by `deadline` (`time.monotonic()`; default: `suite_budget_s` from now).

    The build and the tests run the agent's code, so they run jailed (`jail_argv`), writing only
    the repository, their HOME/TMPDIR and the report folder, reading nothing under `masked`; this
    process reads the report after.
    """
    result = RunResult()
    work = Path(tempfile.mkdtemp(prefix="swe-run-"))
    report_dir = Path(tempfile.mkdtemp(prefix="swe-report-"))
    deadline = deadline or time.monotonic() + suite_budget_s(cfg)
    try:
        env = run_env(cfg, work, report_dir)
        env["TEST_ARGS"] = test_args
        writable = (repo, work, report_dir) if jail and jail_available() else None
        result.jailed = writable is not None
        if cfg.toolchain_check:
            code, out, _ = _shell(cfg.toolchain_check, cwd=work, env=env, timeout=60)
            if code != 0:
                result.toolchain_error = (f"`{cfg.toolchain_check}` failed ({out.strip()[-300:]}); install: "
                                          f"apt-get install {' '.join(cfg.toolchain_apt)}")
                return result
        if cfg.build:
            started = time.monotonic()
            code, out, timed_out = _shell(cfg.build, cwd=repo, env=env, timeout=max(1.0, deadline - time.monotonic()),
                                          jail=writable, masked=masked)
            result.elapsed_s["build"] = round(time.monotonic() - started, 3)
            result.build_output = out
            if code != 0:
                result.build_ok = False
                result.timed_out = timed_out
                return result
        started = time.monotonic()
        code, out, timed_out = _shell(cfg.test_command, cwd=repo, env=env,
                                      timeout=max(1.0, deadline - time.monotonic()), jail=writable, masked=masked)
        result.elapsed_s["test"] = round(time.monotonic() - started, 3)
        result.test_exit, result.test_output, result.timed_out = code, out, timed_out
        try:
            result.statuses = parse_file(cfg.report_format, report_dir / cfg.report_file)
            result.duplicates = result.statuses.duplicates
        except ReportError as e:
            result.report_error = str(e)
        return result
    except JailError as e:
        result.harness_error = str(e)
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(report_dir, ignore_errors=True)


def run_state(state: Path, task_dir: Path, *, apply_test_patch: bool = True, timeout_s: float | None = None,
              test_args: str = "", twins: bool = False,
              copies: list[swe_twins.Copy] | None = None, as_agent: bool = False) -> RunResult:
    """Grade-style run over repository state `state` (not modified): copy, restore protected
    paths, apply the test patch, plant the twins and copies of the suite's own tests that grading
    plants (with `twins`, from `tests/twins.json`), or exactly `copies` (validation), build, test,
    parse. `as_agent`: the suite as the agent's `run_tests` sees it (nothing restored or added)."""
    cfg = SweConfig.from_task_dir(task_dir)
    deadline = time.monotonic() + (timeout_s or suite_budget_s(cfg))  # copying and planting count too
    tests = task_dir / "tests"
    scratch = Path(tempfile.mkdtemp(prefix="swe-repo-")) / "repo"
    try:
        copy_repo(state, scratch)
        if as_agent:
            return run_suite(scratch, cfg, deadline=deadline, test_args=test_args, masked=(task_dir.resolve(),))
        restore_protected(scratch, cfg.protected_paths, tests / "protected.tar")
        if apply_test_patch and (tests / "test.patch").is_file():
            try:
                apply_patch(scratch, tests / "test.patch")
            except PatchError as e:
                return RunResult(patch_error=str(e))
        if copies is None and twins:
            copies = swe_twins.plan(swe_twins.load(tests), load_tests_json(task_dir)[0], random.SystemRandom())
        planted = swe_twins.plant(scratch, cfg.language, copies) if copies else []
        result = run_suite(scratch, cfg, deadline=deadline, test_args=test_args, masked=(task_dir.resolve(),))
        swe_twins.resolve(planted, result.statuses)
        result.copies = [asdict(c) for c in planted]
        return result
    finally:
        shutil.rmtree(scratch.parent, ignore_errors=True)


# --- grading ----------------------------------------------------------------------------------

@dataclass
class Grade:
    run: RunResult
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    language: str = ""

    def not_passing(self, ids: list[str]) -> list[str]:
        return [f"{t} ({self.run.statuses.get(t, 'absent')})" for t in ids if self.run.statuses.get(t) != PASSED]

    def assert_passing(self, ids: list[str], what: str) -> None:
        problem = self.run.problem()
        assert not problem, problem
        assert ids, f"the task declares no {what} tests"
        bad = self.not_passing(ids)
        assert not bad, f"{len(bad)} of {len(ids)} {what} tests do not pass: " + ", ".join(bad[:10])


def load_tests_json(task_dir: Path) -> tuple[list[str], list[str]]:
    raw = json.loads((task_dir / "tests" / "tests.json").read_text(encoding="utf-8"))
    f2p, p2p = raw.get("FAIL_TO_PASS"), raw.get("PASS_TO_PASS")
    if not isinstance(f2p, list) or not isinstance(p2p, list):
        raise EnvFault("tests.json must hold FAIL_TO_PASS and PASS_TO_PASS lists")
    return [str(t) for t in f2p], [str(t) for t in p2p]


@lru_cache(maxsize=1)
def grade(state: Path = STATE, task_dir: Path = TASK) -> Grade:
    """Run the task's tests once over the final state (cached for the checks of one verify)."""
    assert state.is_dir(), f"the final state {state} is missing"
    f2p, p2p = load_tests_json(task_dir)
    cfg = SweConfig.from_task_dir(task_dir)
    # The run's clock starts here, a moment after the verify's (a warm verifier prepares its process
    # ahead of the request, so no process clock tells when the verify began): the reserve covers it.
    run = run_state(state, task_dir, twins=True)
    if run.toolchain_error or run.harness_error:
        raise EnvFault(run.problem())
    return Grade(run=run, fail_to_pass=f2p, pass_to_pass=p2p, language=cfg.language)


@check("fail_to_pass", kind="hard")
def test_fail_to_pass() -> None:
    """Every FAIL_TO_PASS test passes (the issue is fixed)."""
    g = grade()
    g.assert_passing(g.fail_to_pass, "FAIL_TO_PASS")


@check("pass_to_pass", kind="collateral")
def test_pass_to_pass() -> None:
    """Every PASS_TO_PASS test still passes (nothing else broke)."""
    g = grade()
    g.assert_passing(g.pass_to_pass, "PASS_TO_PASS")


@check("report_integrity", kind="anti_hack")
def test_report_integrity() -> None:
    """The report is the runner's own: the planted tests have their true outcomes, and every
    graded or planted test is listed exactly once (tests the agent added are ignored)."""
    g = grade()
    problem = g.run.problem()
    assert not problem, problem
    planted = [swe_twins.Planted(**c) for c in g.run.copies]
    forged = swe_twins.check_report(g.run.statuses, g.run.duplicates, g.fail_to_pass + g.pass_to_pass, planted,
                                    g.language)
    assert not forged, "the test report is forged: " + "; ".join(forged)


def main(argv: list[str] | None = None) -> int:
    """`python3 -m verifiers.swe run --task DIR --repo DIR [--no-test-patch]`: one run, as JSON."""
    ap = argparse.ArgumentParser(prog="verifiers.swe")
    sub = ap.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run")
    run.add_argument("--task", type=Path, required=True)
    run.add_argument("--repo", type=Path, required=True)
    run.add_argument("--no-test-patch", action="store_true")
    run.add_argument("--timeout", type=float, default=None)
    run.add_argument("--twins", action="store_true", help="plant the twins and copies grading plants")
    run.add_argument("--copies", default=None,
                     help="plant these copies: JSON [{test, literal, becomes, original}, ...]")
    run.add_argument("--as-agent", action="store_true", help="the suite as the agent runs it: nothing restored")
    args = ap.parse_args(argv)
    copies = [swe_twins.Copy(**c) for c in json.loads(args.copies)] if args.copies is not None else None
    result = run_state(args.repo, args.task, apply_test_patch=not args.no_test_patch, timeout_s=args.timeout,
                       twins=args.twins, copies=copies, as_agent=args.as_agent)
    result.build_output = result.build_output[-2000:]
    result.test_output = result.test_output[-2000:]
    sys.stdout.write("\n" + RESULT_MARKER + json.dumps(asdict(result)) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
