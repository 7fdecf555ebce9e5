"""The chat codec: task prompt + the session's tools → the model's chat template, tool calls out of
sampled text, environment observations in as masked tokens.

Token-exact by construction (rl.md §3): the prompt is rendered once; sampled ids are appended as
the engine returned them; each observation is the *suffix* of rendering it after a fixed base
conversation (so BPE merges at the boundary match a full render), preceded by the template's turn
separator (ChatML renders `<|im_end|>\\n`, the engine stops at `<|im_end|>`). Nothing is decoded and
re-encoded, so non-canonical ids the model sampled survive.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from envhub.errors import AgentError

TOOL_CALL_RE = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)

SYSTEM_TOOLS = (
    "You are an agent that acts only through tools. To call a tool, reply with exactly one call:\n"
    "<tool_call>\n{{\"name\": <tool name>, \"arguments\": <arguments object>}}\n</tool_call>\n"
    "Tools:\n<tools>\n{tools}\n</tools>"
)


@dataclass
class ParsedCall:
    tool: str
    arguments: dict[str, Any]


def render_tools(tools: list[dict[str, Any]]) -> str:
    """MCP-shaped tools ({name, description, inputSchema}) as one compact JSON line each: each
    parameter by its type (or its allowed values), required ones marked `!` — short prompts matter
    to small models and to CPU training."""
    lines = []
    for t in tools:
        schema = t.get("inputSchema") or t.get("input_schema") or {}
        required = set(schema.get("required", []))
        params = {k + ("!" if k in required else ""): v.get("enum") or v.get("type", "any")
                  for k, v in schema.get("properties", {}).items()}
        lines.append(json.dumps({"name": t["name"], "description": t.get("description", ""), "parameters": params},
                                ensure_ascii=False, separators=(",", ":")))
    return "\n".join(lines)


def parse_tool_call(text: str) -> ParsedCall:
    """The first tool call in sampled text: Hermes `<tool_call>{json}</tool_call>`, else a bare JSON
    object. Anything else raises `AgentError` (the policy's fault: an agent_error turn)."""
    m = TOOL_CALL_RE.search(text)
    candidate = m.group(1) if m else text.strip()
    if not m:  # plain-JSON fallback: the outermost {...} in the text
        start, end = candidate.find("{"), candidate.rfind("}")
        if start < 0 or end <= start:
            raise AgentError("no tool call found: reply with "
                             "<tool_call>{\"name\": ..., \"arguments\": {...}}</tool_call>")
        candidate = candidate[start:end + 1]
    try:
        obj = json.loads(candidate)
    except json.JSONDecodeError as e:
        raise AgentError(f"the tool call is not valid JSON: {e.msg} at char {e.pos}") from None
    if not isinstance(obj, dict):
        raise AgentError("the tool call must be a JSON object with name and arguments")
    name = obj.get("name", obj.get("tool"))
    args = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(args, str):  # some models double-encode arguments
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            raise AgentError("the tool call's arguments are not a JSON object") from None
    if not isinstance(name, str) or not name:
        raise AgentError("the tool call has no tool name")
    if not isinstance(args, dict):
        raise AgentError("the tool call's arguments must be a JSON object")
    return ParsedCall(name, args)


def format_call(tool: str, arguments: dict[str, Any]) -> str:
    """The text a policy should emit for a call (used to render oracle trajectories for SFT)."""
    return "<tool_call>\n" + json.dumps({"name": tool, "arguments": arguments}, ensure_ascii=False) + "\n</tool_call>"


class ChatCodec:
    """One tokenizer + chat template. `tool_role` is the role observations are rendered under
    (templates without a `tool` role, like SmolLM2's ChatML, render any role name verbatim)."""

    def __init__(self, tokenizer: Any, *, tool_role: str = "tool") -> None:
        self.tok = tokenizer
        self.tool_role = tool_role
        self.eos_id: int = tokenizer.eos_token_id
        self._base = [{"role": "system", "content": "x"}, {"role": "user", "content": "x"},
                      {"role": "assistant", "content": "x"}]
        self._base_ids = self._render(self._base, gen=False)
        # the separator: what the template puts after the assistant's end-of-turn token
        last_eos = max(i for i, t in enumerate(self._base_ids) if t == self.eos_id)
        self.separator: list[int] = self._base_ids[last_eos + 1:]
        self.drift_events = 0

    def _render(self, messages: list[dict[str, Any]], gen: bool) -> list[int]:
        out = self.tok.apply_chat_template(messages, tokenize=True, add_generation_prompt=gen)
        if isinstance(out, dict) or hasattr(out, "input_ids"):  # transformers 5 returns a BatchEncoding
            out = out["input_ids"]
        return list(out)

    @staticmethod
    def system_message(tools: list[dict[str, Any]], system: str | None = None) -> str:
        text = SYSTEM_TOOLS.format(tools=render_tools(tools))
        return f"{system}\n\n{text}" if system else text

    def initial_messages(self, prompt: str, tools: list[dict[str, Any]], system: str | None = None
                         ) -> list[dict[str, Any]]:
        return [{"role": "system", "content": self.system_message(tools, system)},
                {"role": "user", "content": prompt}]

    def initial(self, prompt: str, tools: list[dict[str, Any]], system: str | None = None) -> list[int]:
        """The prompt ids, ending with the generation prompt (`<|im_start|>assistant\\n`)."""
        return self._render(self.initial_messages(prompt, tools, system), gen=True)

    def closing(self, sampled: list[int]) -> list[int]:
        """Tokens that close a sampled turn: the separator after EOS, or EOS + separator when the
        engine stopped for length (the turn still has to end for the template to continue)."""
        if sampled and sampled[-1] == self.eos_id:
            return list(self.separator)
        return [self.eos_id, *self.separator]

    def observation(self, text: str) -> list[int]:
        """An environment observation as the suffix after the fixed base, with the next generation
        prompt: `<|im_start|>tool\\n…<|im_end|>\\n<|im_start|>assistant\\n`."""
        full = self._render([*self._base, {"role": self.tool_role, "content": text}], gen=True)
        if full[:len(self._base_ids)] != self._base_ids:  # a template that is not append-only
            self.drift_events += 1
            raise RuntimeError("the chat template is not append-only at the observation boundary")
        return full[len(self._base_ids):]

    def decode(self, ids: list[int]) -> str:
        return self.tok.decode(ids, skip_special_tokens=True)
