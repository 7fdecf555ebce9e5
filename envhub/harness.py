"""Harness skins: the same episode presented with the tool surface an agent harness expects.

A model trained against one tool schema learns the schema, not the skill. A `Skin` reshapes a
live session's tools — renames them and their arguments, splits or merges them, renders results
as that harness does — and translates each call into the family's canonical tools. The session
manager checks a call against the skin's declarations, then the skin runs canonical calls
through `run`, which checks them against the family's own declarations: a skin can only ever do
what the canonical tools allow, so a verdict never depends on the skin.

Skins register under the `envhub.harnesses` entry-point group (`harnesses/` holds the ones that
ship); the core imports none by name. One skin instance serves one session (skins may keep
state, e.g. an editor's open file or undo history).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import ClassVar

from envhub.errors import NotFound, RequestError
from envhub.spec import Observation, ToolCall
from envhub.tools import Tool

GROUP = "envhub.harnesses"
#: Runs one canonical tool call of the session (checked against the family's declarations).
Run = Callable[[ToolCall], Awaitable[Observation]]


class HarnessUnsupported(RequestError):
    """A reset asked for a harness that cannot present the environment (e.g. `apply_patch` for db)."""

    status = 422
    code = "harness_unsupported"


class Skin(ABC):
    name: ClassVar[str]
    description: ClassVar[str]

    def unsupported(self, family: str, tool_names: set[str]) -> str | None:
        """Why this skin cannot express `family` (None when it can)."""
        return None

    @abstractmethod
    def tools(self, canonical: dict[str, Tool]) -> list[Tool]:
        """The tools the agent sees through this skin."""

    @abstractmethod
    async def call(self, call: ToolCall, canonical: dict[str, Tool], run: Run) -> Observation:
        """Carry out `call` (already checked against `tools()`) with canonical calls through `run`."""

    def express(self, action: ToolCall, canonical: dict[str, Tool]) -> list[ToolCall]:
        """A canonical action (an oracle's step) as this skin's calls, to prove the skin loses nothing:
        the oracle replayed through it must earn the same reward."""
        return [action]


@cache
def _entry_points() -> dict[str, EntryPoint]:
    # Scanning the installed distributions reads every package's metadata from disk: once per
    # process, never per reset (it was most of a reset's time).
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def registered() -> dict[str, str]:
    """Skin names → `module:Class` (nothing imported)."""
    return {name: ep.value for name, ep in _entry_points().items()}


@cache
def _skin_class(name: str) -> type[Skin]:
    eps = _entry_points()
    if name not in eps:
        raise NotFound.for_name("harness", name, eps)
    return eps[name].load()


def make(name: str) -> Skin:
    """A fresh skin instance for one session."""
    return _skin_class(name)()


def support(family: str, tool_names: set[str]) -> dict[str, str | None]:
    """Every registered skin → None when it can present `family` (with these tools), else why not."""
    return {name: make(name).unsupported(family, tool_names) for name in sorted(registered())}


def open_skin(name: str, family: str, canonical: dict[str, Tool]) -> Skin:
    """The skin for a new session, or a clear 4xx when it cannot express the family."""
    skin = make(name)
    reason = skin.unsupported(family, set(canonical))
    if reason:
        raise HarnessUnsupported(f"harness {name!r} cannot present the {family!r} environment: {reason}")
    return skin
