"""The optional quality judge: off by default (no quality checks), and never lifts a failed gate.

The judge endpoint here is a small OpenAI-compatible HTTP server in this process that always
answers the same scores: the point is the wiring (export → judge.json → quality check → reward),
not a model's opinion.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from envhub.config import REPO_ROOT, Settings
from envhub.server.hub import Hub
from envhub.spec import ResetRequest, StepRequest

TASK = "office/retail/t05-report"


class _Judge(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        assert body["messages"][0]["role"] == "system"
        answer = {"scores": {"narrative-matches-data": 0.5, "tone": 0.5}}
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
    server = HTTPServer(("127.0.0.1", 0), _Judge)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()


async def _episode(settings, oracle: bool):
    hub = Hub.build(settings)
    await hub.start()
    try:
        m = hub.manager
        c = await m.create(ResetRequest(env="office", task_id=TASK))
        if oracle:
            for a in hub.families["office"].oracle_actions(hub.catalog.get(TASK)):
                await m.step(c.session_id, StepRequest(action=a))
        return await m.verify(c.session_id)
    finally:
        await hub.stop()


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
