"""The optional quality judge: off by default (no quality checks), and never lifts a failed gate.

The judge endpoint here is a small OpenAI-compatible HTTP server in this process that always
answers the same scores: the point is the wiring (export → judge.json → quality check → reward),
not a model's opinion.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from envhub.config import REPO_ROOT, Settings
from envhub.spec import ResetRequest, StepRequest
from environments.office import judge
from environments.office.mutators import filler_prose
from environments.office.tasktypes import TYPES
from tests.conftest import running_hub

TASK = "office/retail/t05-report"


class _Judge(BaseHTTPRequestHandler):
    score = 0.5  # what this judge gives every rubric item it is asked about
    asked: list[str] = []

    def do_POST(self):  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        assert body["messages"][0]["role"] == "system"
        ids = re.findall(r"^- ([\w-]+): ", body["messages"][1]["content"], re.M)
        type(self).asked = ids
        answer = {"scores": {i: self.score for i in ids}}
        out = json.dumps({"choices": [{"message": {"content": json.dumps(answer)}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


@pytest.fixture
def judge_url():
    _Judge.score = 0.5
    server = HTTPServer(("127.0.0.1", 0), _Judge)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()


async def _episode(settings, oracle: bool):
    async with running_hub(settings) as hub:
        m = hub.manager
        c = await m.create(ResetRequest(env="office", task_id=TASK))
        if oracle:
            for a in hub.families["office"].oracle_actions(hub.catalog.get(TASK)):
                await m.step(c.session_id, StepRequest(action=a))
        return await m.verify(c.session_id)


async def test_judge_off_means_no_quality_checks():
    v = await _episode(Settings(tasks_dir=REPO_ROOT / "tasks", families=["office"]), oracle=True)
    assert v.reward == 1.0 and not [c for c in v.checks if c.kind == "quality"]


async def test_judge_scores_quality_but_cannot_lift_a_failed_gate(judge_url):
    settings = Settings(tasks_dir=REPO_ROOT / "tasks", families=["office"], judge_url=judge_url)
    v = await _episode(settings, oracle=True)
    quality = [c for c in v.checks if c.kind == "quality"]
    assert quality and quality[0].score == 0.5
    assert v.reward == pytest.approx(0.7 * 1.0 + 0.3 * 0.5)
    v = await _episode(settings, oracle=False)
    assert v.reward == 0.0 and not v.passed


def test_every_task_type_has_a_rubric_with_anchors():
    assert set(judge.RUBRICS) == set(TYPES)
    for items in judge.RUBRICS.values():
        assert items and all(i["id"] and "1:" in i["criterion"] and "0" in i["criterion"] for i in items)


async def test_the_judge_is_asked_the_rubric_of_the_task_type(judge_url):
    settings = Settings(tasks_dir=REPO_ROOT / "tasks", families=["office"], judge_url=judge_url)
    v = await _episode(settings, oracle=True)
    assert _Judge.asked == [i["id"] for i in judge.RUBRICS["T05"]]
    assert v.passed


async def test_a_full_marks_judge_cannot_lift_filler_prose(judge_url, tmp_path):
    """Filler under the prose headings fails the mechanical gate; a judge fooled into 1.0 changes nothing."""
    _Judge.score = 1.0
    settings = Settings(tasks_dir=REPO_ROOT / "tasks", families=["office"], judge_url=judge_url)
    async with running_hub(settings) as hub:
        m, task = hub.manager, hub.catalog.get(TASK)
        c = await m.create(ResetRequest(env="office", task_id=TASK))
        for a in hub.families["office"].oracle_actions(task):
            await m.step(c.session_id, StepRequest(action=a))
        state = tmp_path / "state"
        await m.get(c.session_id).env.export_state(state)
        assert filler_prose(task, state)
        v = await m.judge(task, state, [])
    assert [ch.score for ch in v.checks if ch.kind == "quality"] == [1.0]
    assert v.reward == 0.0 and not v.passed
    assert "prose-not-filler" in [ch.id for ch in v.checks if not ch.passed]
