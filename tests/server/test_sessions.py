"""The session manager's step contract: declared tools checked before a family sees a call, and
one deadline ladder that grades what the agent's own command caused as the agent's."""

from __future__ import annotations

import pytest

from envhub.errors import FailureClass
from envhub.server.hub import Hub
from envhub.spec import ResetRequest, StepRequest

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
        result.model_dump_json()  # the answer always encodes, whatever the agent sent
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

    from envhub.server.sessions import _SessionIds

    ids = _SessionIds()
    made = []
    for _ in range(5):
        made.append(ids.next())
        time.sleep(0.002)
    assert made == sorted(made) and len(set(made)) == len(made)
    randoms = {i[12:] for i in made}
    assert len(randoms) == len(made) and all(len(r) == 16 for r in randoms)  # 12 bytes, base64
