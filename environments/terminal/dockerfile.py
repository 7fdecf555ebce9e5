"""Read a task's Dockerfile and replay what it does to the work dir into the task's `state/`.

An imported Harbor / Terminal-Bench task runs in envhub's sandbox, not in the task's image, so
whatever the image build put into the work dir (`go mod init`, generated sources, a seeded SQLite
database) must already be in `state/`. `replay()` walks the final stage's steps in order:

- `WORKDIR` moves the build's cwd (and creates the folder when it is inside the work dir);
- `COPY` / `ADD` copy build-context files that land in the work dir (local tarballs are unpacked);
- `ENV` / `ARG` set variables for later `RUN` steps; `ENV` is also kept for the agent and verifier;
- `RUN` runs in a local bubblewrap sandbox (no network, the sandbox's limits) with the state at
  `/workspace` and the work dir's paths rewritten to it. A `RUN` is split on its top-level `&&` /
  `;`: parts that need the network (apt-get, pip, curl, npm install, go get, git clone...) are
  skipped, the rest runs, so `apt-get install -y golang && go mod init x` still creates `go.mod`.

Every step that is not replayed, or that failed, is reported with the reason (printed by
`envhub import harbor` and kept in `task.yaml` under `metadata.harbor.unsupported_setup`).
Only Debian/Ubuntu-based images are replayed: their `RUN` steps mean the same on this host.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import tarfile
import tempfile
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from envhub.errors import EnvError
from envhub.sandbox.base import WORKSPACE, SandboxLimits, SandboxSpec

SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"  # $PATH in an ENV
DOCKER_FILES = {"Dockerfile", "docker-compose.yaml", "docker-compose.yml", ".dockerignore"}
#: Images whose `RUN` steps are Debian/Ubuntu shell commands (the host here is Debian).
DEBIAN_LIKE = re.compile(r"debian|ubuntu|bookworm|bullseye|buster|trixie|jammy|noble|focal|"
                         r"^(python|golang|node|rust|openjdk|eclipse-temurin|gcc|buildpack-deps|ruby|php|perl)"
                         r"(:|$)(?!.*alpine)|^envhub-|t-bench|terminal-bench")
#: Commands that fetch from the network: skipped in the offline replay.
NETWORK_WORDS = {"apt-get", "apt", "aptitude", "apk", "yum", "dnf", "pip", "pip3", "pipx", "uv", "uvx", "curl",
                 "wget", "gem", "conda", "mamba", "micromamba", "rustup", "add-apt-repository", "poetry", "pdm"}
NETWORK_SUB = {"npm": {"install", "i", "ci", "add", "update"}, "yarn": {"install", "add", ""},
               "pnpm": {"install", "i", "add"}, "go": {"get", "install", "download"},
               "cargo": {"install", "fetch"}, "git": {"clone", "fetch", "pull", "submodule", "ls-remote"}}
COMPOUND = re.compile(r"(^|[\s;&|(])(if|then|for|while|until|case|do|function)(\s|$)|[{}()]")


@dataclass
class Step:
    op: str  # upper-case instruction: FROM, RUN, COPY, ...
    args: str
    raw: str


@dataclass
class DockerPlan:
    """What we understood from a Dockerfile: the final stage's steps, in order."""

    base_images: list[str] = field(default_factory=list)
    workdir: str = "/app"
    steps: list[Step] = field(default_factory=list)
    #: Steps no replay can do (multi-stage copies, remote ADDs), found while parsing.
    unsupported: list[str] = field(default_factory=list)

    @property
    def copies(self) -> list[Step]:
        return [s for s in self.steps if s.op in ("COPY", "ADD")]

    @property
    def debian_like(self) -> bool:
        return bool(self.base_images) and bool(DEBIAN_LIKE.search(self.base_images[-1].lower()))


def parse_dockerfile(text: str) -> DockerPlan:
    """Parse a Dockerfile; the steps kept are those of its last stage."""
    plan = DockerPlan()
    workdir = "/"
    saw_workdir = False
    for raw in _logical_lines(text):
        word, _, rest = raw.partition(" ")
        op, rest = word.upper(), rest.strip()
        if op == "FROM":
            plan.base_images.append(rest.split()[0] if rest else "")
            plan.steps, plan.unsupported, workdir, saw_workdir = [], [], "/", False  # a new stage starts over
            continue
        if op == "WORKDIR":
            workdir = str(PurePosixPath(workdir) / rest.strip("\"'"))
            saw_workdir = True
        elif op in ("COPY", "ADD"):
            args = copy_args(rest)
            paths = [a for a in args if not a.startswith("--")]
            if any(a.startswith("--from") for a in args) or len(paths) < 2 or any("://" in p for p in paths):
                plan.unsupported.append(_clip(raw))
                continue
        plan.steps.append(Step(op, rest, _clip(raw)))
    plan.workdir = workdir if saw_workdir else "/app"
    return plan


