"""Import a Harbor / Terminal-Bench 2 task folder as an envhub `terminal` task.

Harbor's folder (`instruction.md`, `task.toml`, `environment/Dockerfile` + build context,
`solution/solve.sh`, `tests/test.sh` writing `/logs/verifier/reward.txt`) becomes:

    <tasks>/terminal/harbor/<name>/
        task.yaml        id, title, difficulty, tags and limits from task.toml; `metadata.harbor`
                         records the base image, the Dockerfile steps we cannot replay, the path map
        prompt.md        instruction.md, with the container's work dir (`/app`) read as `/workspace`
        state/           the build-context files the Dockerfile COPYs into the work dir (all of
                         `environment/` except Docker's own files when it copies nothing)
        solution/solve.sh  solve.sh, self-contained: other solution files are inlined into /tmp
        tests/.harbor/   the original tests folder (test.sh, test_*.py, data), paths remapped;
                         a dot folder, so envhub's pytest never collects Harbor's tests directly
        tests/test_harbor.py  generated: runs test.sh over a scratch copy of the final state and
                         turns the reward it writes into the check's score

Why remap paths rather than mount them: the verifier sandbox has fixed mounts and a private
`/tmp`, so the wrapper lays Harbor's world out under `/tmp/harbor/{app,tests,logs}` and the
importer rewrites the absolute paths `/app` (the work dir), `/tests`, `/logs` and `/solution` in
the files it copies. The Docker image itself is not rebuilt: `RUN`, `ENV` and friends are listed
in `metadata.harbor.unsupported_setup`, and a task that needs them fails validation (its oracle
does not score 1) instead of silently training on a broken task. Package installs and downloads
that Terminal-Bench's `test.sh` scripts do (apt-get, curl | sh, uvx pytest) are answered by
offline shims that run the verifier's own pytest.
"""

from __future__ import annotations

import base64
import json
import re
import shlex
import shutil
import tarfile
import tomllib
from dataclasses import dataclass, field
from datetime import date, datetime, time
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from envhub.errors import TaskFormatError
from envhub.tasks.model import Task, short_title

#: Where the generated wrapper lays out Harbor's filesystem inside the verifier sandbox.
VERIFY_ROOT = "/tmp/harbor"
AGENT_WORKSPACE = "/workspace"
AGENT_SOLUTION = "/tmp/solution"
DOCKER_FILES = {"Dockerfile", "docker-compose.yaml", "docker-compose.yml", ".dockerignore"}
MAX_REWRITE_BYTES = 1024 * 1024


@dataclass
class DockerPlan:
    """What we understood from a Dockerfile."""

    base_images: list[str] = field(default_factory=list)
    workdir: str = "/app"
    copies: list[tuple[list[str], str, str]] = field(default_factory=list)  # (sources, dest, instruction)
    unsupported: list[str] = field(default_factory=list)


def parse_dockerfile(text: str) -> DockerPlan:
    """Read FROM, WORKDIR, COPY and ADD; everything else is recorded as unsupported setup."""
    plan = DockerPlan()
    workdir = "/"
    saw_workdir = False
    for raw in _logical_lines(text):
        word, _, rest = raw.partition(" ")
        op = word.upper()
        rest = rest.strip()
        if op == "FROM":
            plan.base_images.append(rest.split()[0] if rest else "")
        elif op == "WORKDIR":
            workdir = str(PurePosixPath(workdir) / rest.strip("\"'"))
            saw_workdir = True
        elif op in ("COPY", "ADD"):
            args = _copy_args(rest)
            flags = [a for a in args if a.startswith("--")]
            paths = [a for a in args if not a.startswith("--")]
            if any(f.startswith("--from") for f in flags) or len(paths) < 2 or any("://" in p for p in paths):
                plan.unsupported.append(raw)
                continue
            dest = paths[-1]
            if not dest.startswith("/"):
                dest = str(PurePosixPath(workdir) / dest) + ("/" if dest.endswith("/") or dest == "." else "")
            plan.copies.append((paths[:-1], dest, op))
        elif op in ("#", "") or raw.startswith("#"):
            continue
        else:
            plan.unsupported.append(raw if len(raw) <= 300 else raw[:297] + "...")
    plan.workdir = workdir if saw_workdir else "/app"
    return plan


