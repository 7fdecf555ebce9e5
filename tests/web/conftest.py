"""Fixtures for the registry browser: a temp tasks root with hostile content, a private data folder."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from envhub.config import REPO_ROOT, get_settings
from envhub.store import OPERATOR, EpisodeStore
from envhub.verify import runtime

HTML_PROMPT = 'Say <script>alert("xss")</script> & <b>done</b>.'
HIDDEN_MARKERS = ("HIDDEN-VERIFIER-MARKER-7f3a", "HIDDEN-SOLUTION-MARKER-9c1e")


def make_data_dir(prefix: str) -> Path:
    """World-traversable (sandbox uids must reach it), borrowing the installed verifier site."""
    shared = get_settings().data_dir
    runtime.install(shared)  # no-op when installed and current
    root = Path(tempfile.mkdtemp(prefix=prefix, dir="/var/tmp"))
    root.chmod(0o755)
    (root / "verifier").mkdir()
    (root / "verifier").chmod(0o755)
    os.symlink(runtime.site_dir(shared), runtime.site_dir(root))
    return root


@pytest.fixture(scope="module")
def data_dir() -> Iterator[Path]:
    root = make_data_dir("envhub-web-")
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def tasks_dir(data_dir: Path) -> Path:
    """echo/say-done plus echo/html-prompt: HTML in its title and prompt, markers in its hidden files."""
    root = data_dir / "tasks"
    shutil.copytree(REPO_ROOT / "tasks" / "echo" / "say-done", root / "echo" / "say-done")
    task = root / "echo" / "html-prompt"
    shutil.copytree(REPO_ROOT / "tasks" / "echo" / "say-done", task)
    (task / "validation.json").unlink(missing_ok=True)
    (task / "task.yaml").write_text(
        "id: echo/html-prompt\nfamily: echo\ntitle: 'Prompt with <i>HTML</i>'\ndifficulty: hard\n"
        "tags: [fixture, html]\nlimits: {step_timeout_s: 5, verify_timeout_s: 30, max_steps: 1000}\n"
        "metadata: {language: '<u>html</u>', task_type: escaping}\n")
    (task / "prompt.md").write_text(HTML_PROMPT + "\n")
    with (task / "tests" / "test_echo.py").open("a") as f:
        f.write(f"\n# {HIDDEN_MARKERS[0]}\n")
    (task / "solution" / "notes.txt").write_text(HIDDEN_MARKERS[1])
    return root


def wait_recorded(store_url: str, episode_id: str, *, steps: int, verified: bool = True,
                  timeout_s: float = 20.0) -> None:
    """Wait until the server's writer has stored the episode (writes are asynchronous by design)."""
    store = EpisodeStore(store_url)
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            ep = store.episode(episode_id, viewer=OPERATOR)
            if ep and ep.step_count >= steps and ep.ended_at and (ep.failure_class or not verified):
                if store.steps(episode_id, limit=1, viewer=OPERATOR)[1] >= steps:
                    return
            time.sleep(0.1)
    finally:
        store.engine.dispose()
    raise AssertionError(f"episode {episode_id} was not recorded within {timeout_s}s")


@pytest.fixture(scope="module")
def recorded() -> Callable[..., None]:
    return wait_recorded
