"""The session manager's step contract: declared tools checked before a family sees a call, and
one deadline ladder that grades what the agent's own command caused as the agent's."""

from __future__ import annotations

import pytest

from envhub.core.hub import Hub
from envhub.errors import FailureClass
from envhub.spec import Observation, ResetRequest, StepRequest

TASK = "terminal/count-error-lines"


def step(tool: str, **arguments) -> StepRequest:
    return StepRequest.model_validate({"action": {"tool": tool, "arguments": arguments}})


@pytest.mark.parametrize(("tool", "arguments", "names"), [
    ("bash", {"command": "echo hi", "sudo": True}, "'sudo'"),       # an extra key (terminal used to ignore it)
    ("bash", {"command": "echo \ud800"}, "'command'"),            # a lone surrogate
    ("bash", {"command": "x", "timeout_s": 1e308 * 10}, "'timeout_s'"),  # infinity
    ("bash", {"command": "x", "timeout_s": -1}, "'timeout_s'"),
    ("read_file", {}, "'path'"),
    ("nosuch", {}, "unknown tool"),
])
async def test_arguments_that_break_the_declaration_are_the_agents_error(hub: Hub, tool, arguments, names):
    created = await hub.manager.create(ResetRequest(env="terminal", task_id=TASK))
    try:
        result = await hub.manager.step(created.session_id, step(tool, **arguments))
        assert result.failure is FailureClass.agent_error and result.trainable
        assert names in result.observation.text
        result.model().model_dump_json()  # the answer always encodes, whatever the agent sent
        # The call never reached the shell, which still works.
        ok = await hub.manager.step(created.session_id, step("bash", command="echo fine"))
        assert ok.failure is FailureClass.ok and "fine" in ok.observation.text
    finally:
        await hub.manager.close(created.session_id)


async def wedge_a_shell(hub: Hub) -> None:
    """The agent wedges its own shell: `agent_timeout` (trainable) and no environment fault, on any backend."""
    created = await hub.manager.create(ResetRequest(env="terminal", task_id=TASK))
    try:
        # A loop of shell builtins: killing the command's processes cannot stop it, the shell itself spins.
        result = await hub.manager.step(created.session_id, step("bash", command="while :; do :; done",
                                                                    timeout_s=1))
        assert result.failure is FailureClass.agent_timeout, result.observation.text
        assert result.trainable and "stopped responding" in result.observation.text
        after = await hub.manager.step(created.session_id, step("bash", command="echo hi"))
        assert after.failure is FailureClass.agent_error, after.observation.text  # its shell is gone: its doing
        verdict = await hub.manager.verify(created.session_id)
        assert verdict.failure_class is not FailureClass.env_error  # nothing the platform did
    finally:
        await hub.manager.close(created.session_id)


async def test_a_shell_the_agent_wedged_is_agent_timeout_on_the_local_backend(hub: Hub):
    await wedge_a_shell(hub)


def test_session_ids_sort_by_creation_and_stay_unguessable() -> None:
    """The store keys episodes by session id: ids made one after another sort in that order (so their
    rows land on the same index pages), and each still carries 96 random bits."""
    import time

    from envhub.core.sessions import _SessionIds

    ids = _SessionIds()
    made = []
    for _ in range(5):
        made.append(ids.next())
        time.sleep(0.002)
    assert made == sorted(made) and len(set(made)) == len(made)
    randoms = {i[12:] for i in made}
    assert len(randoms) == len(made) and all(len(r) == 16 for r in randoms)  # 12 bytes, base64


