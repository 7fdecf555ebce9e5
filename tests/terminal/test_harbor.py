"""The Harbor importer: format mapping, and an imported sample task judged end to end."""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import AsyncIterator
from datetime import date
from pathlib import Path

import pytest
import pytest_asyncio
import yaml

from envhub.core.hub import Hub
from envhub.errors import AgentError, TaskFormatError
from envhub.spec import ResetRequest, StepRequest, VerifyResult
from envhub.tasks.model import Task
from envhub.validate.core import Validator
from environments.terminal import TerminalFamily
from environments.terminal.dockerfile import needs_network, split_run
from environments.terminal.harbor import _remap, import_harbor, parse_dockerfile
from tests.conftest import running_hub

SAMPLE = Path(__file__).parent / "fixtures" / "harbor" / "word-stats"
#: The sample's task.toml sets a field the sandbox does not honour: its warning ends the notes.
STORAGE_WARNING = "environment.storage_mb = 10240: not honoured (the sandbox bounds each file's size, not the disk)"


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
    assert any(s.startswith("RUN apt-get update: not replayed (needs the network") for s in harbor["unsupported_setup"])
    assert harbor["env"] == {"PYTHONUNBUFFERED": "1"} and "ENV PYTHONUNBUFFERED=1" in harbor["replayed_setup"]
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
        "FROM golang AS build\nRUN go build\n"
        "FROM ubuntu:24.04 AS base\n# comment\nRUN echo a \\\n  && echo b\nWORKDIR /srv\nWORKDIR web\n"
        "COPY [\"a b.txt\", \"./\"]\nCOPY --from=base /x /y\nADD https://example.com/f /srv/web/f\nUSER nobody\n"
        "RUN <<EOF\nset -e\necho x > y\nEOF\n")
    assert plan.base_images == ["golang", "ubuntu:24.04"] and plan.debian_like
    assert plan.workdir == "/srv/web"
    assert [(s.op, s.args) for s in plan.steps] == [
        ("RUN", "echo a && echo b"), ("WORKDIR", "/srv"), ("WORKDIR", "web"), ("COPY", '["a b.txt", "./"]'),
        ("USER", "nobody"), ("RUN", "<<EOF\nset -e\necho x > y\nEOF")]  # the last stage only
    assert plan.unsupported == ["COPY --from=base /x /y", "ADD https://example.com/f /srv/web/f"]
    assert not parse_dockerfile("FROM alpine:3.20\nRUN true\n").debian_like


def test_run_commands_split_and_network_parts() -> None:
    assert split_run("apt-get update && apt-get install -y jq; go mod init x && echo 'a && b'") == [
        "apt-get update", "apt-get install -y jq", "go mod init x", "echo 'a && b'"]
    assert split_run("if [ -f x ]; then make; fi") == ["if [ -f x ]; then make; fi"]  # compound: one part
    assert split_run("cat > f <<EOF\na; b\nEOF") == ["cat > f <<EOF\na; b\nEOF"]
    parts = ["DEBIAN_FRONTEND=noninteractive apt-get install -y jq", "pip install -r r.txt", "python3 -m pip install x",
             "npm ci", "go mod download", "git clone https://x/y", "bash -c \"$(curl -fsSL https://x)\"",
             "go mod init x", "npm run build", "git init", "make", "rm -rf /var/lib/apt/lists/*"]
    assert [needs_network(p) for p in parts] == [
        "apt-get", "pip", "python3", "npm ci", "go mod", "git clone", "a download", None, None, None, None,
        "package cache clean-up"]


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
    async with running_hub(make_settings(tasks_root)) as h:
        yield h