def _logical_lines(text: str) -> list[str]:
    out: list[str] = []
    buf = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not buf and (not stripped or stripped.startswith("#")):
            continue
        if stripped.endswith("\\"):
            buf += stripped[:-1] + " "
            continue
        out.append(" ".join((buf + stripped).split()))
        buf = ""
    if buf.strip():
        out.append(" ".join(buf.split()))
    return out


def _copy_args(rest: str) -> list[str]:
    if rest.startswith("["):
        try:
            return [str(a) for a in json.loads(rest)]
        except ValueError:
            pass
    return shlex.split(rest)


def _remap(text: str, mapping: dict[str, str]) -> str:
    """Rewrite absolute paths (`/app`, `/app/x`), never `foo/app` or `/apple`."""
    for old, new in mapping.items():
        if old in ("", "/"):
            continue
        text = re.sub(r"(?<![\w./-])" + re.escape(old.rstrip("/")) + r"(?![\w.-])", new, text)
    return text


def _rewrite_tree(root: Path, mapping: dict[str, str]) -> list[str]:
    """Rewrite text files under `root` in place; returns the ones changed."""
    changed = []
    for p in sorted(root.rglob("*")):
        if not p.is_file() or p.is_symlink() or p.stat().st_size > MAX_REWRITE_BYTES:
            continue
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        new = _remap(text, mapping)
        if new != text:
            p.write_text(new, encoding="utf-8")
            changed.append(p.relative_to(root).as_posix())
    return changed


def _slug(name: str) -> str:
    s = re.sub(r"[^a-z0-9_.-]+", "-", name.strip().lower().split("/")[-1]).strip("-.")
    return s or "task"


def _plain(value: Any) -> Any:
    """TOML values as JSON/YAML-safe plain data."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    return value


def _place(tasks_root: Path, slug: str) -> tuple[Path, str]:
    """Folder and id: under `<root>/terminal/harbor/` for a tasks root, or directly in `dest`
    when `dest` is already inside a `tasks/terminal/...` folder."""
    parts = tasks_root.resolve().parts
    for i in range(len(parts) - 1, 0, -1):
        if parts[i] == "terminal" and parts[i - 1] == "tasks":
            return tasks_root / slug, "/".join(("terminal", *parts[i + 1:], slug))
    return tasks_root / "terminal" / "harbor" / slug, f"terminal/harbor/{slug}"


def _copy_state(env_dir: Path, plan: DockerPlan, state: Path) -> tuple[str, list[str]]:
    """Lay the Dockerfile's COPY/ADD sources that land in the work dir out under `state/`."""
    notes: list[str] = []
    workdir = PurePosixPath(plan.workdir)
    usable = [c for c in plan.copies if PurePosixPath(c[1].rstrip("/") or "/").is_relative_to(workdir)]
    for sources, dest, op in plan.copies:
        if (sources, dest, op) not in usable:
            notes.append(f"{op} {' '.join(sources)} {dest}: outside the work dir {plan.workdir}, not in the workspace")
    if not plan.copies:
        for p in sorted(env_dir.iterdir()):
            if p.name not in DOCKER_FILES:
                _copy_any(p, state / p.name)
        return "all build-context files (the Dockerfile copies nothing)", notes
    for sources, dest, op in usable:
        rel_dest = PurePosixPath(dest.rstrip("/") or "/").relative_to(workdir)
        target = state / rel_dest
        for src in sources:
            matches = sorted(env_dir.glob(src)) if any(ch in src for ch in "*?[") else [env_dir / src]
            for m in matches:
                if not m.resolve().is_relative_to(env_dir.resolve()) or not m.exists():
                    notes.append(f"{op} {src}: not in the build context")
                    continue
                if m.is_dir():
                    _copy_any(m, target, skip_docker=(m.resolve() == env_dir.resolve()))
                elif op == "ADD" and tarfile.is_tarfile(m):
                    target.mkdir(parents=True, exist_ok=True)
                    with tarfile.open(m) as tar:
                        tar.extractall(target, filter="data")
                elif dest.endswith("/") or len(matches) > 1 or len(sources) > 1 or target == state:
                    _copy_any(m, target / m.name)
                else:
                    _copy_any(m, target)
    return "the Dockerfile's COPY/ADD into the work dir", notes


