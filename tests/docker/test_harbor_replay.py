"""The Harbor importer's Docker replay: the task's image built on envhub's sandbox image gives the
same workspace as the bubblewrap replay."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from environments.terminal.harbor import import_harbor
from tests.docker.conftest import IMAGE

SAMPLE = Path(__file__).parents[1] / "terminal" / "fixtures" / "harbor" / "word-stats"
DOCKERFILE = """FROM debian:bookworm
RUN apt-get update && apt-get install -y jq
WORKDIR /app
COPY data.txt .
ENV GREETING=hi
RUN mkdir made && echo "$GREETING" > made/x
RUN exit 3
RUN <<EOF
set -e
echo heredoc > h.txt
EOF
"""


def _state(task: Path) -> dict[str, str]:
    return {p.relative_to(task / "state").as_posix(): p.read_text() for p in sorted((task / "state").rglob("*"))
            if p.is_file()}


def test_docker_replay_matches_the_local_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENVHUB_DOCKER_IMAGE", IMAGE)
    src = tmp_path / "src"
    shutil.copytree(SAMPLE, src)
    shutil.rmtree(src / "environment")
    (src / "environment").mkdir()
    (src / "environment" / "Dockerfile").write_text(DOCKERFILE)
    (src / "environment" / "data.txt").write_text("data\n")
    in_docker = import_harbor(src, tmp_path / "docker", replay_steps="docker")
    local = import_harbor(src, tmp_path / "local")
    assert _state(in_docker) == _state(local) == {"data.txt": "data\n", "h.txt": "heredoc\n", "made/x": "hi\n"}
    notes = yaml.safe_load((in_docker / "task.yaml").read_text())["metadata"]["harbor"]["unsupported_setup"]
    assert notes == ["RUN apt-get update: not replayed (needs the network: apt-get)",
                     "RUN apt-get install -y jq: not replayed (needs the network: apt-get)",
                     "RUN exit 3: failed in the image build",
                     "environment.storage_mb = 10240: not honoured (the sandbox bounds each file's size, not the disk)"]