async def _oracle_and_nothing(hub: Hub, task: Task) -> tuple[VerifyResult, VerifyResult]:
    """The verdicts on the task's oracle (each of its steps asserted clean) and on doing nothing."""
    m = hub.manager
    s = await m.create(ResetRequest(env="terminal", task_id=task.id))
    for call in TerminalFamily().oracle_actions(task):
        res = await m.step(s.session_id, StepRequest(action=call))
        assert not res.observation.is_error, (task.id, res.observation.text[-2000:])
    oracle = await m.verify(s.session_id)
    await m.close(s.session_id)
    noop = await m.create(ResetRequest(env="terminal", task_id=task.id))
    nothing = await m.verify(noop.session_id)
    await m.close(noop.session_id)
    return oracle, nothing


@pytest.mark.asyncio(loop_scope="module")
async def test_imported_oracle_passes_and_noop_fails(harbor_hub: Hub, imported: Task) -> None:
    oracle, nothing = await _oracle_and_nothing(harbor_hub, imported)
    assert oracle.failure_class == "ok", oracle.detail
    assert oracle.reward == 1.0 and oracle.passed, oracle.checks
    assert nothing.failure_class == "ok", nothing.detail
    assert nothing.reward == 0.0 and not nothing.passed, nothing.checks


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


def test_no_copy_takes_nothing_from_the_build_context(tmp_path: Path) -> None:
    """Issue 40: the build context reaches the workspace only as the Dockerfile copies it (files
    there may be a sidecar's secrets)."""
    src = _harbor_task(tmp_path / "src", "FROM debian\nWORKDIR /app\nRUN true\n", {"input.csv": "a,b\n"})
    out = import_harbor(src, tmp_path / "tasks")
    assert _state(out) == []
    assert "copies nothing" in yaml.safe_load((out / "task.yaml").read_text())["metadata"]["harbor"]["state_from"]


def _tarball_task(root: Path, members: dict[str, bytes]) -> Path:
    import io
    import tarfile

    src = _harbor_task(root, "FROM debian\nWORKDIR /app\nADD bundle.tar.gz /app/vendor/\n", {})
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    (src / "environment" / "bundle.tar.gz").write_bytes(buf.getvalue())
    return src


def test_add_extracts_local_tarballs(tmp_path: Path) -> None:
    out = import_harbor(_tarball_task(tmp_path / "src", {"lib/hello.txt": b"hello\n"}), tmp_path / "tasks")
    assert _state(out) == ["vendor/lib/hello.txt"]


def test_tarballs_are_extracted_safely_without_the_data_filter(tmp_path: Path, monkeypatch) -> None:
    """Debian 12's Python (3.11.2) has no tarfile.data_filter: the same rules still hold."""
    import tarfile

    monkeypatch.delattr(tarfile, "data_filter", raising=False)  # where it exists
    out = import_harbor(_tarball_task(tmp_path / "src", {"lib/hello.txt": b"hello\n"}), tmp_path / "tasks")
    assert _state(out) == ["vendor/lib/hello.txt"]
    evil = _tarball_task(tmp_path / "evil", {"../../../escaped.txt": b"x", "kept.txt": b"k"})
    out = import_harbor(evil, tmp_path / "tasks2")
    assert any("member ../../../escaped.txt: leaves the destination, skipped" in n for n in _notes(out))
    assert _state(out) == ["vendor/kept.txt"]
    assert not list(tmp_path.rglob("escaped.txt"))


# -- the corpus: Harbor and Terminal-Bench tasks written here, imported and judged for real ------------
FIXTURES = Path(__file__).parent / "fixtures"
CORPUS = {  # task → what it exercises
    "harbor/go-wordfreq": "Go; RUN creates go.mod and the source folders",
    "harbor/c-make-checksum": "C; RUN builds with make",
    "harbor/node-slugify": "Node; a RUN whose npm ci part needs the network",
    "harbor/service-sum": "a service the tests start; CMD not replayed",
    "terminal-bench/csv-totals": "Python; Terminal-Bench 1 layout",
    "terminal-bench/sqlite-orders": "a database the RUN step builds; Terminal-Bench 1 layout",
}


