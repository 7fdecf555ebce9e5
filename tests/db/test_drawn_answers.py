"""Drawn sets ask each template on many databases: its answers must spread (issue #38).

Every intent of every domain is drawn on 40 databases (db seeds 1_000_000 + k, as drawn sets
use; draft and execute, as `environments.db.generate.materialize` does), and per template: the
most common answer (a refusal's figure, a write's calls) covers at most 5 % of its tasks, another
task's answer passes this task's check (the verifier's own matcher; for a write, the same calls)
on at most 2 % of pairs, and no prompt comes twice with the same answer. A policy that answers a
template with a constant, or with an answer (or a call list) it saw on another task, earns next
to nothing. Measured by `environments.db.spread`
(also `scripts/db_answer_spread.py`, which prints the table).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from environments.db import domains as registry
from environments.db.spread import MAX_SIBLING_HITS, MAX_TOP_SHARE, Drawn, Spread, draw, spread

DBS = 40  # databases per domain
MIN_TEMPLATES = 8  # read or refusal templates each domain keeps (besides its writes)
MIN_TASKS = 36  # of the DBS draws, how many a template must yield (a draft may find nothing to ask)


@pytest.fixture(scope="module")
def drawn(tmp_path_factory: pytest.TempPathFactory) -> list[Drawn]:
    return draw(DBS, scratch=Path(tmp_path_factory.mktemp("spread")), tag="test")


@pytest.fixture(scope="module")
def rows(drawn: list[Drawn]) -> list[Spread]:
    return spread(drawn)


def test_each_domain_keeps_questions_and_refusals(rows: list[Spread]):
    per: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        if r.kind != "write":
            per[r.domain].append(r.slug)
    for name in registry.NAMES:
        assert len(per[name]) >= MIN_TEMPLATES, (
            f"{name} keeps {len(per[name])} read or refusal templates ({', '.join(sorted(per[name]))}); "
            f"at least {MIN_TEMPLATES}")
    kinds = {r.kind for r in rows}
    assert kinds == {"read", "refusal", "write"}, kinds


def test_every_template_draws_on_most_databases(rows: list[Spread], drawn: list[Drawn]):
    few = [f"{r.domain}/{r.slug}: {r.tasks} of {DBS}" for r in rows if r.tasks < MIN_TASKS]
    assert not few, "templates that find nothing to ask on too many databases: " + "; ".join(few)
    for r in rows:
        seeds = [d.db_seed for d in drawn if (d.domain, d.slug) == (r.domain, r.slug)]
        assert len(seeds) == len(set(seeds)), f"{r.domain}/{r.slug} drawn twice on one database"


def test_no_answer_covers_many_tasks(rows: list[Spread]):
    bad = [f"{r.domain}/{r.slug} ({r.kind}): answer {r.top!r} on {r.top_count} of {r.tasks} tasks "
           f"({r.top_share:.1%})" for r in rows if r.top_share > MAX_TOP_SHARE and r.top_count > 2]
    assert not bad, (f"a constant answer earns more than {MAX_TOP_SHARE:.0%} of a template "
                     "(a refusal's figure included):\n" + "\n".join(bad))


def test_sibling_answers_rarely_pass(rows: list[Spread]):
    bad = [f"{r.domain}/{r.slug} ({r.kind}): {r.sibling_hits:.1%} of (task, sibling) pairs; most common answer "
           f"{r.top!r} ({r.top_share:.1%})" for r in rows if r.sibling_hits > MAX_SIBLING_HITS]
    assert not bad, (f"another task's answer passes a task's check on more than {MAX_SIBLING_HITS:.0%} of pairs:\n"
                     + "\n".join(bad))


def test_no_prompt_twice_with_one_answer(rows: list[Spread]):
    bad = [f"{r.domain}/{r.slug}: {len(r.twins)} prompts, e.g. {r.twins[0][:120]!r}" for r in rows if r.twins]
    assert not bad, "the same task (prompt and answer) drawn on two databases:\n" + "\n".join(bad)


#: Tables a half-empty database keeps (the people and the catalogue, none of their activity).
KEPT = {"customers", "employees", "departments", "patients", "doctors", "warehouses", "carriers", "vehicles",
        "products"}


@pytest.mark.parametrize("name", registry.NAMES)
@pytest.mark.parametrize("mode", ["empty", "no-activity"])
def test_intents_decline_on_a_database_that_lacks_what_they_need(name: str, mode: str, tmp_path: Path):
    """A drawn database may lack what an intent needs: it declines (LookupError or None), never
    crashes; of an empty database it asks nothing (an empty sum is no question)."""
    import random

    from sqlalchemy import delete
    from sqlalchemy.orm import Session

    from environments.db.intents import Ctx
    from environments.db.store import SqliteStore

    domain = registry.get(name)
    handle = SqliteStore(tmp_path / "data").create(domain, tmp_path, seed=1_000_007)
    try:
        with Session(handle.engine) as s:
            for table in reversed(domain.base.metadata.sorted_tables):
                if mode == "empty" or table.name not in KEPT:
                    s.execute(delete(table))
            s.commit()
            for i, intent in enumerate(registry.intents(name)):
                try:
                    draft = intent(Ctx(rng=random.Random(i), s=s))
                except LookupError:
                    continue
                if mode == "empty":
                    assert draft is None or draft.kind == "write", (
                        f"{name}/{intent.__name__} asks a {draft.kind} question of an empty database: {draft.prompt!r}")
    finally:
        handle.drop()
