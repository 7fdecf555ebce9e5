"""LibreOffice missing or broken: the office family says so everywhere a user looks, and a reset is a
503 with the fixing command before any session is made (issue 19).

The missing LibreOffice is real: PATH is a folder holding every command of /usr/bin except
LibreOffice's; the broken one is a real office that cannot start under a tiny address space.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from envhub.server.thread import serve_in_thread
from environments.office import family
from tests.conftest import make_settings

TASK = "office/banking/t02-model"


@pytest.fixture
def no_libreoffice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """PATH without LibreOffice; the availability check forgets what it saw before and after."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in os.listdir("/usr/bin"):
        if not name.startswith(("soffice", "libreoffice", "localc", "lowriter", "loimpress")):
            (bin_dir / name).symlink_to(Path("/usr/bin") / name)
    path = f"{bin_dir}:{Path(sys.executable).parent}"
    monkeypatch.setenv("PATH", path)
    monkeypatch.setattr(family, "_checked", None)
    yield path
    family._checked = None


def test_every_view_names_the_missing_libreoffice_and_a_reset_is_503(no_libreoffice: str):
    with serve_in_thread(make_settings(families=["office"])) as server:
        http = httpx.Client(base_url=server.url, timeout=60)
        env = http.get("/v1/envs/office").json()
        assert env["availability"] == "unavailable" and env["unavailable_tasks"] == env["task_count"] > 0
        assert "LibreOffice is not installed" in env["unavailable"]["reason"]
        assert env["unavailable"]["fix"] == family.FIX
        assert http.get(f"/v1/tasks/{TASK}").json()["unavailable"]["fix"] == family.FIX
        listed = http.get("/v1/tasks", params={"env": "office", "limit": 5}).json()["tasks"]
        assert listed and all(t["unavailable"]["fix"] == family.FIX for t in listed)
        ready = http.get("/ready")
        assert ready.status_code == 503 and ready.json()["code"] == "requirement_missing"
        assert ready.json()["fix"] == family.FIX
        for page in ("/", "/envs/office"):
            html = http.get(page).text
            assert 'data-availability="unavailable"' in html and family.FIX in html, page

        r = http.post("/v1/sessions", json={"env": "office", "task_id": TASK})
        assert r.status_code == 503 and r.json()["code"] == "requirement_missing", r.text
        assert r.json()["fix"] == family.FIX and r.json()["retryable"] is False
        assert server.hub.manager.active == 0


def test_envhub_list_shows_it(no_libreoffice: str):
    env = {**os.environ, "PATH": no_libreoffice, "COLUMNS": "200"}
    envhub = str(Path(sys.executable).parent / "envhub")
    rows = json.loads(subprocess.run([envhub, "list", "--env", "office", "--json"], env=env, check=True,
                                     capture_output=True, text=True).stdout)
    assert rows and all(r["unavailable"]["fix"] == family.FIX for r in rows)


def test_a_broken_libreoffice_is_reported_and_a_working_one_is_not():
    broken = family.probe_office(memory_mb=64)  # cannot even start in 64 MB of address space
    assert broken is not None and "installed but does not work" in broken.reason and broken.fix == family.FIX
    assert family.probe_office() is None