def corpus_today() -> list[str]:
    """CI judges a day-seeded sample of 3 (its time budget); ENVHUB_HARBOR_CORPUS=all judges them all."""
    if os.environ.get("ENVHUB_HARBOR_CORPUS") == "all":
        return list(CORPUS)
    return sorted(random.Random(date.today().toordinal()).sample(sorted(CORPUS), 3))


def _notes(folder: Path) -> list[str]:
    return yaml.safe_load((folder / "task.yaml").read_text())["metadata"]["harbor"]["unsupported_setup"]


def test_run_steps_are_replayed_into_the_state(tasks_root: Path) -> None:
    """The issue's failure: `go.mod file not found` because the image's RUN made it."""
    printed: list[str] = []
    out = import_harbor(FIXTURES / "harbor" / "go-wordfreq", tasks_root, log=printed.append)
    assert _state(out) == ["cmd/wordfreq/main.go", "go.mod", "internal/freq/freq.go", "sample.txt"]
    assert (out / "state" / "go.mod").read_text().startswith("module example.com/wordfreq\n")
    assert (out / "state" / "sample.txt").read_text() == "The cat saw the dog.\nthe END, the end\n"
    harbor = yaml.safe_load((out / "task.yaml").read_text())["metadata"]["harbor"]
    assert "RUN go mod init example.com/wordfreq && mkdir -p internal/freq cmd/wordfreq" in harbor["replayed_setup"]
    assert harbor["env"] == {"CGO_ENABLED": "0"}
    # each step not replayed is printed, with why
    assert printed[:3] == [
        "RUN apt-get update: not replayed (needs the network: apt-get)",
        "RUN apt-get install -y --no-install-recommends jq: not replayed (needs the network: apt-get); "
        "on this host: jq installed",
        "RUN rm -rf /var/lib/apt/lists/*: not replayed (nothing to replay: package cache clean-up)"]
    assert harbor["unsupported_setup"] == printed[:3]
    assert harbor["environment"]["memory"] == "2G"
    assert Task.load(out).config.limits.memory_mb == 2048 and Task.load(out).config.limits.episode_timeout_s == 900
    assert "export CGO_ENABLED=0" in (out / "solution" / "solve.sh").read_text()
    assert "'CGO_ENABLED': '0'" in (out / "tests" / "test_harbor.py").read_text()


def test_a_failing_or_unreplayable_step_is_reported(tmp_path: Path) -> None:
    src = _harbor_task(tmp_path / "src", "FROM ubuntu:24.04\nWORKDIR /app\nRUN mkdir made && echo hi > made/x && exit 3\n"
                       "RUN touch /usr/forbidden\nUSER nobody\nRUN echo after > after.txt\n", {})
    out = import_harbor(src, tmp_path / "tasks")
    notes = _notes(out)
    assert notes[0].startswith("RUN mkdir made && echo hi > made/x && exit 3: failed in the replay (exit 3)")
    assert notes[1].startswith("RUN touch /usr/forbidden: failed in the replay (exit 1)") and "Read-only" in notes[1]
    assert notes[2] == "USER nobody: not replayed (USER has no equivalent in the sandbox)"
    assert _state(out) == ["after.txt", "made/x"]  # later steps still ran; what a failed step made is kept


def test_a_step_before_the_workdir_that_writes_into_it_is_replayed(tmp_path: Path) -> None:
    """`RUN mkdir -p /app/data && printf ... > /app/data/x.csv` before `WORKDIR /app` (common in public
    tasks) makes the agent's data: it is replayed, what it writes elsewhere is left behind, and a step
    outside the work dir that never names it is still reported, not run."""
    src = _harbor_task(tmp_path / "src", "FROM debian:12\nRUN mkdir -p /app/data && printf 'a,b\\n1,2\\n' > "
                       "/app/data/x.csv && touch stray.txt\nRUN echo hi > elsewhere.txt\nWORKDIR /app\n"
                       "RUN cp data/x.csv copy.csv\n", {})
    out = import_harbor(src, tmp_path / "tasks")
    assert _state(out) == ["copy.csv", "data/x.csv"]
    assert (out / "state" / "data" / "x.csv").read_text() == "a,b\n1,2\n"
    assert _notes(out)[0] == ("RUN echo hi > elsewhere.txt: not replayed (it works in /, outside the work dir /app; "
                              "only the work dir becomes the workspace)")