def _clip(raw: str) -> str:
    return raw if len(raw) <= 300 else raw[:297] + "..."


HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")


def _logical_lines(text: str) -> list[str]:
    """Instructions, one per item: continuations joined, comments dropped, BuildKit heredocs
    (`RUN <<EOF ... EOF`, `RUN cat > f <<'EOF' ...`) kept with their lines."""
    out: list[str] = []
    buf = ""
    lines = iter(text.splitlines())
    for line in lines:
        stripped = line.strip()
        if not buf and (not stripped or stripped.startswith("#")):
            continue
        if buf and stripped.startswith("#"):
            continue  # a comment inside a continued instruction
        if stripped.endswith("\\"):
            buf += stripped[:-1] + " "
            continue
        whole = (buf + stripped).strip()
        buf = ""
        for m in HEREDOC.finditer(whole):
            body = []
            for more in lines:
                if more.strip() == m.group(2):
                    break
                body.append(more)
            whole += "\n" + "\n".join(body) + "\n" + m.group(2)
        out.append(whole if "\n" in whole else " ".join(whole.split()))
    if buf.strip():
        out.append(buf.strip())
    return out


def copy_args(rest: str) -> list[str]:
    if rest.startswith("["):
        try:
            return [str(a) for a in json.loads(rest)]
        except ValueError:
            pass
    return shlex.split(rest)


def remap(text: str, mapping: dict[str, str]) -> str:
    """Rewrite absolute paths (`/app`, `/app/x`), never `foo/app` or `/apple`."""
    for old, new in mapping.items():
        if old in ("", "/"):
            continue
        text = re.sub(r"(?<![\w./-])" + re.escape(old.rstrip("/")) + r"(?![\w.-])", new, text)
    return text


# -- RUN commands ------------------------------------------------------------------------------------
def split_run(command: str) -> list[str]:
    """Top-level `&&` / `;` / newline parts of a shell command; one part when it holds compound
    syntax (if/for/subshells/braces) that a split could break."""
    if "<<" in command or COMPOUND.search(_unquoted(command)):
        return [command.strip()]
    parts, buf, i, quote = [], "", 0, ""
    while i < len(command):
        ch = command[i]
        if quote:
            buf += ch
            if ch == "\\" and quote == '"' and i + 1 < len(command):
                buf += command[i + 1]
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
            buf += ch
        elif ch == "\\" and i + 1 < len(command):
            buf += command[i:i + 2]
            i += 1
        elif command.startswith("&&", i) or ch in ";\n":
            parts.append(buf.strip())
            buf = ""
            i += 1 if ch != "&" else 2
            continue
        else:
            buf += ch
        i += 1
    parts.append(buf.strip())
    return [p for p in parts if p]


def _unquoted(command: str) -> str:
    return re.sub(r"'[^']*'|\"(?:\\.|[^\"\\])*\"", "''", command)


def run_command(step: Step) -> str:
    """A RUN step's shell command: exec form joined, `RUN <<EOF` heredoc scripts unwrapped."""
    command = shlex.join(copy_args(step.args)) if step.args.startswith("[") else step.args
    script = re.match(r"<<-?\s*(['\"]?)(\w+)\1\s*\n(.*)\n\2$", command, re.S)
    return script.group(3) if script else command


def needs_network(part: str) -> str | None:
    """Why `part` needs the network (its command), or None."""
    try:
        words = shlex.split(part, comments=True)
    except ValueError:
        words = part.split()
    while words and (re.match(r"^\w+=", words[0]) or words[0] in ("sudo", "env", "exec", "command")):
        words.pop(0)
    if not words:
        return None
    cmd = PurePosixPath(words[0]).name
    sub = next((w for w in words[1:] if not w.startswith("-")), "")
    if cmd in NETWORK_WORDS or (cmd.startswith("python") and words[1:3] == ["-m", "pip"]):
        return cmd
    if cmd in NETWORK_SUB and (sub in NETWORK_SUB[cmd] or (cmd == "go" and sub == "mod" and "download" in words)):
        return f"{cmd} {sub}".strip()
    if cmd == "rm" and all(re.match(r"^(-\w+|/var/lib/apt/lists\S*|/var/cache/\S*|/root/\.cache\S*)$", w)
                           for w in words[1:]):
        return "package cache clean-up"
    if re.search(r"(^|[\s|;(`$])(curl|wget)\s", part):
        return "a download"
    return None