def _copy_any(src: Path, dest: Path, skip_docker: bool = False) -> None:
    if src.is_dir():
        ignore = (lambda d, names: [n for n in names if n in DOCKER_FILES]) if skip_docker else None
        shutil.copytree(src, dest, symlinks=True, dirs_exist_ok=True, ignore=ignore)
    else:
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)


def _solve_script(solution_dir: Path, mapping: dict[str, str]) -> str:
    """solve.sh as one self-contained script: other solution files are written to /tmp first."""
    body = _remap((solution_dir / "solve.sh").read_text(encoding="utf-8"), mapping)
    extras = sorted(p for p in solution_dir.rglob("*") if p.is_file() and p.name != "solve.sh")
    if not extras:
        return body
    lines = ["# --- added by envhub's Harbor importer: the solution's other files ---",
             f"mkdir -p {AGENT_SOLUTION}"]
    for p in extras:
        rel = p.relative_to(solution_dir).as_posix()
        data = p.read_bytes()
        try:
            data = _remap(data.decode("utf-8"), mapping).encode()
        except UnicodeDecodeError:
            pass
        target = f"{AGENT_SOLUTION}/{rel}"
        lines.append(f"mkdir -p {shlex.quote(str(PurePosixPath(target).parent))}")
        lines.append(f"echo {base64.b64encode(data).decode()} | base64 -d > {shlex.quote(target)}")
        if p.stat().st_mode & 0o111:
            lines.append(f"chmod +x {shlex.quote(target)}")
    lines.append("# --- original solve.sh ---")
    shebang = ""
    if body.startswith("#!"):
        shebang, _, body = body.partition("\n")
        shebang += "\n"
    return shebang + "\n".join(lines) + "\n" + body