def test_a_program_a_step_runs_writes_into_the_work_dir_by_its_own_paths(tmp_path: Path) -> None:
    """A generator the Dockerfile copies in and runs writes `/app/data/expected.json` by the absolute
    path in its own text (the RUN line only names the script): that file is the agent's data."""
    src = _harbor_task(tmp_path / "src", "FROM python:3.11-slim\nWORKDIR /app\nCOPY gen.py /app/gen.py\n"
                       "RUN python3 /app/gen.py && rm -f /app/gen.py\n",
                       {"gen.py": "import os\nos.makedirs('/app/data', exist_ok=True)\n"
                                  "open('/app/data/expected.json', 'w').write('{}')\n"})
    out = import_harbor(src, tmp_path / "tasks")
    assert _state(out) == ["data/expected.json"]
    assert not any("failed" in n for n in _notes(out))


def test_a_non_debian_image_is_not_replayed(tmp_path: Path) -> None:
    src = _harbor_task(tmp_path / "src", "FROM alpine:3.20\nWORKDIR /app\nCOPY a.txt .\nRUN echo x > y\n",
                       {"a.txt": "a\n"})
    out = import_harbor(src, tmp_path / "tasks")
    assert _notes(out) == ["RUN echo x > y: not replayed (base image alpine:3.20 is not Debian/Ubuntu-based)",
                           STORAGE_WARNING]
    assert _state(out) == ["a.txt"]


def test_terminal_bench_layout(tasks_root: Path) -> None:
    task = Task.load(import_harbor(FIXTURES / "terminal-bench" / "csv-totals", tasks_root))
    assert task.id == "terminal/harbor/csv-totals"
    harbor = task.config.metadata["harbor"]
    assert harbor["layout"] == "terminal-bench" and harbor["base_images"] == [
        "ghcr.io/laude-institute/t-bench/python-3-13:20250620"]
    assert task.config.limits.episode_timeout_s == 360 and task.config.limits.verify_timeout_s == 90
    assert {"csv", "python", "data-processing", "harbor"} <= set(task.config.tags) and task.config.difficulty == "easy"
    assert task.prompt.startswith("/workspace/sales.csv lists sales")
    # the state is what the Dockerfile copies; the hidden parts stay hidden
    assert _state(task.path) == ["sales.csv"]
    kept = task.tests_dir / ".harbor"
    assert sorted(p.name for p in kept.iterdir()) == ["run-tests.sh", "test.sh", "test_outputs.py"]
    assert "bash /tmp/harbor/tests/run-tests.sh" in (kept / "test.sh").read_text()
    assert (task.solution_dir / "solve.sh").read_text().startswith("#!/bin/bash\npython3 - <<'PY'")


def test_terminal_bench_layout_missing_parts(tmp_path: Path) -> None:
    bad = tmp_path / "csv-totals"
    shutil.copytree(FIXTURES / "terminal-bench" / "csv-totals", bad)
    shutil.rmtree(bad / "tests")
    with pytest.raises(TaskFormatError, match="tests: missing \\(not a Terminal-Bench task folder\\)"):
        import_harbor(bad, tmp_path / "out")
    with pytest.raises(TaskFormatError, match="neither a Harbor task"):
        import_harbor(tmp_path / "out", tmp_path / "out2")