def apt_packages(part: str) -> list[str]:
    words = part.split()
    if "install" not in words:
        return []
    return [w.split("=")[0] for w in words[words.index("install") + 1:] if not w.startswith("-")]


def host_has_package(name: str) -> bool:
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Status}", name], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and "install ok installed" in out.stdout


# -- the replay ------------------------------------------------------------------------------------
@dataclass
class Replay:
    """What a replay did: the notes are one line per step not (fully) replayed."""

    notes: list[str] = field(default_factory=list)
    replayed: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # ENV, with the work dir's paths as in the Dockerfile
    state_from: str = ""


def replay(plan: DockerPlan, context: Path, state: Path, *, limits: SandboxLimits, step_timeout_s: float,
           exclude: set[str] = frozenset(), log: Callable[[str], None] = lambda _: None) -> Replay:  # type: ignore[assignment]
    """Lay the Dockerfile's effect on the work dir out in `state` (an empty folder)."""
    out = Replay()

    def note(line: str) -> None:
        out.notes.append(line)
        log(line)

    for line in plan.unsupported:
        note(f"{line}: not supported (multi-stage or remote source)")
    workdir = PurePosixPath(plan.workdir)
    skip = DOCKER_FILES | set(exclude)
    runner = _Runner(limits, step_timeout_s) if plan.debian_like and any(
        s.op == "RUN" for s in plan.steps) else None
    final, state = state, runner.work if runner else state  # RUN steps need a folder the sandbox uid can reach
    try:
        _replay_steps(plan, context, state, workdir, skip, runner, out, note, log)
    finally:
        if runner is not None:
            runner.close(final)
    return out


def _replay_steps(plan: DockerPlan, context: Path, state: Path, workdir: PurePosixPath, skip: set[str],
                  runner: _Runner | None, out: Replay, note: Callable[[str], None],
                  log: Callable[[str], None]) -> None:
    if not plan.copies:
        for p in sorted(context.iterdir()) if context.is_dir() else []:
            if p.name not in skip:
                _copy_any(p, state / p.name)
        out.state_from = "all build-context files (the Dockerfile copies nothing)"
    else:
        out.state_from = "the Dockerfile's COPY/ADD into the work dir"
    cwd = PurePosixPath("/")
    args: dict[str, str] = {}
    shell = ["/bin/sh", "-c"]
    for step in plan.steps:
        if step.op == "WORKDIR":
            cwd = cwd / _expand(step.args.strip("\"'"), {**args, **out.env})
            if cwd.is_relative_to(workdir):
                (state / cwd.relative_to(workdir)).mkdir(parents=True, exist_ok=True)
        elif step.op in ("ENV", "ARG"):
            for k, v in _assignments(step.args, step.op).items():
                value = _expand(v, {"PATH": SANDBOX_PATH, **args, **out.env})
                (out.env if step.op == "ENV" else args)[k] = value
            out.replayed.append(step.raw)
        elif step.op in ("COPY", "ADD"):
            if _copy_step(step, context, state, workdir, cwd, skip, note):
                out.replayed.append(step.raw)
        elif step.op == "SHELL":
            shell = copy_args(step.args) or shell
        elif step.op == "RUN":
            _run_step(step, plan, runner, shell, cwd, {**args, **out.env}, out, note, log)
        elif step.op in ("LABEL", "EXPOSE", "MAINTAINER"):
            continue  # no effect on files or behaviour
        else:
            note(f"{step.raw}: not replayed ({step.op} has no equivalent in the sandbox)")


def _assignments(args: str, op: str) -> dict[str, str]:
    words = shlex.split(args)
    if op == "ENV" and words and "=" not in words[0]:
        return {words[0]: " ".join(words[1:])}  # legacy `ENV KEY value with spaces`
    out = {}
    for w in words:
        k, eq, v = w.partition("=")
        if op == "ARG" and not eq:
            continue  # an ARG with no default is empty unless --build-arg gives it
        out[k] = v
    return out


