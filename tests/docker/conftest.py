"""Fixtures for the Docker tests: a real engine, the sandbox image, and (optionally) a running pool.

Every test here is marked `docker` and skips, saying why, when there is no engine, no image, or
(for the pool tests) no pool URL in ENVHUB_TEST_DOCKER_URL.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from envhub.sandbox.docker import DockerBackend, DockerSettings

IMAGE = os.environ.get("ENVHUB_DOCKER_IMAGE", "envhub-sandbox:latest")
DOCKER = "/usr/bin/docker" if os.path.exists("/usr/bin/docker") else (shutil.which("docker") or "docker")


def engine_problem() -> str | None:
    if os.geteuid() != 0:
        return "the Docker backend needs root (host cgroup and /proc access)"
    try:
        info = subprocess.run([DOCKER, "image", "inspect", IMAGE], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"no Docker engine: {e}"
    if info.returncode != 0:
        if "Cannot connect" in info.stderr or "daemon" in info.stderr:
            return f"no Docker engine running: {info.stderr.strip()[:200]}"
        return f"image {IMAGE} missing: run docker/build-images.sh"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    problem = None
    checked = False
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.docker)
            if not checked:
                problem, checked = engine_problem(), True
            if problem:
                item.add_marker(pytest.mark.skip(reason=problem))


def docker(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DOCKER, *args], capture_output=True, text=True, timeout=120, check=check)


@pytest.fixture
async def backend(tmp_path: Path) -> AsyncIterator[DockerBackend]:
    """A Docker backend with a one-container warm pool, its folders under tmp_path."""
    tmp_path.chmod(0o755)
    b = DockerBackend(None, root=tmp_path / "sbx", docker=DockerSettings(image=IMAGE, pool=1))
    b.check()
    try:
        yield b
    finally:
        await b.aclose()


@pytest.fixture
def template(tmp_path: Path) -> Path:
    t = tmp_path / "template"
    (t / "sub").mkdir(parents=True)
    (t / "notes.txt").write_text("hello\n")
    (t / "sub" / "run.sh").write_text("#!/bin/sh\necho ran\n")
    (t / "sub" / "run.sh").chmod(0o750)
    return t