@pytest.mark.asyncio
async def test_terminal_bench_without_run_tests_sh_uses_the_default(make_settings, tmp_path: Path) -> None:
    """run-tests.sh is optional in Terminal-Bench 1 (pytest over tests/test_outputs.py stands in):
    such a task imports, and its oracle passes while doing nothing fails."""
    src = tmp_path / "csv-totals"
    shutil.copytree(FIXTURES / "terminal-bench" / "csv-totals", src)
    (src / "run-tests.sh").unlink()
    root = tmp_path / "tasks"
    task = Task.load(import_harbor(src, root))
    kept = task.tests_dir / ".harbor"
    assert "uv run pytest $TEST_DIR/test_outputs.py -rA" in (kept / "run-tests.sh").read_text()
    assert any("no run-tests.sh" in n for n in task.config.metadata["harbor"]["unsupported_setup"])
    async with running_hub(make_settings(root)) as h:
        oracle, nothing = await _oracle_and_nothing(h, task)
    assert (oracle.failure_class, oracle.reward) == ("ok", 1.0), (oracle.detail, oracle.checks)
    assert (nothing.failure_class, nothing.reward) == ("ok", 0.0), (nothing.detail, nothing.checks)


@pytest.mark.asyncio
async def test_a_program_the_agent_writes_may_name_the_work_dir(make_settings, tmp_path: Path) -> None:
    """The solution writes /app/tool.py whose default output is /app/out/result.txt, and test.sh runs
    it with no arguments and reads /app/out/result.txt (common in Terminal-Bench tasks). The agent saw
    the work dir at /workspace and the tests at the verifier's copy: the wrapper maps the one to the
    other, so the oracle passes there as in Harbor, and doing nothing still fails."""
    src = tmp_path / "default-path"
    for rel, text in {
        "instruction.md": "Write /app/tool.py that writes ok to /app/out/result.txt by default.\n",
        "task.toml": 'version = "1.0"\n[verifier]\ntimeout_sec = 60.0\n',
        "environment/Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\n",
        "solution/solve.sh": "#!/bin/bash\ncat > /app/tool.py <<'PY'\nimport os, sys\n"
                             "out = sys.argv[1] if len(sys.argv) > 1 else '/app/out/result.txt'\n"
                             "os.makedirs(os.path.dirname(out), exist_ok=True)\nopen(out, 'w').write('ok')\nPY\n",
        "tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\ncd /app && python3 /app/tool.py\n"
                         "if [ \"$(cat /app/out/result.txt 2>/dev/null)\" = ok ]; then "
                         "echo 1 > /logs/verifier/reward.txt; "
                         "else echo 0 > /logs/verifier/reward.txt; fi\n",
    }.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    root = tmp_path / "tasks"
    task = Task.load(import_harbor(src, root))
    assert "'/workspace/out/result.txt'" in (task.solution_dir / "solve.sh").read_text()
    async with running_hub(make_settings(root)) as h:
        oracle, nothing = await _oracle_and_nothing(h, task)
    assert (oracle.failure_class, oracle.reward) == ("ok", 1.0), (oracle.detail, oracle.checks)
    assert nothing.reward == 0.0, (nothing.detail, nothing.checks)


@pytest.mark.asyncio
async def test_an_alpine_package_install_in_the_tests_is_skipped_like_apt_get(make_settings, tmp_path: Path) -> None:
    """run-tests.sh of an Alpine-based task installs pytest with `apk add` under `set -e`: offline, the
    verifier skips it as it skips apt-get, and its own pytest runs the tests."""
    src = tmp_path / "csv-totals"
    shutil.copytree(FIXTURES / "terminal-bench" / "csv-totals", src)
    (src / "run-tests.sh").write_text("#!/bin/bash\nset -euo pipefail\napk add --no-cache python3 py3-pip\n"
                                      "pip3 install pytest --break-system-packages\n"
                                      "pytest $TEST_DIR/test_outputs.py -rA\n")
    root = tmp_path / "tasks"
    task = Task.load(import_harbor(src, root))
    async with running_hub(make_settings(root)) as h:
        oracle, _ = await _oracle_and_nothing(h, task)
    assert (oracle.failure_class, oracle.reward) == ("ok", 1.0), (oracle.detail, oracle.checks)


