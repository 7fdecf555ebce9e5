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

**The task folder is untrusted input, and the importer runs as root** (issue 40). Every file
operation here goes through one confinement layer (`Confined`, `open_confined`, `read_tree`),
chosen over running the copies in the bubblewrap sandbox because it also covers the files the
importer writes outside any replay (tests, the oracle, rewrites) and needs no uid mapping:

- a path in the image is folded the way Docker folds it (`container_path`: `..` lexically, the
  root's parent is the root), and only then mapped into `state/`;
- a destination is created one component at a time, and every component that exists must
  *resolve* (links followed) inside the destination's root: a link laid by an earlier `COPY`, `ADD`
  or `RUN` cannot carry a later write out; the last component is opened `O_NOFOLLOW | O_EXCL`
  after any link there is removed, so nothing is ever written through a link;
- a source is read only when it resolves inside its root (the task folder, the build context),
  opened `O_NOFOLLOW` on its resolved path, and only when it is a regular file (a FIFO or a
  device is never opened); folders are walked without following links;
- a link is copied as a link, never dereferenced, and only when it resolves inside the
  destination's root (an absolute target inside the work dir becomes a relative one); any other
  is dropped with a note that says it leaves;
- tarballs are unpacked member by member through the same layer (no reliance on tarfile's
  filters, which differ between Python releases): a member that climbs out is skipped with a
  note, an absolute one lands under the destination as Docker unpacks it, links obey the rule
  above, FIFOs and devices are skipped; a damaged archive is a `TaskFormatError`.

A Dockerfile that copies nothing into the work dir leaves the workspace empty: the build context
reaches the workspace only as its `COPY`/`ADD` steps say (and minus `.dockerignore`), so files
meant for sidecars (a simulated user's persona, a desktop task's secret) never do.
"""

from __future__ import annotations

import asyncio
import fnmatch
import io
import json
import lzma
import os
import posixpath
import re
import shlex
import shutil
import stat
import subprocess
import tarfile
import tempfile
import threading
import zlib
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any

from envhub.errors import EnvError, TaskFormatError
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
    """Parse a Dockerfile; the steps kept are those of its last stage. A line whose arguments
    cannot be read (an unclosed quote) raises ValueError naming it, as `docker build` refuses it."""
    plan = DockerPlan()
    workdir = PurePosixPath("/")
    saw_workdir = False
    env: dict[str, str] = {}
    for raw in _logical_lines(text):
        word, _, rest = raw.partition(" ")
        op, rest = word.upper(), rest.strip()
        if op == "FROM":
            plan.base_images.append(rest.split()[0] if rest else "")
            plan.steps, plan.unsupported, workdir, saw_workdir = [], [], PurePosixPath("/"), False  # a new stage
            env = {}
            continue
        try:
            if op == "WORKDIR":
                workdir = container_path(_expand(rest.strip("\"'"), env), workdir)
                saw_workdir = True
            elif op in ("ENV", "ARG"):
                env.update({k: _expand(v, env) for k, v in _assignments(rest, op).items()})
            elif op in ("COPY", "ADD"):
                args = copy_args(rest)
                paths = [a for a in args if not a.startswith("--")]
                if any(a.startswith("--from") for a in args) or len(paths) < 2 or any("://" in p for p in paths):
                    plan.unsupported.append(_clip(raw))
                    continue
        except ValueError as e:
            raise ValueError(f"{_clip(' '.join(raw.split()))}: {e}") from None
        plan.steps.append(Step(op, rest, _clip(raw)))
    plan.workdir = str(workdir) if saw_workdir else "/app"
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
    """An instruction's arguments: the exec (JSON list) form or shell words (ValueError when
    neither reads)."""
    if rest.startswith("["):
        try:
            words = json.loads(rest)
        except ValueError:
            words = None
        if isinstance(words, list):
            return [str(a) for a in words]
    return shlex.split(rest)


def remap(text: str, mapping: dict[str, str]) -> str:
    """Rewrite absolute paths (`/app`, `/app/x`), never `foo/app` or `/apple`; a shell default
    (`${APP_DIR:-/app}`, `${X-/app}`, `${X:=/app}`) is a path like any other."""
    for old, new in mapping.items():
        if old in ("", "/"):
            continue
        tail = re.escape(old.rstrip("/")) + r"(?![\w.-])"
        text = re.sub(r"(\$\{\w+:?[-=?+])" + tail, lambda m: m.group(1) + new, text)
        text = re.sub(r"(?<![\w./-])" + tail, lambda m: new, text)
    return text


# -- confined file operations (see the module's docstring) ---------------------------------------------
class Refused(Exception):
    """A path the importer will not read or write; the file or step is skipped, with this as its note."""


def inside(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> bool:
    """Does `path`, every link on the way followed, resolve inside `root` (or to it)?"""
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(base.rstrip("/") + "/")


def container_path(path: str, cwd: PurePosixPath | str = "/") -> PurePosixPath:
    """A path in the image as Docker reads it: relative to `cwd`, `..` folded lexically (the
    root's parent is the root)."""
    folded = posixpath.normpath(posixpath.join(str(cwd), path or "."))
    return PurePosixPath("/" + folded.lstrip("/"))


def open_confined(root: Path, path: Path) -> IO[bytes]:
    """`path` for reading: it must resolve inside `root` and be a regular file, opened without
    following a link and without blocking on a FIFO."""
    if not inside(path, root):
        raise Refused(f"{path}: a link that leaves {root}")
    try:
        fd = os.open(os.path.realpath(path), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as e:
        raise Refused(f"{path}: cannot be read ({e.strerror})") from e
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise Refused(f"{path}: not a regular file")
    return os.fdopen(fd, "rb")


def read_tree(top: Path, root: Path, *, ignore: Callable[[str], bool] | None = None,
              skip_top: frozenset[str] | set[str] = frozenset()) -> Iterator[tuple[str, str, Any]]:
    """What is under `top` (itself inside `root`), never following a link: ("dir", rel, None),
    ("file", rel, path), ("link", rel, target), ("other", rel, path); rel is relative to `top`
    ("." for `top` itself). `ignore` gets the path relative to `root`; `skip_top` are names left
    out at `top`'s first level."""
    if not inside(top, root):
        raise Refused(f"{top}: a link that leaves {root}")
    base = Path(os.path.realpath(top))
    real_root = Path(os.path.realpath(root))
    stack = [PurePosixPath(".")]
    while stack:
        rel = stack.pop()
        path = base / rel
        try:
            st = os.lstat(path)
        except OSError:
            continue
        from_root = (path.relative_to(real_root).as_posix() if path.is_relative_to(real_root) else rel.as_posix())
        if rel != PurePosixPath(".") and ignore is not None and ignore(from_root):
            continue
        if stat.S_ISLNK(st.st_mode):
            yield "link", rel.as_posix(), os.readlink(path)
        elif stat.S_ISDIR(st.st_mode):
            yield "dir", rel.as_posix(), None
            names = sorted(os.listdir(path), reverse=True)
            stack += [rel / n for n in names if not (rel == PurePosixPath(".") and n in skip_top)]
        elif stat.S_ISREG(st.st_mode):
            yield "file", rel.as_posix(), path
        else:
            yield "other", rel.as_posix(), path


class Confined:
    """A destination folder nothing written through this object can leave (see the module's
    docstring). `image_root` is the path in the image `root` stands for (the work dir for
    `state/`): an absolute link target under it becomes a relative link; None refuses them all."""

    def __init__(self, root: Path, image_root: PurePosixPath | str | None = None) -> None:
        self.root = root
        self.image_root = PurePosixPath(image_root) if image_root is not None else None

    def _rel(self, rel: PurePosixPath | str) -> PurePosixPath:
        folded = posixpath.normpath(str(rel) or ".")
        if folded == ".." or folded.startswith("../") or folded.startswith("/"):
            raise Refused(f"{rel}: leaves {self.root}")
        return PurePosixPath(folded)

    def dir(self, rel: PurePosixPath | str) -> Path:
        """`root/rel` as a folder, made one component at a time; every one that exists must
        resolve inside `root` (a link inside is followed, as in the image)."""
        cur = self.root
        for part in self._rel(rel).parts:
            if part == ".":
                continue
            cur = cur / part
            if os.path.lexists(cur):
                if not inside(cur, self.root):
                    raise Refused(f"{rel}: {part} is a link that leaves the destination")
                if not cur.is_dir():
                    raise Refused(f"{rel}: {part} is a file, not a folder")
            else:
                os.mkdir(cur, 0o755)
        return cur

    def is_dir(self, rel: PurePosixPath | str) -> bool:
        path = self.root / self._rel(rel)
        return path.is_dir() and inside(path, self.root)

    def _room(self, rel: PurePosixPath | str) -> Path:
        """The place for a new file or link: its folder confined, whatever was there (a link, a
        file) removed, so nothing is ever written through a link; a folder there refuses."""
        r = self._rel(rel)
        if r == PurePosixPath("."):
            raise Refused(f"{rel}: is the destination itself")
        path = self.dir(r.parent) / r.name
        if os.path.islink(path) or (os.path.lexists(path) and not os.path.isdir(path)):
            os.unlink(path)
        elif os.path.lexists(path):
            raise Refused(f"{rel}: a folder is in the way")
        return path

    def write(self, rel: PurePosixPath | str, data: bytes | IO[bytes], mode: int = 0o644) -> Path:
        path = self._room(rel)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as f:
            if isinstance(data, bytes):
                f.write(data)
            else:
                shutil.copyfileobj(data, f)
            os.fchmod(f.fileno(), 0o644 | (mode & 0o111))
        return path

    def link(self, rel: PurePosixPath | str, target: str) -> Path:
        """A link at `rel`, kept only when it resolves inside `root`."""
        r = self._rel(rel)
        if not target or "\0" in target:
            raise Refused(f"{rel}: an empty link")
        if target.startswith("/"):
            where = container_path(target)
            if self.image_root is None or not where.is_relative_to(self.image_root):
                raise Refused(f"{rel} -> {target}: a link that leaves the destination, not copied")
            target = posixpath.relpath(where.relative_to(self.image_root).as_posix(), r.parent.as_posix())
        path = self._room(r)
        if not inside(os.path.join(path.parent, target), self.root):
            raise Refused(f"{rel} -> {target}: a link that leaves the destination, not copied")
        os.symlink(target, path)
        return path

    def copy(self, src: Path, src_root: Path, rel: PurePosixPath | str, note: Callable[[str], None], *,
             label: str = "", ignore: Callable[[str], bool] | None = None,
             skip_top: frozenset[str] | set[str] = frozenset()) -> None:
        """Copy `src` (a file or a folder's contents, inside `src_root`) to `rel`: files and
        folders as they are, links as links when they resolve inside; each refusal is a note."""
        for kind, sub, what in read_tree(src, src_root, ignore=ignore, skip_top=skip_top):
            dest = PurePosixPath(rel) / sub
            try:
                if kind == "dir":
                    self.dir(dest)
                elif kind == "link":
                    self.link(dest, what)
                elif kind == "file":
                    with open_confined(src_root, what) as f:
                        self.write(dest, f, os.fstat(f.fileno()).st_mode)
                else:
                    raise Refused(f"{dest}: not a file, folder or link, not copied")
            except Refused as e:
                note(f"{label}{e}")


def scrub(root: Path, note: Callable[[str], None], label: str = "") -> None:
    """Remove from `root` every link that resolves outside it and everything that is not a file,
    a folder or a link (FIFOs, sockets, devices a RUN step left), each with a note."""
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = os.lstat(path)
            rel = path.relative_to(root).as_posix()
            if stat.S_ISLNK(st.st_mode) and not inside(path, root):
                target = os.readlink(path)
                os.unlink(path)
                note(f"{label}{rel} -> {target}: a link that leaves the destination, dropped")
            elif not (stat.S_ISLNK(st.st_mode) or stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
                os.unlink(path)
                note(f"{label}{rel}: not a file, folder or link, dropped")


def dockerignore(context: Path) -> Callable[[str], bool] | None:
    """`.dockerignore`'s rules over paths relative to the context (the last matching rule
    wins; a `!rule` keeps; a folder that matches takes its contents with it)."""
    path = context / ".dockerignore"
    if not os.path.lexists(path):
        return None
    try:
        with open_confined(context, path) as f:
            text = f.read(1024 * 1024).decode("utf-8", "replace")
    except Refused:
        return None
    rules = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        keep = line.startswith("!")
        pattern = posixpath.normpath(line.lstrip("!").strip().lstrip("/") or ".")
        rules.append((keep, pattern))

    def ignored(rel: str) -> bool:
        parts = rel.split("/")
        prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
        out = False
        for keep, pattern in rules:
            if any(fnmatch.fnmatchcase(p, pattern) or fnmatch.fnmatchcase(p, pattern.replace("**/", ""))
                   for p in prefixes):
                out = not keep
        return out

    return ignored


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
    runner = _Runner(limits, step_timeout_s, plan.workdir) if plan.debian_like and any(
        s.op == "RUN" for s in plan.steps) else None
    final, state = state, runner.work if runner else state  # RUN steps need a folder the sandbox uid can reach
    try:
        _replay_steps(plan, context, Confined(state, workdir), workdir, set(exclude), runner, out, note, log)
    finally:
        if runner is not None:
            runner.close(Confined(final, workdir), note)
    scrub(final, note, "state/")
    return out


def _replay_steps(plan: DockerPlan, context: Path, state: Confined, workdir: PurePosixPath, hidden: set[str],
                  runner: _Runner | None, out: Replay, note: Callable[[str], None],
                  log: Callable[[str], None]) -> None:
    out.state_from = ("the Dockerfile's COPY/ADD into the work dir" if plan.copies else
                      "nothing: the Dockerfile copies nothing into the work dir")
    ignore = dockerignore(context)
    cwd = PurePosixPath("/")
    args: dict[str, str] = {}
    shell = ["/bin/sh", "-c"]
    for step in plan.steps:
        if step.op == "WORKDIR":
            cwd = container_path(_expand(step.args.strip("\"'"), {**args, **out.env}), cwd)
            if cwd.is_relative_to(workdir):
                try:
                    state.dir(cwd.relative_to(workdir))
                except Refused as e:
                    note(f"{step.raw}: {e}")
        elif step.op in ("ENV", "ARG"):
            for k, v in _assignments(step.args, step.op).items():
                value = _expand(v, {"PATH": SANDBOX_PATH, **args, **out.env})
                (out.env if step.op == "ENV" else args)[k] = value
            out.replayed.append(step.raw)
        elif step.op in ("COPY", "ADD"):
            if _copy_step(step, context, state, workdir, cwd, hidden, ignore, {**args, **out.env}, note):
                out.replayed.append(step.raw)
        elif step.op == "SHELL":
            try:
                shell = copy_args(step.args) or shell
            except ValueError:
                note(f"{step.raw}: not replayed (its arguments cannot be read)")
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


def _copy_step(step: Step, context: Path, state: Confined, workdir: PurePosixPath, cwd: PurePosixPath,
               hidden: set[str], ignore: Callable[[str], bool] | None, env: dict[str, str],
               note: Callable[[str], None]) -> bool:
    """One COPY/ADD as Docker reads it: sources relative to the build context (never above it, a
    link among them followed only inside it), the destination folded and mapped into the work dir."""
    paths = [_expand(a, env) for a in copy_args(step.args) if not a.startswith("--")]
    sources, dest = paths[:-1], paths[-1]
    dest_path = container_path(dest, cwd)
    if not dest_path.is_relative_to(workdir):
        note(f"{step.raw}: copies outside the work dir {workdir}, not into the workspace")
        return False
    rel = dest_path.relative_to(workdir)
    try:
        into_dir = (dest.endswith("/") or dest in (".", "./") or len(sources) > 1 or rel == PurePosixPath(".")
                    or state.is_dir(rel))
    except Refused:
        into_dir = True
    root = Path(os.path.realpath(context))
    ok = True
    for src in sources:
        name = posixpath.normpath(src.lstrip("/") or ".")
        if name == ".." or name.startswith("../"):
            note(f"{step.raw}: {src} is not in the build context")
            ok = False
            continue
        try:
            matches = sorted(root.glob(name)) if any(ch in name for ch in "*?[") else [root / name]
        except (ValueError, NotImplementedError, OSError):
            matches = []
        if not matches:
            note(f"{step.raw}: {src} is not in the build context")
            ok = False
        for m in matches:
            if not os.path.lexists(m) or not inside(m, root):
                note(f"{step.raw}: {src} is not in the build context" if not os.path.lexists(m) else
                      f"{step.raw}: {m.relative_to(root)} is a link that leaves the build context, not copied")
                ok = False
                continue
            real = Path(os.path.realpath(m))  # a source named in the step is followed, inside the context only
            from_root = real.relative_to(root).as_posix()
            why = ("a hidden part of the task" if from_root.split("/")[0] in hidden else
                   "excluded by .dockerignore" if ignore and ignore(from_root) else None)
            if from_root != "." and why:
                note(f"{step.raw}: {from_root} is {why}, not copied")
                ok = False
                continue
            try:
                if real.is_dir():
                    state.copy(real, root, rel, note, label=f"{step.raw}: ", ignore=ignore,
                               skip_top=(hidden | DOCKER_FILES) if real == root else frozenset())
                elif step.op == "ADD" and _is_tarball(real):
                    with open_confined(root, real) as f:
                        extract_data(f, state, rel, note, label=f"{step.raw}: {from_root}: ")
                else:
                    state.copy(real, root, rel / m.name if into_dir or len(matches) > 1 else rel, note,
                               label=f"{step.raw}: ")
            except Refused as e:
                note(f"{step.raw}: {e}")
                ok = False
    return ok


def _is_tarball(path: Path) -> bool:
    """A local archive ADD unpacks: a regular file (never a FIFO) tarfile can read the start of."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
        return tarfile.is_tarfile(path)
    except (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError):
        return True  # it looks like one and is damaged: extract_data says so


TAR_ERRORS = (tarfile.TarError, EOFError, zlib.error, lzma.LZMAError, ValueError, OSError)


def extract_data(fileobj: IO[bytes], dest: Confined, rel: PurePosixPath | str, note: Callable[[str], None],
                 label: str = "") -> None:
    """Unpack a tarball under `dest/rel` member by member through `dest` (see the module's
    docstring): a member that climbs out, a link that leaves, a hard link to what is not in the
    archive, a FIFO or a device is skipped with a note; a damaged archive is a TaskFormatError."""
    base = PurePosixPath(rel)
    try:
        with tarfile.open(fileobj=fileobj) as tar:
            for member in tar:
                name = posixpath.normpath(member.name.lstrip("/") or ".")
                if name == ".." or name.startswith("../"):
                    note(f"{label}member {member.name}: leaves the destination, skipped")
                    continue
                try:
                    if member.isdir():
                        dest.dir(base / name)
                    elif member.isreg():
                        if name == ".":
                            raise Refused(f"member {member.name}: has no name, skipped")
                        dest.write(base / name, tar.extractfile(member) or b"", member.mode)
                    elif member.issym():
                        dest.link(base / name, member.linkname)
                    elif member.islnk():
                        _hard_link(dest, base, name, member.linkname)
                    else:
                        raise Refused(f"member {member.name}: not a file, folder or link, skipped")
                except Refused as e:
                    note(f"{label}{e}")
    except TAR_ERRORS as e:
        raise TaskFormatError(f"{label}a damaged archive ({type(e).__name__}: {e})".replace("\n", " ")) from None


def _hard_link(dest: Confined, base: PurePosixPath, name: str, linkname: str) -> None:
    """A hard link member: a copy of the member it names, which must already be unpacked inside."""
    target = posixpath.normpath(linkname.lstrip("/") or ".")
    if target == ".." or target.startswith("../"):
        raise Refused(f"member {name} => {linkname}: a hard link that leaves the destination, skipped")
    src = dest.root / base / target
    if not os.path.lexists(src) or not inside(src, dest.root):
        raise Refused(f"member {name} => {linkname}: a hard link to nothing in the archive, skipped")
    with open_confined(dest.root, src) as f:
        dest.write(base / name, f, os.fstat(f.fileno()).st_mode)


def _run_step(step: Step, plan: DockerPlan, runner: _Runner | None, shell: list[str], cwd: PurePosixPath,
              env: dict[str, str], out: Replay, note: Callable[[str], None], log: Callable[[str], None]) -> None:
    if runner is None:
        note(f"{step.raw}: not replayed (base image {plan.base_images[-1] if plan.base_images else '?'} "
             "is not Debian/Ubuntu-based)")
        return
    try:
        command = run_command(step)
    except ValueError:
        note(f"{step.raw}: not replayed (its arguments cannot be read)")
        return
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
    if cwd.is_relative_to(workdir):
        inside = PurePosixPath(WORKSPACE) / cwd.relative_to(workdir)
    elif remap(script, {plan.workdir: WORKSPACE}) != script:
        # A step before the WORKDIR (or in another folder) that writes into the work dir by its
        # absolute path (`RUN mkdir -p /app/data && printf ... > /app/data/x.csv`, then `WORKDIR
        # /app`): it runs in a scratch folder of the sandbox's private /tmp standing for `cwd`, so
        # what it makes in the work dir lands in the workspace and the rest is left behind, as it
        # would be outside the image's work dir.
        inside = PurePosixPath("/tmp/envhub-outside-workdir") / cwd.relative_to("/")
    else:
        note(f"RUN {_clip(script)}: not replayed (it works in {cwd}, outside the work dir {workdir}; only the "
             "work dir becomes the workspace)")
        return
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

    #: Where the work dir may also be bound (besides /workspace): not /, nor a folder the sandbox
    #: mounts from the host or makes itself.
    _SYSTEM = ("/usr", "/etc", "/proc", "/dev", "/bin", "/sbin", "/lib", "/lib64", "/tmp", WORKSPACE)

    def __init__(self, limits: SandboxLimits, timeout_s: float, workdir: str | None = None) -> None:
        self.limits, self.timeout_s = limits, timeout_s
        # The image's work dir, bound over the same folder as /workspace: a program a RUN step runs
        # (a generator the Dockerfile copied in) that writes `/app/data/x.json` by its own absolute
        # path fills the workspace, as it fills the image; the RUN's own text is remapped besides.
        norm = posixpath.normpath(workdir) if workdir else "/"
        self.workdir = None if norm == "/" or any(
            norm == d or norm.startswith(d + "/") for d in self._SYSTEM) else norm
        self.scratch = Path(tempfile.mkdtemp(prefix="envhub-replay-", dir="/var/tmp"))
        self.scratch.chmod(0o755)
        self.work = self.scratch / "state"
        self.work.mkdir()

    def run(self, shell: list[str], script: str, cwd: str, env: dict[str, str]) -> Any:
        from envhub.sandbox.local import LocalBackend

        backend = LocalBackend(self.scratch / "sandboxes")
        spec = SandboxSpec(template=self.work, limits=self.limits, workdir=WORKSPACE, env={"HOME": "/tmp", **env},
                           rw_binds={str(self.work): self.workdir} if self.workdir else {})
        argv = [*shell, f"mkdir -p {shlex.quote(cwd)} && cd {shlex.quote(cwd)} && {{\n{script}\n}}"]
        return _run_coroutine(backend.run_once(spec, argv, timeout_s=self.timeout_s, max_output=8000))

    def snapshot(self, final: Confined, note: Callable[[str], None]) -> None:
        """Copy the work folder, as it stands, into a state through `final` (links that leave it,
        FIFOs and devices a step made are dropped with a note)."""
        if os.geteuid() == 0:  # the sandbox uid owned it while steps ran
            uid, gid = os.geteuid(), os.getegid()
            for dirpath, dirnames, filenames in os.walk(self.work):
                for name in [".", *dirnames, *filenames]:
                    os.chown(os.path.join(dirpath, name), uid, gid, follow_symlinks=False)
        final.copy(self.work, self.work, ".", note, label="state/")

    def close(self, final: Confined | None, note: Callable[[str], None]) -> None:
        """Snapshot the work folder into `final` (None: none), then remove the scratch folder."""
        try:
            if final is not None:
                self.snapshot(final, note)
        finally:
            shutil.rmtree(self.scratch, ignore_errors=True)


#: Runs scripts over a state folder in the local sandbox, offline (the multi-step import replays
#: the earlier steps' solutions with it).
StateRunner = _Runner


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
        ctx.mkdir()
        if plan.copies:  # the context as Docker would see it, minus what no COPY may take
            Confined(ctx).copy(context, context, ".", note, label="build context: ", ignore=dockerignore(context),
                               skip_top=set(exclude) | DOCKER_FILES)
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
            (Path(tmp) / "out").mkdir()
            with tar_path.open("rb") as f:
                extract_data(f, Confined(Path(tmp) / "out", PurePosixPath(plan.workdir).parent), ".", note,
                             label="the image's work dir: ")
            Confined(state, plan.workdir).copy(Path(tmp) / "out" / PurePosixPath(plan.workdir).name,
                                               Path(tmp) / "out", ".", note, label="state/")
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
