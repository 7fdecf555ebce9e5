"""The episode record: one typed header and one typed step entry, from the session to the store.

The header, `EpisodeHeader`, is declared once, in `envhub.spec` (the API's episode views derive
from it there), and named here too. The session manager builds a `StepEntry` per step and keeps
the list as the episode's step log; the verifier reads it as `/verify/trajectory.jsonl`
(`StepEntry.line`, one JSON object a line); the store keeps each entry as an `EpisodeStep`
(`StepEntry.stored`), arguments and text bounded. `MAX_OBSERVATION_CHARS` is the one cap on an
observation's text, for all three.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from envhub.errors import FailureClass
from envhub.spec import EpisodeHeader, Observation, ToolCall, escape_unencodable, unencodable

__all__ = ["MAX_ARGUMENTS_CHARS", "MAX_OBSERVATION_CHARS", "EpisodeHeader", "StepEntry", "trajectory"]

MAX_OBSERVATION_CHARS = 4000  # characters of an observation's text kept (step log, trajectory, store)
MAX_ARGUMENTS_CHARS = 8000  # characters of a step's arguments, as JSON, the store keeps


@dataclass(slots=True)  # one per step, made on the serving path: no validation (its values are checked)
class StepEntry:
    """One step of the episode as the session logged it; `line()` is what the verifier reads."""

    step: int
    action: ToolCall
    observation: Observation
    failure: FailureClass
    elapsed_s: float
    #: The observation's text was longer than `MAX_OBSERVATION_CHARS` (not part of the trajectory line).
    observation_cut: bool = False
    #: The arguments as JSON text, made once when the entry is recorded (the store keeps this text).
    arguments_json: str = ""

    @classmethod
    def record(cls, step: int, action: ToolCall, obs: Observation, failure: FailureClass,
               elapsed_s: float) -> StepEntry:
        """The entry of a step just answered. Every value is already checked (the action by the
        protocol, the observation by its model), and neither is changed later, so both are kept as
        they are unless they need cutting or escaping: this runs on every step."""
        cut = len(obs.text) > MAX_OBSERVATION_CHARS
        if cut:
            obs = obs.model_copy(update={"text": obs.text[:MAX_OBSERVATION_CHARS]})
        try:  # one pass in C; it refuses a lone surrogate
            args = orjson.dumps(action.arguments).decode()
            clean = action.tool.isascii() or not unencodable(action.tool)
        except TypeError:
            args, clean = "", False
        if not clean:
            if unencodable(action.arguments) or unencodable(action.tool):
                action = ToolCall.model_construct(**escape_unencodable(action.model_dump()))
            try:
                args = orjson.dumps(action.arguments).decode()
            except TypeError:  # a value JSON has no form for
                args = json.dumps(action.arguments, ensure_ascii=False, default=str)
        return cls(step, action, obs, failure, round(elapsed_s, 6), cut, args)

    def line(self) -> dict[str, Any]:
        """The trajectory line: {step, action: {tool, arguments}, observation: {text, is_error, data},
        failure, elapsed_s} with plain values (the keys verifiers read; do not rename)."""
        return {"step": self.step, "action": {"tool": self.action.tool, "arguments": self.action.arguments},
                "observation": {"text": self.observation.text, "is_error": self.observation.is_error,
                                "data": self.observation.data},
                "failure": self.failure.value, "elapsed_s": self.elapsed_s}

    def stored(self) -> dict[str, Any]:
        """The entry as the store keeps it (an `EpisodeStep`'s fields): arguments as JSON text and both
        texts bounded. A plain dict: the store's writer makes one per step."""
        args = self.arguments_json
        return {"step": self.step, "tool": self.action.tool[:128], "arguments": args[:MAX_ARGUMENTS_CHARS],
                "arguments_cut": len(args) > MAX_ARGUMENTS_CHARS, "observation": self.observation.text,
                "observation_cut": self.observation_cut, "is_error": self.observation.is_error,
                "failure": self.failure.value, "elapsed_s": self.elapsed_s}


def trajectory(entries: Sequence[StepEntry]) -> list[dict[str, Any]]:
    """The step log as the verifier's `trajectory.jsonl` lines."""
    return [e.line() for e in entries]