WRAPPER = '''"""Generated by envhub's Harbor importer (envhub/tasks/harbor.py); do not edit by hand.

Runs the task's original Harbor verifier, `.harbor/test.sh`, over a writable scratch copy of the
final state laid out as Harbor expects (paths were rewritten at import: work dir -> {root}/app,
/tests -> {root}/tests, /logs -> {root}/logs), and scores the reward it writes to
`{root}/logs/verifier/reward.txt` (or `reward.json`). A verifier that writes no reward is a
verifier error, never a silent 0.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from verifiers import check, fs_state

ROOT = Path("{root}")
HARBOR_TESTS = Path(__file__).parent / ".harbor"
TIMEOUT_S = {timeout}
EXTRA_ENV = {extra_env}

SHIMS = {{
    # Package managers and downloads: the verifier is offline; the runtime is fixed.
    "apt-get": "echo 'envhub: apt-get skipped (offline verifier)' >&2; exit 0",
    "apt": "echo 'envhub: apt skipped (offline verifier)' >&2; exit 0",
    "pip": "echo 'envhub: pip skipped (offline verifier)' >&2; exit 0",
    "pip3": "echo 'envhub: pip3 skipped (offline verifier)' >&2; exit 0",
    "curl": "echo 'envhub: curl skipped (offline verifier)' >&2; exit 0",
    "wget": "echo 'envhub: wget skipped (offline verifier)' >&2; exit 0",
    # Test runners: the verifier's own pytest; plugin-only options are dropped.
    "pytest": 'exec "$(dirname "$0")/_pytest" "$@"',
    "uvx": 'while [ $# -gt 0 ] && [ "$1" != pytest ]; do shift; done; [ $# -gt 0 ] && shift; '
           'exec "$(dirname "$0")/_pytest" "$@"',
    "uv": 'case "$1" in run) shift; while [ $# -gt 0 ] && [ "$1" != pytest ]; do shift; done; '
          '[ $# -gt 0 ] && shift; exec "$(dirname "$0")/_pytest" "$@";; '
          '*) echo "envhub: uv $1 skipped (offline verifier)" >&2; exit 0;; esac',
    "_pytest": 'args=(); while [ $# -gt 0 ]; do case "$1" in --ctrf|--json-report-file) shift 2;; '
               '--ctrf=*|--json-report*|--junitxml*) shift;; *) args+=("$1"); shift;; esac; done; '
               'exec /usr/bin/python3 -m pytest -p no:cacheprovider "${{args[@]}}"',
}}


def _layout() -> dict[str, str]:
    shutil.rmtree(ROOT, ignore_errors=True)
    ws = fs_state.scratch_copy()
    ROOT.mkdir(parents=True)
    shutil.move(str(ws), ROOT / "app")
    shutil.copytree(HARBOR_TESTS, ROOT / "tests")
    (ROOT / "logs" / "verifier").mkdir(parents=True)
    home = ROOT / "home"
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".local" / "bin" / "env").write_text("")  # `source $HOME/.local/bin/env` after a uv install
    shims = ROOT / "shims"
    shims.mkdir()
    for name, body in SHIMS.items():
        (shims / name).write_text("#!/bin/bash\\n" + body + "\\n")
        (shims / name).chmod(0o755)
    return {{"PATH": f"{{shims}}:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "TZ": "UTC", "PYTHONPATH": os.environ.get("PYTHONPATH", ""), "PYTHONDONTWRITEBYTECODE": "1",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "TEST_DIR": str(ROOT / "tests"), **EXTRA_ENV}}


def _reward() -> float:
    txt, js = ROOT / "logs/verifier/reward.txt", ROOT / "logs/verifier/reward.json"
    if txt.is_file() and txt.read_text().strip():
        return float(txt.read_text().split()[0])
    if js.is_file():
        data = json.loads(js.read_text())
        if isinstance(data, dict) and "reward" in data:
            return float(data["reward"])
        values = [float(v) for v in (data.values() if isinstance(data, dict) else [data])]
        return sum(values) / len(values)
    raise RuntimeError("test.sh wrote no reward file")


@pytest.fixture(scope="module")
def harbor_run() -> tuple[float, str]:
    env = _layout()
    res = subprocess.run(["bash", str(ROOT / "tests" / "test.sh")], cwd=ROOT / "app", env=env,
                         capture_output=True, text=True, errors="replace", timeout=TIMEOUT_S,
                         stdin=subprocess.DEVNULL)
    log = (res.stdout + res.stderr)[-3000:]
    try:
        reward = _reward()
    except (RuntimeError, ValueError) as e:  # a broken verifier, not the agent's failure
        raise RuntimeError(f"{{e}}; test.sh exited {{res.returncode}}; output tail:\\n{{log}}") from e
    return reward, log


@check("harbor-reward", kind="soft")
def test_harbor_reward(harbor_run, request):
    reward, log = harbor_run
    request.node.user_properties.append(("score", max(0.0, min(1.0, reward))))
    assert reward >= 1.0, f"Harbor reward {{reward}}; test.sh output tail:\\n{{log}}"
'''