def _expand(value: str, env: dict[str, str]) -> str:
    return re.sub(r"\$\{(\w+)(?::?-([^}]*))?\}|\$(\w+)",
                  lambda m: env.get(m.group(1) or m.group(3), m.group(2) or ""), value)


def _copy_step(step: Step, context: Path, state: Path, workdir: PurePosixPath, cwd: PurePosixPath,
               skip: set[str], note: Callable[[str], None]) -> bool:
    paths = [a for a in copy_args(step.args) if not a.startswith("--")]
    sources, dest = paths[:-1], paths[-1]
    dest_path = PurePosixPath(dest) if dest.startswith("/") else cwd / dest
    if not dest_path.is_relative_to(workdir):
        note(f"{step.raw}: copies outside the work dir {workdir}, not into the workspace")
        return False
    target = state / dest_path.relative_to(workdir)
    into_dir = dest.endswith("/") or dest in (".", "./") or len(sources) > 1 or target == state
    ok = True
    for src in sources:
        matches = sorted(context.glob(src)) if any(ch in src for ch in "*?[") else [context / src]
        for m in matches:
            if not m.exists() or not m.resolve().is_relative_to(context.resolve()):
                note(f"{step.raw}: {src} is not in the build context")
                ok = False
                continue
            if m.is_dir():
                _copy_any(m, target, skip=skip if m.resolve() == context.resolve() else set())
            elif step.op == "ADD" and tarfile.is_tarfile(m):
                target.mkdir(parents=True, exist_ok=True)
                with tarfile.open(m) as tar:
                    extract_data(tar, target)
            elif into_dir or len(matches) > 1:
                _copy_any(m, target / m.name)
            else:
                _copy_any(m, target)
    return ok


def extract_data(tar: tarfile.TarFile, dest: Path) -> None:
    """Extract under tarfile's "data" filter: nothing lands or points outside `dest`, no device
    files, no archive owners, no setuid or group/other write bits. Debian 12's Python (3.11.2)
    predates the filter, so there each member is checked the same way, just before it is written
    (a link extracted earlier cannot redirect a later member)."""
    if hasattr(tarfile, "data_filter"):
        tar.extractall(dest, filter="data")
        return
    root = os.path.realpath(dest)
    for member in tar.getmembers():
        if not (member.isreg() or member.isdir() or member.issym() or member.islnk()):
            raise tarfile.TarError(f"{member.name}: not a file, folder or link")
        path = os.path.realpath(os.path.join(root, member.name))
        if member.issym():
            points_to = os.path.realpath(os.path.join(os.path.dirname(path), member.linkname))
        elif member.islnk():
            points_to = os.path.realpath(os.path.join(root, member.linkname))
        else:
            points_to = path
        if any(os.path.commonpath([root, p]) != root for p in (path, points_to)):
            raise tarfile.TarError(f"{member.name}: outside the destination")
        member.uid, member.gid, member.uname, member.gname = os.getuid(), os.getgid(), "", ""
        member.mode &= 0o755
        tar.extract(member, root)


def _copy_any(src: Path, dest: Path, skip: set[str] = frozenset()) -> None:  # type: ignore[assignment]
    if src.is_dir():
        shutil.copytree(src, dest, symlinks=True, dirs_exist_ok=True,
                        ignore=(lambda d, names: [n for n in names if n in skip]) if skip else None)
    else:
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)


