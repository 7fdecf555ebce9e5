"""Family discovery through the `envhub.families` entry-point group (the core imports no family)."""

from __future__ import annotations

from functools import cache
from importlib.metadata import entry_points

from envhub.env import Family
from envhub.errors import NotFound

GROUP = "envhub.families"


def available() -> dict[str, str]:
    """Registered family names → their `module:Class` entry points (nothing imported)."""
    return {ep.name: ep.value for ep in entry_points(group=GROUP)}


def load(names: list[str] | None = None) -> dict[str, Family]:
    """Instantiate the named families (all registered ones when `names` is empty)."""
    eps = {ep.name: ep for ep in entry_points(group=GROUP)}
    wanted = names or sorted(eps)
    out: dict[str, Family] = {}
    for name in wanted:
        if name not in eps:
            raise NotFound.for_name("environment", name, eps)
        family = eps[name].load()()
        if family.name != name:
            raise ValueError(f"entry point {name!r} loads a family named {family.name!r}")
        out[name] = family
    return out


@cache
def family_class(name: str) -> type[Family]:
    """The registered family class for `name`, imported but not instantiated."""
    eps = {ep.name: ep for ep in entry_points(group=GROUP)}
    if name not in eps:
        raise NotFound.for_name("environment", name, eps)
    return eps[name].load()