def test_a_missing_oracle_names_solve_sh(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(SAMPLE, src)
    shutil.rmtree(src / "solution")
    task = Task.load(import_harbor(src, tmp_path / "tasks"))
    assert any("no solution/solve.sh" in n for n in task.config.metadata["harbor"]["unsupported_setup"])
    with pytest.raises(AgentError, match="solution/solve.sh is missing"):
        TerminalFamily().oracle_actions(task)


@pytest_asyncio.fixture(loop_scope="module")
async def corpus_hub(make_settings, tasks_root: Path) -> AsyncIterator[Hub]:
    for name in corpus_today():
        import_harbor(FIXTURES / name, tasks_root)
    async with running_hub(make_settings(tasks_root)) as h:
        yield h


@pytest.mark.asyncio(loop_scope="module")
async def test_the_corpus_oracles_pass_and_doing_nothing_fails(corpus_hub: Hub) -> None:
    for name in corpus_today():
        task = corpus_hub.manager.catalog.get("terminal/harbor/" + name.split("/")[1])
        oracle, nothing = await _oracle_and_nothing(corpus_hub, task)
        assert (oracle.failure_class, oracle.reward) == ("ok", 1.0), (name, CORPUS[name], oracle.detail, oracle.checks)
        assert (nothing.failure_class, nothing.reward) == ("ok", 0.0), (name, nothing.detail, nothing.checks)


@pytest.mark.asyncio(loop_scope="module")
async def test_a_verify_that_hangs_is_cut_at_the_tasks_limit(make_settings, tmp_path: Path) -> None:
    """test.sh starts a server that holds its output open, then hangs: the wrapper stops both at the
    task's 3 s limit and scores 0 (the agent's code is what hung), not a verifier error."""
    src = tmp_path / "src"
    shutil.copytree(SAMPLE, src)
    toml = (src / "task.toml").read_text().replace("timeout_sec = 120.0", "timeout_sec = 3.0")
    (src / "task.toml").write_text(toml)
    (src / "tests" / "test.sh").write_text("#!/bin/bash\n(setsid sleep 600 &)\nsleep 300 &\nwait\n"
                                          "echo 1 > /logs/verifier/reward.txt\n")
    root = tmp_path / "tasks"
    task = Task.load(import_harbor(src, root))
    assert task.config.limits.verify_timeout_s == 33
    async with running_hub(make_settings(root)) as h:
        s = await h.manager.create(ResetRequest(env="terminal", task_id=task.id))
        v = await h.manager.verify(s.session_id)
    assert (v.failure_class, v.reward) == ("ok", 0.0), v.detail
    assert "did not finish within the task's verifier limit of 3 s" in v.checks[0].message


@pytest.mark.asyncio(loop_scope="module")
async def test_an_image_path_keeps_the_offline_shims(make_settings, tmp_path: Path) -> None:
    """Issue 40: `ENV PATH=/opt/tool/bin:$PATH` in the Dockerfile reaches test.sh, and test.sh still
    finds envhub's offline shims first (curl, apt-get), not the host's tools or nothing."""
    src = tmp_path / "src"
    shutil.copytree(SAMPLE, src)
    dockerfile = src / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "ENV PATH=/opt/tool/bin:$PATH\n")
    (src / "tests" / "test.sh").write_text(
        '#!/bin/bash\ncase "$(command -v curl):$PATH" in /tmp/harbor/shims/curl:*/opt/tool/bin*) echo 1;; '
        '*) echo 0;; esac > /logs/verifier/reward.txt\n')
    root = tmp_path / "tasks"
    task = Task.load(import_harbor(src, root))
    assert task.config.metadata["harbor"]["env"]["PATH"].startswith("/opt/tool/bin:")
    async with running_hub(make_settings(root)) as h:
        s = await h.manager.create(ResetRequest(env="terminal", task_id=task.id))
        v = await h.manager.verify(s.session_id)
    assert (v.failure_class, v.reward) == ("ok", 1.0), (v.detail, v.checks)