def _run_step(step: Step, plan: DockerPlan, runner: _Runner | None, shell: list[str], cwd: PurePosixPath,
              env: dict[str, str], out: Replay, note: Callable[[str], None], log: Callable[[str], None]) -> None:
    if runner is None:
        note(f"{step.raw}: not replayed (base image {plan.base_images[-1] if plan.base_images else '?'} "
             "is not Debian/Ubuntu-based)")
        return
    command = run_command(step)
    workdir = PurePosixPath(plan.workdir)
    kept: list[str] = []
    for part in split_run(command):
        why = needs_network(part)
        if why is None:
            kept.append(part)
            continue
        pkgs = apt_packages(part) if why in ("apt-get", "apt") else []
        have = [p for p in pkgs if host_has_package(p)]
        missing = [p for p in pkgs if p not in have]
        host = (f"; on this host: {', '.join(have) or 'none'} installed"
                + (f", missing: {', '.join(missing)}" if missing else "")) if pkgs else ""
        reason = "nothing to replay" if why == "package cache clean-up" else "needs the network"
        note(f"RUN {_clip(part)}: not replayed ({reason}: {why}){host}")
    if not kept:
        return
    script = " && ".join(kept)
    if not cwd.is_relative_to(workdir):
        note(f"RUN {_clip(script)}: not replayed (it works in {cwd}, outside the work dir {workdir}; only the "
             "work dir becomes the workspace)")
        return
    inside = PurePosixPath(WORKSPACE) / cwd.relative_to(workdir)
    res = runner.run(shell, remap(script, {plan.workdir: WORKSPACE}), str(inside),
                     {k: remap(v, {plan.workdir: WORKSPACE}) for k, v in env.items()})
    if res.timed_out:
        note(f"RUN {_clip(script)}: failed in the replay (timed out after {runner.timeout_s:g}s)")
    elif res.exit_code != 0:
        tail = res.output.strip()[-400:].replace("\n", " | ")
        note(f"RUN {_clip(script)}: failed in the replay (exit {res.exit_code}): {tail}")
    else:
        out.replayed.append(f"RUN {_clip(script)}")
        log(f"replayed: RUN {_clip(script)}")


class _Runner:
    """Runs RUN steps in the local bubblewrap backend over `work`, a world-traversable scratch
    folder (the sandbox uid must reach it), moved to the task's state/ at the end."""

    def __init__(self, limits: SandboxLimits, timeout_s: float) -> None:
        self.limits, self.timeout_s = limits, timeout_s
        self.scratch = Path(tempfile.mkdtemp(prefix="envhub-replay-", dir="/var/tmp"))
        self.scratch.chmod(0o755)
        self.work = self.scratch / "state"
        self.work.mkdir()

    def run(self, shell: list[str], script: str, cwd: str, env: dict[str, str]) -> Any:
        from envhub.sandbox.local import LocalBackend

        backend = LocalBackend(self.scratch / "sandboxes")
        spec = SandboxSpec(template=self.work, limits=self.limits, workdir=WORKSPACE, env={"HOME": "/tmp", **env})
        argv = [*shell, f"mkdir -p {shlex.quote(cwd)} && cd {shlex.quote(cwd)} && {{\n{script}\n}}"]
        return _run_coroutine(backend.run_once(spec, argv, timeout_s=self.timeout_s, max_output=8000))

    def close(self, final: Path) -> None:
        try:
            if os.geteuid() == 0:  # the sandbox uid owned it while steps ran
                uid, gid = os.geteuid(), os.getegid()
                for dirpath, dirnames, filenames in os.walk(self.work):
                    for name in [".", *dirnames, *filenames]:
                        os.chown(os.path.join(dirpath, name), uid, gid, follow_symlinks=False)
            shutil.copytree(self.work, final, symlinks=True, dirs_exist_ok=True)
        finally:
            shutil.rmtree(self.scratch, ignore_errors=True)


