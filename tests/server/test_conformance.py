"""The conformance suite against a live server (echo and terminal), and OpenEnv's own client."""

import pytest

from envhub.conformance import ConformanceSuite

TERMINAL_TASK = "terminal/count-error-lines"


def test_conformance_suite_passes_on_echo(live_server):
    outcomes = ConformanceSuite(live_server.url, env="echo", task_id="echo/say-done").run()
    assert [o for o in outcomes if not o.ok] == []
    assert len(outcomes) >= 11
    copies = {o.name: o.applicable for o in outcomes if o.name in ("fork", "snapshot")}
    assert copies == {"fork": True, "snapshot": True}  # ran, and applied


@pytest.mark.usefixtures("echo_cannot_copy")
def test_a_family_that_cannot_copy_is_not_applicable_not_failed(live_server):
    outcomes = ConformanceSuite(live_server.url, env="echo", task_id="echo/say-done").run()
    assert [o for o in outcomes if not o.ok] == []
    skipped = {o.name: o.detail for o in outcomes if not o.applicable}
    assert set(skipped) == {"fork", "snapshot"} and "cannot copy a live episode" in skipped["fork"], skipped


def test_conformance_suite_passes_on_terminal(live_server):
    outcomes = ConformanceSuite(live_server.url, env="terminal", task_id=TERMINAL_TASK,
                                action={"tool": "bash", "arguments": {"command": "ls"}}).run()
    assert [o for o in outcomes if not o.ok] == []


def test_conformance_suite_can_fail():
    """Against something that is not an envhub server every check fails."""
    outcomes = ConformanceSuite("http://127.0.0.1:9", env="echo", timeout=2).run()
    assert outcomes and not any(o.ok for o in outcomes)


def test_openenv_client_completes_an_episode(live_server):
    openenv = pytest.importorskip("openenv.core.generic_client")
    with openenv.GenericEnvClient(base_url=f"{live_server.url}/envs/echo").sync() as env:
        first = env.reset(task_id="echo/say-done")
        assert first.done is False and "done" in first.observation["text"]
        step = env.step({"tool": "echo", "arguments": {"message": "done"}})
        assert step.observation["text"] == "done" and step.done is False
        assert env.state()["step_count"] == 1
        final = env.step({"tool": "submit"})
        assert final.done is True and final.reward == 1.0