@pytest.mark.asyncio(loop_scope="module")
async def test_a_server_left_running_does_not_hold_up_the_verdict(make_settings, tmp_path: Path) -> None:
    """test.sh starts a server that keeps test.sh's output open and never stops it, then writes its
    reward and exits: the verdict is that reward (a pipe held open by the server must not make the
    verifier wait until its limit, as reading test.sh's output through a pipe did)."""
    src = tmp_path / "src"
    shutil.copytree(SAMPLE, src)
    (src / "task.toml").write_text((src / "task.toml").read_text().replace("timeout_sec = 120.0", "timeout_sec = 5.0"))
    (src / "tests" / "test.sh").write_text("#!/bin/bash\nsleep 600 &\nsetsid sleep 600 &\n"
                                          "echo 1 > /logs/verifier/reward.txt\n")
    root = tmp_path / "tasks"
    task = Task.load(import_harbor(src, root))
    async with running_hub(make_settings(root)) as h:
        s = await h.manager.create(ResetRequest(env="terminal", task_id=task.id))
        v = await h.manager.verify(s.session_id)
    assert (v.failure_class, v.reward) == ("ok", 1.0), (v.detail, v.checks)


# -- validation: the harness control, and tasks validated concurrently ------------------------------
@pytest.mark.asyncio(loop_scope="module")
async def test_a_harness_that_cannot_run_under_the_limits_is_task_invalid(make_settings, tmp_path: Path) -> None:
    """ThreadSanitizer cannot reserve its address space under the verifier's RLIMIT_AS: the oracle
    scores 0 there. The control (the same state judged with the limit lifted) passes, so the task is
    invalid as served, and an episode on it is `task_invalid`, never a trainable 0. A task whose oracle
    simply fails gets no such verdict (the control fails too)."""
    root = tmp_path / "tasks"
    tsan = Task.load(import_harbor(FIXTURES / "harbor" / "c-tsan-counter", root))
    broken_src = tmp_path / "broken"
    shutil.copytree(SAMPLE, broken_src)
    (broken_src / "solution" / "solve.sh").write_text("#!/bin/bash\necho '{}' > /app/stats.json\n")
    broken = Task.load(import_harbor(broken_src, root))
    async with running_hub(make_settings(root)) as h:
        validator = Validator(h, runs=1)
        try:
            report = await validator.validate(tsan)
            assert report.status == "rejected"
            oracle = next(f for f in report.findings if f.check == "oracle:run1")
            assert not oracle.ok and "ThreadSanitizer" in oracle.detail
            harness = next(f for f in report.findings if f.check == "harness")
            assert not harness.ok and "passes with the address-space limit lifted" in harness.detail
            assert tsan.validation_record()["task_invalid"] == harness.detail

            s = await h.manager.create(ResetRequest(env="terminal", task_id=tsan.id))
            for call in TerminalFamily().oracle_actions(tsan):
                await h.manager.step(s.session_id, StepRequest(action=call))
            v = await h.manager.verify(s.session_id)
            assert (v.failure_class, v.trainable) == ("task_invalid", False), v
            assert "cannot run under the sandbox limits" in v.detail

            report = await validator.validate(broken)
            assert report.status == "rejected" and not report.task_invalid
            assert [f.check for f in report.findings if not f.ok] == ["oracle:run1"]
            assert "task_invalid" not in broken.validation_record()
        finally:
            validator.close()


def _record_content(task: Task) -> dict:
    record = task.validation_record() or {}
    return {k: v for k, v in record.items() if k not in ("validated_at", "seconds")}