async def test_resets_steps_and_closes_show_in_the_prometheus_metrics(hub: Hub) -> None:
    """The serving path's counts are plain numbers (`envhub.core.metrics`) turned into samples when
    /metrics is read: a reset, steps of two outcomes and a close move exactly the samples they should."""
    from prometheus_client import REGISTRY

    from envhub.spec import ToolCall

    def sample(name: str, **labels: str) -> float:
        return REGISTRY.get_sample_value(name, labels) or 0.0

    def figures() -> dict[str, float]:
        return {"live": sample("envhub_sessions_active", env="echo"),
                "ok": sample("envhub_steps_total", env="echo", failure="ok"),
                "agent_error": sample("envhub_steps_total", env="echo", failure="agent_error"),
                "steps": sample("envhub_latency_seconds_count", op="step", env="echo"),
                "fast steps": sample("envhub_latency_seconds_bucket", op="step", env="echo", le="60.0"),
                "all steps": sample("envhub_latency_seconds_bucket", op="step", env="echo", le="+Inf"),
                "resets": sample("envhub_latency_seconds_count", op="reset", env="echo")}

    before = figures()
    m = hub.manager
    created = await m.create(ResetRequest(env="echo", task_id="echo/say-done"))
    live = figures()["live"]
    for action in (ToolCall(tool="echo", arguments={"message": "hi"}), ToolCall(tool="echo", arguments={}),
                   ToolCall(tool="echo", arguments={"message": "again"})):
        await m.step(created.session_id, StepRequest(action=action))
    await m.close(created.session_id)
    after = figures()
    assert live == before["live"] + 1 and after["live"] == before["live"]
    assert {k: after[k] - before[k] for k in after if k != "live"} == {
        "ok": 2, "agent_error": 1, "steps": 3, "fast steps": 3, "all steps": 3, "resets": 1}
    assert sample("envhub_latency_seconds_sum", op="step", env="echo") > 0


async def test_the_environment_gets_the_agents_call_or_the_checked_one(hub: Hub, monkeypatch) -> None:
    """A call whose arguments pass their declaration as they are reaches the environment as it came
    (no second model built per step); one the check changed (a default filled in, 2.0 as 2) reaches
    it as checked. Either way the step log keeps what the agent sent."""
    from envhub.tools import Param, Tool
    from environments.echo import EchoEnvironment

    tools = [Tool("echo", "Echo.", {"message": Param("string"), "times": Param("integer", required=False, default=1)})]
    seen = []

    async def step_(self, call):
        seen.append(call)
        return Observation(text=call.arguments["message"] * call.arguments["times"])

    monkeypatch.setattr(EchoEnvironment, "tools", lambda self: tools)
    monkeypatch.setattr(EchoEnvironment, "step", step_)
    created = await hub.manager.create(ResetRequest(env="echo", task_id="echo/say-done"))
    try:
        sent = [step("echo", message="a", times=2), step("echo", message="b"), step("echo", message="c", times=2.0)]
        texts = [(await hub.manager.step(created.session_id, req)).observation.text for req in sent]
        assert texts == ["aa", "b", "cc"]
        assert seen[0] is sent[0].action
        assert seen[1] is not sent[1].action and seen[1].arguments == {"message": "b", "times": 1}
        assert seen[2] is not sent[2].action and type(seen[2].arguments["times"]) is int
        logged = [e.action for e in hub.manager.get(created.session_id).log]
        assert logged == [req.action for req in sent] and type(logged[2].arguments["times"]) is float
    finally:
        await hub.manager.close(created.session_id)


async def test_sessions_that_offer_the_same_tools_share_one_tool_list(hub: Hub) -> None:
    """A reset answer's tool specs are written once per set of tools (`ToolList`), so sessions with the
    same tools must get the same list, and sessions with other tools their own."""
    answers = [await hub.manager.create(ResetRequest(env=env, task_id=task))
               for env, task in [("echo", "echo/say-done"), ("echo", "echo/say-done"), ("terminal", TASK)]]
    try:
        echo, again, terminal = (a.tools for a in answers)
        assert echo is again and terminal is not echo
        assert [s.name for s in echo.specs] == ["echo"]
        offered = hub.manager.get(answers[2].session_id).tools
        assert [s.name for s in terminal.specs] == list(offered)
    finally:
        for a in answers:
            await hub.manager.close(a.session_id)