def import_harbor(src: Path, dest_root: Path, *, overwrite: bool = True) -> Path:
    """Convert the Harbor task folder `src` into a terminal task below `dest_root`; returns its folder.

    `dest_root` is a tasks root (the task goes to `<root>/terminal/harbor/<name>`) or a folder
    inside `tasks/terminal/` (the task goes directly in it).
    """
    src = src.resolve()
    for required in ("instruction.md", "task.toml", "tests/test.sh"):
        if not (src / required).is_file():
            raise TaskFormatError(f"{src / required}: missing (not a Harbor task folder)", file=str(src / required))
    try:
        toml = tomllib.loads((src / "task.toml").read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise TaskFormatError(f"{src / 'task.toml'}: not valid TOML: {e}", file=str(src / "task.toml")) from e

    env_dir = src / "environment"
    dockerfile = env_dir / "Dockerfile"
    plan = parse_dockerfile(dockerfile.read_text(encoding="utf-8")) if dockerfile.is_file() else DockerPlan()
    if not dockerfile.is_file():
        plan.unsupported.append("no environment/Dockerfile" + (
            " (docker-compose environments are not replayed)" if any(env_dir.glob("docker-compose.y*ml")) else ""))

    task_meta = toml.get("task", {}) if isinstance(toml.get("task"), dict) else {}
    meta = toml.get("metadata", {}) if isinstance(toml.get("metadata"), dict) else {}
    slug = _slug(str(task_meta.get("name") or src.name))
    folder, task_id = _place(dest_root, slug)
    if folder.exists():
        if not overwrite:
            raise FileExistsError(f"{folder} exists")
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    try:
        _write_task(src, folder, task_id, toml, task_meta, meta, plan, env_dir)
        Task.load(folder)  # the result must load: fail here, not at serve time
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder


def _write_task(src: Path, folder: Path, task_id: str, toml: dict, task_meta: dict, meta: dict,
                plan: DockerPlan, env_dir: Path) -> None:
    agent_map = {plan.workdir: AGENT_WORKSPACE, "/solution": AGENT_SOLUTION}
    verify_map = {plan.workdir: f"{VERIFY_ROOT}/app", "/tests": f"{VERIFY_ROOT}/tests",
                  "/logs": f"{VERIFY_ROOT}/logs"}

    state = folder / "state"
    state.mkdir()
    state_source, notes = (_copy_state(env_dir, plan, state) if env_dir.is_dir()
                           else ("nothing (no environment/ folder)", []))
    state_rewritten = _rewrite_tree(state, agent_map)

    instruction = (src / "instruction.md").read_text(encoding="utf-8")
    (folder / "prompt.md").write_text(_remap(instruction, agent_map).strip() + "\n", encoding="utf-8")

    tests = folder / "tests"
    shutil.copytree(src / "tests", tests / ".harbor", ignore=shutil.ignore_patterns("__pycache__"))
    _rewrite_tree(tests / ".harbor", verify_map)
    verifier = toml.get("verifier", {}) if isinstance(toml.get("verifier"), dict) else {}
    verifier_timeout = float(verifier.get("timeout_sec", 600))
    extra_env = {str(k): _remap(str(v), verify_map) for k, v in (verifier.get("env") or {}).items()}
    (tests / "test_harbor.py").write_text(WRAPPER.format(
        root=VERIFY_ROOT, timeout=min(verifier_timeout, 3000), extra_env=repr(extra_env)), encoding="utf-8")

    if (src / "solution" / "solve.sh").is_file():
        (folder / "solution").mkdir()
        (folder / "solution" / "solve.sh").write_text(_solve_script(src / "solution", agent_map), encoding="utf-8")
    else:
        notes.append("no solution/solve.sh: the task has no oracle and cannot be validated")

    agent = toml.get("agent", {}) if isinstance(toml.get("agent"), dict) else {}
    environment = toml.get("environment", {}) if isinstance(toml.get("environment"), dict) else {}
    episode = min(float(agent.get("timeout_sec", 1800)), 86_400)
    difficulty = str(meta.get("difficulty", "medium")).lower()
    tags = [str(t) for t in meta.get("tags", []) if isinstance(t, str | int)]
    if isinstance(meta.get("category"), str):
        tags.append(meta["category"])
    title = str(task_meta.get("description") or "").strip() or _first_line(instruction) or task_id
    config = {
        "id": task_id,
        "family": "terminal",
        "title": short_title(title),
        "difficulty": difficulty if difficulty in ("easy", "medium", "hard") else "medium",
        "tags": sorted({*tags, "harbor"}),
        "limits": {
            "step_timeout_s": min(episode, 600.0),
            "episode_timeout_s": episode,
            "verify_timeout_s": min(verifier_timeout + 30, 3600.0),
            "memory_mb": max(64, min(int(environment.get("memory_mb", 2048)), 65_536)),
        },
        "metadata": {"harbor": {
            "source": src.name,
            "base_images": plan.base_images,
            "workdir": plan.workdir,
            "state_from": state_source,
            "unsupported_setup": plan.unsupported + notes,
            "path_map": {"agent": agent_map, "verifier": verify_map},
            "state_files_rewritten": state_rewritten,
            "allow_internet": bool(environment.get("allow_internet", True)),
            "environment": _plain({k: v for k, v in environment.items() if k != "mcp_servers"}),
            "task_metadata": _plain(meta),
        }},
    }
    (folder / "task.yaml").write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line
    return ""
