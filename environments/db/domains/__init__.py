"""The business domains, by name. Each module defines its tables, seed, tools and policy."""

from __future__ import annotations

from environments.db.core import Domain

#: The one seed every domain's starting database is built from (tasks are written against it).
SEED = 20250314
NAMES = ("retail", "bank", "hr", "clinic", "logistics")


def domains() -> dict[str, Domain]:
    import importlib

    out: dict[str, Domain] = {}
    for name in NAMES:
        out[name] = importlib.import_module(f"environments.db.domains.{name}").DOMAIN
    return out


def get(name: str) -> Domain:
    from envhub.errors import TaskInvalid

    found = domains()
    if name not in found:
        raise TaskInvalid(f"unknown db domain {name!r}; domains: {', '.join(found)}")
    return found[name]
