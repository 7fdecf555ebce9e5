"""The episode record: the step entry the session logs, the trajectory line verifiers read, the stored step."""

from __future__ import annotations

import json
from typing import get_args

import pytest

import verifiers
from envhub.episode import MAX_ARGUMENTS_CHARS, MAX_OBSERVATION_CHARS, StepEntry, trajectory
from envhub.errors import FailureClass
from envhub.spec import CheckKind, Observation, ToolCall


def _entry(text: str = "3\n", arguments: dict | None = None) -> StepEntry:
    return StepEntry.record(2, ToolCall(tool="bash", arguments=arguments or {"command": "wc -l log.txt"}),
                            Observation(text=text, data={"exit_code": 0}), FailureClass.agent_timeout, 0.1234567)


def test_trajectory_line_keeps_the_keys_and_values_verifiers_read() -> None:
    # The exact line the session wrote before the entry was typed: verifiers parse these keys.
    assert json.dumps(_entry().line()) == (
        '{"step": 2, "action": {"tool": "bash", "arguments": {"command": "wc -l log.txt"}}, '
        '"observation": {"text": "3\\n", "is_error": false, "data": {"exit_code": 0}}, '
        '"failure": "agent_timeout", "elapsed_s": 0.123457}')
    assert trajectory([_entry(), _entry()]) == [_entry().line()] * 2


def test_one_cap_marks_exactly_the_cut_observations() -> None:
    long, full = _entry("x" * (MAX_OBSERVATION_CHARS + 1)), _entry("x" * MAX_OBSERVATION_CHARS)
    assert len(long.line()["observation"]["text"]) == MAX_OBSERVATION_CHARS and long.stored()["observation_cut"]
    assert full.line()["observation"]["text"] == full.observation.text and not full.stored()["observation_cut"]
    assert "observation_cut" not in long.line()


def test_stored_step_bounds_the_arguments() -> None:
    stored = _entry(arguments={"command": "y" * 3 * MAX_ARGUMENTS_CHARS}).stored()
    assert stored["arguments_cut"] and len(stored["arguments"]) == MAX_ARGUMENTS_CHARS
    small = _entry().stored()
    assert not small["arguments_cut"] and json.loads(small["arguments"]) == {"command": "wc -l log.txt"}
    assert (small["step"], small["tool"], small["failure"], small["is_error"]) == (2, "bash", "agent_timeout", False)


def test_unencodable_arguments_are_logged_escaped() -> None:
    line = _entry(arguments={"name": "a\ud800b"}).line()
    assert line["action"]["arguments"] == {"name": "a\\ud800b"}
    json.dumps(line).encode("utf-8")  # the trajectory file can be written


@pytest.mark.parametrize("kind", get_args(CheckKind))
def test_verifiers_accept_every_check_kind_of_the_protocol(kind: str) -> None:
    # `verifiers` runs apart from envhub (its own interpreter in the sandbox), so it repeats the list.
    verifiers.check("c", kind=kind)


def test_verifiers_refuse_a_kind_the_protocol_lacks() -> None:
    with pytest.raises(ValueError, match="unknown check kind"):
        verifiers.check("c", kind="bonus")


async def test_the_session_logs_typed_entries_and_the_verifier_reads_their_lines(hub) -> None:
    from envhub.spec import ResetRequest, StepRequest

    m = hub.manager
    created = await m.create(ResetRequest(env="echo", task_id="echo/say-done"))
    await m.step(created.session_id, StepRequest(action=ToolCall(tool="echo", arguments={"message": "hi"})))
    session = m.get(created.session_id)
    (entry,) = session.log
    assert isinstance(entry, StepEntry) and entry.line()["action"] == {"tool": "echo", "arguments": {"message": "hi"}}
    assert session.header.task_id == "echo/say-done" and session.header.harness == "plain"
