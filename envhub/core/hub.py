"""The composition root: settings → families, catalogue, sandbox backend, verifier, sessions."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from envhub import families as family_registry
from envhub.config import Settings
from envhub.core.sessions import SessionManager
from envhub.env import Family
from envhub.registry import Registry
from envhub.sandbox.base import SandboxBackend
from envhub.store import EpisodeStore
from envhub.tasks.catalog import Catalog
from envhub.verify.runner import VerifierRunner
from envhub.verify.warm import enabled as warm_verify_enabled

log = logging.getLogger("envhub.hub")


def make_backend(settings: Settings) -> SandboxBackend:
    if settings.sandbox == "docker":
        from envhub.sandbox.docker import DockerBackend  # imported only when chosen

        return DockerBackend(settings)
    from envhub.sandbox.local import LocalBackend

    return LocalBackend(settings.data_dir / "sandboxes")


@dataclass
class Hub:
    settings: Settings
    families: dict[str, Family]
    catalog: Catalog
    backend: SandboxBackend
    verifier: VerifierRunner
    manager: SessionManager
    store: EpisodeStore | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def registry(self) -> Registry:
        """What is served and how healthy it is, for the REST routes and the web pages."""
        return Registry(self.families, self.catalog, self.store)

    @classmethod
    def build(cls, settings: Settings) -> Hub:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        families = family_registry.load(settings.families)
        catalog = Catalog(settings.tasks_dir, settings.task_sets_cache, families)
        backend = make_backend(settings)
        verifier = VerifierRunner(settings, backend, warm=warm_verify_enabled())
        manager = SessionManager(settings, families, catalog, backend, verifier)
        store = None
        if settings.store_enabled:
            store = EpisodeStore(settings.store_url, spill_dir=settings.data_dir / "store-spill",
                                 capacity=settings.store_buffer)
            manager.observers.append(store.writer)
        return cls(settings, families, catalog, backend, verifier, manager, store)

    async def start(self) -> None:
        self.backend.check()
        self.verifier.prepare()
        for family in self.families.values():
            family.setup(self.settings)
        _ = self.catalog.tasks  # load and index once, before the first request
        if self.store is not None:
            await self.store.start()
        await self.manager.start()
        log.info("serving %s with %d tasks; episode store: %s", ", ".join(self.families), len(self.catalog.tasks),
                 self.settings.store_label() if self.store is not None else "off")

    async def stop(self) -> None:
        await self.manager.stop()
        if self.store is not None:
            await self.store.stop()  # after the sessions closed, so their last events are written
        for family in self.families.values():
            await family.shutdown()
        await self.verifier.aclose()
        await self.backend.aclose()