def _run_coroutine(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run `coro` to completion from sync code, also when the caller is inside an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as e:  # re-raised in the caller's thread
            box["error"] = e

    t = threading.Thread(target=target)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


# -- the Docker backend's replay: build the image ---------------------------------------------------
FAILED_LOG = "/tmp/.envhub-replay-failed"


def docker_build_file(plan: DockerPlan, image: str, note: Callable[[str], None]) -> tuple[str, dict[int, str]]:
    """The task's Dockerfile rebuilt on envhub's sandbox image (the only images here: nothing can be
    pulled): WORKDIR/ENV/ARG/COPY/ADD as written, each RUN without its network parts and never
    stopping the build (a failed RUN is logged, by number, in FAILED_LOG). Returns the text and the
    RUN scripts by number."""
    lines = [f"FROM {image}", "USER root", f"RUN rm -f {FAILED_LOG}"]
    runs: dict[int, str] = {}
    for line in plan.unsupported:
        note(f"{line}: not supported (multi-stage or remote source)")
    for step in plan.steps:
        if step.op in ("WORKDIR", "ENV", "ARG", "COPY", "ADD", "SHELL"):
            lines.append(step.raw)
        elif step.op == "RUN":
            if not plan.debian_like:
                note(f"{step.raw}: not replayed (base image {plan.base_images[-1] if plan.base_images else '?'} "
                     "is not Debian/Ubuntu-based)")
                continue
            command = run_command(step)
            kept = []
            for part in split_run(command):
                why = needs_network(part)
                if why is None:
                    kept.append(part)
                else:
                    note(f"RUN {_clip(part)}: not replayed (needs the network: {why})")
            if kept:
                n = len(runs) + 1
                runs[n] = " && ".join(kept)
                script = runs[n].replace("\n", "\\n")
                lines.append(f"RUN ( {runs[n]} ) || echo {n} >> {FAILED_LOG}" if "\n" not in runs[n] else
                             f"RUN printf '%b' {shlex.quote(script)} > /tmp/.envhub-run-{n}.sh && "
                             f"( sh /tmp/.envhub-run-{n}.sh || echo {n} >> {FAILED_LOG} )")
        elif step.op not in ("LABEL", "EXPOSE", "MAINTAINER"):
            note(f"{step.raw}: not replayed ({step.op} has no equivalent in the sandbox)")
    return "\n".join(lines) + "\n", runs


def replay_docker(plan: DockerPlan, context: Path, state: Path, *, exclude: set[str] = frozenset(),  # type: ignore[assignment]
                  log: Callable[[str], None] = lambda _: None) -> Replay:
    """Build the task's image with the Docker engine (BuildKit, no network) on envhub's sandbox
    image, then copy its work dir out into `state`."""
    from envhub.sandbox.docker import DockerSettings

    cfg = DockerSettings()
    out = Replay(state_from=f"the work dir of the image built on {cfg.image}")

    def note(line: str) -> None:
        out.notes.append(line)
        log(line)

    text, runs = docker_build_file(plan, cfg.image, note)
    tag = f"envhub-harbor-replay:{os.getpid()}-{abs(hash(str(context))) % 10**8}"
    with tempfile.TemporaryDirectory(prefix="envhub-build-") as tmp:
        ctx = Path(tmp) / "context"
        shutil.copytree(context, ctx, symlinks=True,
                        ignore=lambda d, names: [n for n in names if Path(d) == context and n in exclude | DOCKER_FILES])
        (Path(tmp) / "Dockerfile").write_text(text)
        docker = [cfg.cli, "-H", f"unix://{cfg.socket}"]
        built = subprocess.run([*docker, "build", "--network", "none", "-t", tag, "-f", str(Path(tmp) / "Dockerfile"),
                                str(ctx)], capture_output=True, text=True, env={**os.environ, "DOCKER_BUILDKIT": "1"})
        if built.returncode != 0:
            raise EnvError(f"docker build of the task's image on {cfg.image} failed: "
                           f"{(built.stderr or built.stdout).strip()[-1500:]}")
        cid = subprocess.run([*docker, "create", tag], capture_output=True, text=True, check=True).stdout.strip()
        try:
            tar_path = Path(tmp) / "workdir.tar"
            with tar_path.open("wb") as f:  # a tar of the folder itself: entries start with its name
                subprocess.run([*docker, "cp", f"{cid}:{plan.workdir}", "-"], stdout=f, check=True)
            with tarfile.open(tar_path) as tar:
                extract_data(tar, Path(tmp) / "out")
            shutil.copytree(Path(tmp) / "out" / PurePosixPath(plan.workdir).name, state, symlinks=True,
                            dirs_exist_ok=True)
            failed = subprocess.run([*docker, "cp", f"{cid}:{FAILED_LOG}", "-"], capture_output=True)
            failed_runs: set[int] = set()
            if failed.returncode == 0:
                with tarfile.open(fileobj=io.BytesIO(failed.stdout)) as tar:
                    member = tar.extractfile(tar.getmembers()[0])
                    failed_runs = {int(x) for x in (member.read().split() if member else [])}
        finally:
            subprocess.run([*docker, "rm", "-f", cid], capture_output=True)
            subprocess.run([*docker, "rmi", "-f", tag], capture_output=True)
    for n, script in runs.items():
        if n in failed_runs:
            note(f"RUN {_clip(script)}: failed in the image build")
        else:
            out.replayed.append(f"RUN {_clip(script)}")
            log(f"replayed: RUN {_clip(script)}")
    for step in plan.steps:
        if step.op == "ENV":
            out.env.update({k: _expand(v, {"PATH": SANDBOX_PATH, **out.env}) for k, v in
                            _assignments(step.args, "ENV").items()})
    return out
