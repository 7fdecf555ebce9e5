"""SWE verifies through the Docker backend jail the code under test as the local backend does
(issue 11): the verifier container's seccomp profile lets the harness build its bubblewrap jail.

Real engine, the SWE image (`ENVHUB_DOCKER_SWE_IMAGE`, default envhub-swe:latest), the production
verifier (`VerifierRunner`) over repository states a cheating policy could leave.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from envhub.config import get_settings
from envhub.sandbox.docker import DockerBackend, DockerSettings
from envhub.spec import VerifyResult
from envhub.tasks.model import Task
from envhub.verify.runner import VerifierRunner
from environments.swe.controls import CONTROLS
from environments.swe.repo import config
from tests.docker.conftest import DOCKER
from tests.security.test_swe import _assert_zero, _ids, _plant, checkout  # noqa: F401 - `checkout` is a fixture

SWE_IMAGE = os.environ.get("ENVHUB_DOCKER_SWE_IMAGE", "envhub-swe:latest")


@pytest.fixture(autouse=True)
def _swe_image() -> Iterator[None]:
    if subprocess.run([DOCKER, "image", "inspect", SWE_IMAGE], capture_output=True, timeout=30).returncode != 0:
        pytest.skip(f"image {SWE_IMAGE} missing: run docker/build-images.sh")
    yield


def judge_in_docker(task: Task, state: Path) -> VerifyResult:
    settings = get_settings()
    root = settings.data_dir / "docker-swe-jail"
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o755)

    async def run() -> VerifyResult:
        backend = DockerBackend(None, root=root, docker=DockerSettings(image=SWE_IMAGE, pool=0))
        try:
            return await VerifierRunner(settings, backend).verify(task, state)
        finally:
            await backend.aclose()

    return asyncio.run(run())


@pytest.mark.parametrize("task_id", ["swe/python/interval-merge", "swe/go/lru-evict"])
def test_forged_report_is_caught_through_docker(checkout, task_id: str):  # noqa: F811
    task, repo = checkout(task_id)
    CONTROLS["forge-report"](repo, config(task), _ids(task))
    result = judge_in_docker(task, repo)
    _assert_zero(result, check="report_integrity")
    message = next(c.message for c in result.checks if c.id == "report_integrity")
    assert "the test report is forged" in message, message


def test_code_under_test_cannot_kill_the_harness_in_docker(checkout):  # noqa: F811
    """Fixed code that runs os.kill(-1, SIGKILL) at import: unjailed, it kills the harness (the
    same uid in the same pid namespace) and the verify is a verifier_error; jailed, only its own
    run dies and the verdict is the agent's."""
    task, repo = checkout("swe/python/interval-merge", gold=True)
    _plant(repo, "import os, signal\ntry:\n    os.kill(-1, signal.SIGKILL)\nexcept OSError:\n    pass\n"
                 "os.kill(os.getpid(), signal.SIGKILL)\n")
    result = judge_in_docker(task, repo)
    _assert_zero(result, check="fail_to_pass")
    message = next(c.message for c in result.checks if c.id == "fail_to_pass")
    assert "killed by SIGKILL" in message, message
