"""`plain`: the family's canonical tools, as they are; `mcp`: the same with MCP's result shapes."""

from __future__ import annotations

from envhub.harness import Run, Skin
from envhub.spec import Observation, ToolCall
from envhub.tools import Tool


class Plain(Skin):
    name = "plain"
    description = "The environment's own tools (function calling)."

    def tools(self, canonical: dict[str, Tool]) -> list[Tool]:
        return list(canonical.values())

    async def call(self, call: ToolCall, canonical: dict[str, Tool], run: Run) -> Observation:
        return await run(call)


class Mcp(Plain):
    name = "mcp"
    description = ("The environment's own typed tools, answering in MCP's result shape "
                   "(content, isError, structuredContent).")

    async def call(self, call: ToolCall, canonical: dict[str, Tool], run: Run) -> Observation:
        obs = await run(call)
        return obs.model_copy(update={"data": {"content": [{"type": "text", "text": obs.text}], "isError": obs.is_error,
                                               "structuredContent": obs.data}})
