"""The business domains, by name. Each has three modules: `<name>` its tables and seed data,
`<name>_tools` its tools, policy and `DOMAIN`, and `<name>_tasks` the intents synthesis drafts
tasks from (only synthesis loads them). The data and the tools are apart because only the data
judges a task (`DbFamily.judged_by`): a change to a tool does not re-key the catalogue."""

from __future__ import annotations

import importlib

from envhub.errors import TaskInvalid
from environments.db.core import Domain
from environments.db.intents import Intent

#: The one seed every domain's starting database is built from (tasks are written against it).
SEED = 20250314
NAMES = ("retail", "bank", "hr", "clinic", "logistics")


def domains() -> dict[str, Domain]:
    return {name: importlib.import_module(f"environments.db.domains.{name}_tools").DOMAIN for name in NAMES}


def get(name: str) -> Domain:
    found = domains()
    if name not in found:
        raise TaskInvalid(f"unknown db domain {name!r}; domains: {', '.join(found)}")
    return found[name]


def intents(name: str) -> list[Intent]:
    """The domain's task intents, in the order synthesis cycles through them."""
    get(name)
    return list(importlib.import_module(f"environments.db.domains.{name}_tasks").INTENTS)
