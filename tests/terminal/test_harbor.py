"""The Harbor importer: format mapping, and an imported sample task judged end to end."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
import yaml

from envhub.errors import TaskFormatError
from envhub.server.hub import Hub
from envhub.spec import ResetRequest, StepRequest
from envhub.tasks.harbor import _remap, import_harbor, parse_dockerfile
from envhub.tasks.model import Task
from environments.terminal.env import TerminalFamily

SAMPLE = Path(__file__).parent / "fixtures" / "harbor" / "word-stats"


@pytest.fixture()
def tasks_root(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = Path(tmp_path_factory.mktemp("harbor-tasks")) / "tasks"
    root.mkdir()
    return root


@pytest.fixture()
def imported(tasks_root: Path) -> Task:
    return Task.load(import_harbor(SAMPLE, tasks_root))


def test_layout_and_metadata(imported: Task, tasks_root: Path) -> None:
    assert imported.id == "terminal/harbor/word-stats"
    assert imported.path == (tasks_root / "terminal" / "harbor" / "word-stats").resolve()
    cfg = imported.config
    assert cfg.family == "terminal" and cfg.difficulty == "easy"
    assert {"harbor", "text", "json", "data-processing"} <= set(cfg.tags)
    assert cfg.limits.episode_timeout_s == 600 and cfg.limits.verify_timeout_s == 150 and cfg.limits.memory_mb == 1024
    harbor = cfg.metadata["harbor"]
    assert harbor["base_images"] == ["python:3.12-slim-bookworm"]
    assert harbor["workdir"] == "/app"
    assert any(s.startswith("RUN apt-get update") for s in harbor["unsupported_setup"])
    assert "ENV PYTHONUNBUFFERED=1" in harbor["unsupported_setup"]
    assert harbor["task_metadata"]["created"] == "2025-01-15"
    # state = what the Dockerfile copies into the work dir, nothing else
    state = sorted(p.relative_to(imported.state_dir).as_posix() for p in imported.state_dir.rglob("*"))
    assert state == ["README.txt", "data", "data/ch1.txt", "data/ch2.txt", "data/ch3.txt"]
    assert (imported.state_dir / "README.txt").read_text() == "Chapters live in /workspace/data.\n"
    # the prompt speaks of the agent's workspace
    assert "/workspace/data/" in imported.prompt and "/app" not in imported.prompt
    # Harbor's own tests are kept, out of pytest's collection, with remapped paths
    kept = imported.tests_dir / ".harbor"
    assert sorted(p.name for p in kept.iterdir()) == ["expected.json", "test.sh", "test_outputs.py"]
    assert "/tmp/harbor/logs/verifier/reward.txt" in (kept / "test.sh").read_text()
    assert 'Path("/tmp/harbor/app/stats.json")' in (kept / "test_outputs.py").read_text()
    assert sorted(p.name for p in imported.tests_dir.glob("test_*.py")) == ["test_harbor.py"]
    # the oracle is self-contained: the helper script is inlined
    solve = (imported.solution_dir / "solve.sh").read_text()
    assert solve.startswith("#!/bin/bash\n") and "/tmp/solution/count.py" in solve and "/solution/" not in \
        solve.replace("/tmp/solution/", "")


def test_remap_only_touches_absolute_paths() -> None:
    m = {"/app": "/workspace"}
    assert _remap("cd /app && ls /app/data", m) == "cd /workspace && ls /workspace/data"
    assert _remap("/apple /app.d foo/app ./app 'a/app'", m) == "/apple /app.d foo/app ./app 'a/app'"
    assert _remap('open("/app")', m) == 'open("/workspace")'


def test_dockerfile_parsing() -> None:
    plan = parse_dockerfile(
        "FROM ubuntu:24.04 AS base\n# comment\nRUN echo a \\\n  && echo b\nWORKDIR /srv\nWORKDIR web\n"
        "COPY [\"a b.txt\", \"./\"]\nCOPY --from=base /x /y\nADD https://example.com/f /srv/web/f\nUSER nobody\n")
    assert plan.base_images == ["ubuntu:24.04"]
    assert plan.workdir == "/srv/web"
    assert plan.copies == [(["a b.txt"], "/srv/web/./", "COPY")] or plan.copies == [(["a b.txt"], "/srv/web/", "COPY")]
    assert plan.unsupported == ["RUN echo a && echo b", "COPY --from=base /x /y",
                                "ADD https://example.com/f /srv/web/f", "USER nobody"]


def test_missing_files_are_clear_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    shutil.copytree(SAMPLE, bad)
    (bad / "tests" / "test.sh").unlink()
    with pytest.raises(TaskFormatError, match="tests/test.sh: missing"):
        import_harbor(bad, tmp_path / "out")
    assert not (tmp_path / "out" / "terminal" / "harbor" / "word-stats").exists()


def test_import_into_a_terminal_folder_names_the_id(tmp_path: Path) -> None:
    dest = tmp_path / "tasks" / "terminal" / "imported"
    task = Task.load(import_harbor(SAMPLE, dest))
    assert task.id == "terminal/imported/word-stats"


@pytest_asyncio.fixture(loop_scope="module")
async def harbor_hub(make_settings, tasks_root: Path, imported: Task) -> AsyncIterator[Hub]:
    h = Hub.build(make_settings(tasks_root))
    await h.start()
    yield h
    await h.stop()


@pytest.mark.asyncio(loop_scope="module")
async def test_imported_oracle_passes_and_noop_fails(harbor_hub: Hub, imported: Task) -> None:
    m = harbor_hub.manager
    oracle = await m.create(ResetRequest(env="terminal", task_id=imported.id))
    for call in TerminalFamily().oracle_actions(imported):
        res = await m.step(oracle.session_id, StepRequest(action=call))
        assert not res.observation.is_error, res.observation.text[-2000:]
    v = await m.verify(oracle.session_id)
    assert v.failure_class == "ok", v.detail
    assert v.reward == 1.0 and v.passed, v.checks
    await m.close(oracle.session_id)

    noop = await m.create(ResetRequest(env="terminal", task_id=imported.id))
    v = await m.verify(noop.session_id)
    assert v.failure_class == "ok", v.detail
    assert v.reward == 0.0 and not v.passed, v.checks
    await m.close(noop.session_id)


@pytest.mark.asyncio(loop_scope="module")
async def test_a_verifier_that_writes_no_reward_is_a_verifier_error(harbor_hub: Hub, imported: Task) -> None:
    (imported.tests_dir / ".harbor" / "test.sh").write_text("#!/bin/bash\nexit 0\n")
    m = harbor_hub.manager
    s = await m.create(ResetRequest(env="terminal", task_id=imported.id))
    v = await m.verify(s.session_id)
    assert v.failure_class == "verifier_error", (v.failure_class, v.detail)
    assert "no reward file" in v.detail
    await m.close(s.session_id)


def test_task_yaml_is_plain_yaml(imported: Task) -> None:
    raw = yaml.safe_load((imported.path / "task.yaml").read_text())
    assert raw["metadata"]["harbor"]["path_map"]["verifier"]["/tests"] == "/tmp/harbor/tests"


def _harbor_task(root: Path, dockerfile: str, files: dict[str, str]) -> Path:
    shutil.copytree(SAMPLE, root)
    shutil.rmtree(root / "environment")
    (root / "environment").mkdir()
    (root / "environment" / "Dockerfile").write_text(dockerfile)
    for rel, text in files.items():
        (root / "environment" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "environment" / rel).write_text(text)
    return root


def _state(task_dir: Path) -> list[str]:
    state = task_dir / "state"
    return sorted(p.relative_to(state).as_posix() for p in state.rglob("*") if p.is_file())


def test_copy_whole_context_and_files_outside_the_workdir(tmp_path: Path) -> None:
    src = _harbor_task(tmp_path / "src", "FROM debian\nWORKDIR /srv/app\nCOPY . .\nCOPY nginx.conf /etc/nginx/\n",
                       {"main.py": "print(1)\n", "pkg/mod.py": "x = '/srv/app/data'\n", "nginx.conf": "x\n",
                        ".dockerignore": "*.pyc\n"})
    out = import_harbor(src, tmp_path / "tasks")
    assert _state(out) == ["main.py", "nginx.conf", "pkg/mod.py"]
    assert (out / "state" / "pkg" / "mod.py").read_text() == "x = '/workspace/data'\n"
    notes = yaml.safe_load((out / "task.yaml").read_text())["metadata"]["harbor"]["unsupported_setup"]
    assert any("/etc/nginx/" in n and "outside the work dir" in n for n in notes)


def test_no_copy_takes_the_whole_build_context(tmp_path: Path) -> None:
    src = _harbor_task(tmp_path / "src", "FROM debian\nWORKDIR /app\nRUN true\n", {"input.csv": "a,b\n"})
    out = import_harbor(src, tmp_path / "tasks")
    assert _state(out) == ["input.csv"]
    assert "copies nothing" in yaml.safe_load((out / "task.yaml").read_text())["metadata"]["harbor"]["state_from"]


def test_add_extracts_local_tarballs(tmp_path: Path) -> None:
    import io
    import tarfile

    src = _harbor_task(tmp_path / "src", "FROM debian\nWORKDIR /app\nADD bundle.tar.gz /app/vendor/\n", {})
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        data = b"hello\n"
        info = tarfile.TarInfo("lib/hello.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    (src / "environment" / "bundle.tar.gz").write_bytes(buf.getvalue())
    out = import_harbor(src, tmp_path / "tasks")
    assert _state(out) == ["vendor/lib/hello.txt"]
