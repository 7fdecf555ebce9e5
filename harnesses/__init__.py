"""Tool-schema skins: the same environment presented as different agent harnesses expect it.

A skin only reshapes the tool list; actions still reach the server as `{tool, arguments}`.
"""

from __future__ import annotations

from typing import Any

from envhub.spec import ToolSpec


def openai_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """OpenAI-style function calling (`plain` harness)."""
    return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": t.input_schema}} for t in tools]


def mcp_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """MCP `tools/list` entries (the wire shape already is MCP's)."""
    return [t.model_dump(by_alias=True) for t in tools]


SKINS = {"plain": openai_tools, "mcp": mcp_tools}