@pytest.mark.asyncio(loop_scope="module")
async def test_validate_jobs_gives_the_same_reports_and_records(make_settings, tmp_path: Path) -> None:
    from envhub.cli.validation import _validate

    root = tmp_path / "tasks"
    tasks = [Task.load(import_harbor(SAMPLE, root)),
             Task.load(import_harbor(FIXTURES / "terminal-bench" / "csv-totals", root))]
    settings = make_settings(root)

    async def run(jobs: int) -> tuple[list, list]:
        reports = await _validate(settings, tasks, 1, True, quiet=True, jobs=jobs)
        return [(r.task_id, r.status, [(f.check, f.ok) for f in r.findings]) for r in reports], \
            [_record_content(t) for t in tasks]

    one = await run(1)
    two = await run(2)
    assert [r[0] for r in two[0]] == [t.id for t in tasks]  # the tasks' order, whatever finished first
    assert all(r[1] == "validated" for r in two[0]), two[0]
    assert two == one


def test_long_titles_are_cut_at_a_word() -> None:
    from envhub.tasks.model import short_title  # what the importer titles tasks with

    text = "word " * 60
    cut = short_title(text.strip())
    assert len(cut) <= 100 and cut.endswith("word…") and short_title("short title") == "short title"


def test_terminal_bench_solution_yaml(tmp_path: Path) -> None:
    src = tmp_path / "csv-totals"
    shutil.copytree(FIXTURES / "terminal-bench" / "csv-totals", src)
    (src / "solution.sh").unlink()
    (src / "solution.yaml").write_text("- command: cd /app\n  min_timeout_sec: 1\n- command: cp sales.csv totals.csv\n")
    task = Task.load(import_harbor(src, tmp_path / "tasks"))
    assert (task.solution_dir / "solve.sh").read_text() == "#!/bin/bash\ncd /workspace\ncp sales.csv totals.csv\n"


@pytest.mark.asyncio(loop_scope="module")
async def test_the_tasks_cpus_bound_what_test_sh_sees(make_settings, tmp_path: Path) -> None:
    """task.toml says `cpus = 1`: test.sh runs on one CPU (`nproc` says 1), whatever the host has."""
    src = tmp_path / "src"
    shutil.copytree(SAMPLE, src)
    (src / "tests" / "test.sh").write_text("#!/bin/bash\nif [ \"$(nproc)\" = 1 ]; then echo 1; else echo 0; fi "
                                          "> /logs/verifier/reward.txt\n")
    root = tmp_path / "tasks"
    task = Task.load(import_harbor(src, root))
    assert "CPUS = 1 " in (task.tests_dir / "test_harbor.py").read_text()
    assert task.config.limits.cpus == 1  # the agent's sandbox gets it too
    async with running_hub(make_settings(root)) as h:
        s = await h.manager.create(ResetRequest(env="terminal", task_id=task.id))
        v = await h.manager.verify(s.session_id)
    assert (v.failure_class, v.reward) == ("ok", 1.0), (v.detail, v.checks)


@pytest.mark.asyncio(loop_scope="module")
async def test_an_agent_that_stops_test_sh_gets_zero_not_a_verifier_error(make_settings, tmp_path: Path) -> None:
    """test.sh runs the agent's `check.sh`; an agent whose script kills test.sh (so no reward is
    written) must not escape into a masked verifier error: the control (test.sh on the initial
    state) writes a reward, so the missing one is the agent's doing."""
    src = tmp_path / "src"
    shutil.copytree(SAMPLE, src)
    (src / "tests" / "test.sh").write_text("#!/bin/bash\n[ -f /app/check.sh ] && bash /app/check.sh\n"
                                          "echo 0 > /logs/verifier/reward.txt\n")
    root = tmp_path / "tasks"
    task = Task.load(import_harbor(src, root))
    assert task.config.metadata["harbor"]["control_state"] is True
    async with running_hub(make_settings(root)) as h:
        s = await h.manager.create(ResetRequest(env="terminal", task_id=task.id))
        await h.manager.step(s.session_id, StepRequest(action={"tool": "write_file", "arguments": {
            "path": "/workspace/check.sh", "content": "kill -9 $PPID\n"}}))
        v = await h.manager.verify(s.session_id)
    assert (v.failure_class, v.reward) == ("ok", 0.0), v.detail
    assert "though it does on the task's initial state" in v.checks[0].message
