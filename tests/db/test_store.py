"""Per-session databases: fast resets, identical data on both engines, no leftovers."""

from __future__ import annotations

import statistics
import time

from environments.db import domains as registry
from environments.db.dump import tables_sha256


def test_sqlite_reset_is_a_fast_file_copy(sqlite_store, tmp_path):
    domain = registry.get("retail")
    sqlite_store.create(domain, tmp_path).drop()  # template built
    times = []
    for _ in range(30):
        t0 = time.perf_counter()
        h = sqlite_store.create(domain, tmp_path)
        times.append(time.perf_counter() - t0)
        h.drop()
    assert statistics.median(times) < 0.010, times
    assert not list(tmp_path.glob("*.sqlite3"))


def test_every_engine_starts_from_the_same_rows(store, sqlite_store):
    for domain in registry.domains().values():
        assert tables_sha256(store.initial(domain)) == tables_sha256(sqlite_store.initial(domain)), domain.name


def test_every_domain_has_five_related_tables():
    for domain in registry.domains().values():
        tables = domain.base.metadata.sorted_tables
        assert len(tables) >= 5, domain.name
        assert sum(bool(t.foreign_keys) for t in tables) >= 3, domain.name
        assert len(registry.intents(domain.name)) >= 12 and any(t.name == "submit_answer" for t in domain.tools)


def test_a_task_may_name_its_own_database(store, sqlite_store):
    """`metadata.db_seed` draws another database, the same on both engines; the catalogue's stays."""
    from environments.db.domains import SEED

    domain = registry.get("bank")
    drawn = tables_sha256(store.initial(domain, 1_000_001))
    assert drawn == tables_sha256(sqlite_store.initial(domain, 1_000_001))
    assert drawn != tables_sha256(store.initial(domain, 1_000_002)) != tables_sha256(store.initial(domain))
    assert tables_sha256(store.initial(domain)) == tables_sha256(store.initial(domain, SEED))


def test_a_malformed_db_seed_is_the_tasks_fault():
    import pytest

    from envhub.errors import TaskInvalid
    from environments.db.domains import SEED
    from environments.db.store import seed_of

    assert seed_of({}) == SEED and seed_of({"db_seed": 7}) == 7
    for bad in ("7", -1, True, 2**70, None, 1.5):
        with pytest.raises(TaskInvalid, match="db_seed"):
            seed_of({"db_seed": bad})
