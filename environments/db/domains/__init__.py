"""The business domains, by name. Each module defines its tables, seed, tools and policy; its
`<name>_tasks` module defines the intents synthesis drafts tasks from (only synthesis loads them)."""

from __future__ import annotations

import importlib

from environments.db.core import Domain
from environments.db.intents import Intent
from envhub.errors import TaskInvalid

#: The one seed every domain's starting database is built from (tasks are written against it).
SEED = 20250314
NAMES = ("retail", "bank", "hr", "clinic", "logistics")


def domains() -> dict[str, Domain]:
    return {name: importlib.import_module(f"environments.db.domains.{name}").DOMAIN for name in NAMES}


def get(name: str) -> Domain:
    found = domains()
    if name not in found:
        raise TaskInvalid(f"unknown db domain {name!r}; domains: {', '.join(found)}")
    return found[name]


def intents(name: str) -> list[Intent]:
    """The domain's task intents, in the order synthesis cycles through them."""
    get(name)
    return list(importlib.import_module(f"environments.db.domains.{name}_tasks").INTENTS)
