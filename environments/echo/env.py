"""The judged part of echo: the environment (its messages are the state the verifier reads) and
the family's judging declarations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from envhub.env import EnvContext, Environment, Family
from envhub.errors import AgentError
from envhub.spec import Observation, ToolCall, ToolSpec
from envhub.tasks.model import Task
from envhub.tools import Param, Tool

TOOLS = [Tool("echo", "Echo a message back.", {"message": Param("string", max_len=100_000)})]


class EchoEnvironment(Environment):
    def __init__(self) -> None:
        self.messages: list[str] = []

    def tools(self) -> list[Tool]:
        return TOOLS

    async def reset(self, *, task: Task, seed: int | None = None) -> Observation:
        self.messages = []
        return Observation(text=task.prompt)

    async def step(self, call: ToolCall) -> Observation:
        if call.tool != "echo":
            raise AgentError(f"unknown tool {call.tool!r}; the only tool is 'echo'")
        message = call.arguments["message"]
        self.messages.append(message)
        return Observation(text=message, data={"count": len(self.messages)})

    async def export_state(self, dest: Path) -> None:
        dest.mkdir(parents=True)
        (dest / "messages.json").write_text(json.dumps(self.messages))

    async def snapshot(self, dest: Path) -> dict[str, Any]:
        dest.mkdir(parents=True)
        (dest / "messages.json").write_text(json.dumps(self.messages))
        return {}

    async def restore(self, *, task: Task, state: Path) -> Observation:
        self.messages = json.loads((state / "messages.json").read_text())
        return Observation(text=f"{len(self.messages)} messages echoed so far", data={"count": len(self.messages)})

    async def close(self) -> None:
        self.messages = []


class EchoFamily(Family):
    name = "echo"
    uses_workdir = False
    description = "Echoes messages back; a protocol fixture and benchmark baseline."
    judged_by = ("env.py",)

    def make(self, ctx: EnvContext) -> EchoEnvironment:
        return EchoEnvironment()

    def tool_specs(self) -> list[ToolSpec]:
        return [t.spec() for t in TOOLS]
