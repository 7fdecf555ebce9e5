"""The episode header is declared once (`envhub.spec.EpisodeHeader`): the session's header, the store
events, the store's row, the writer's insert and the views (`EpisodeInfo`, `EpisodeSummary`) all take
their fields from it. A field added to the declaration (and its column to the migrations) reaches
each of them (a copy of the package with one more field, in a subprocess); one of them written out
by hand again would not."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from types import NoneType
from typing import get_args

from envhub.config import REPO_ROOT
from envhub.core.hub import Hub
from envhub.spec import HEADER_FIELDS, EpisodeDetail, EpisodeHeader, EpisodeInfo, ResetRequest
from envhub.store import EpisodeSummary, events
from envhub.store.db import head
from envhub.store.models import EpisodeHeaderColumns, EpisodeRow
from envhub.store.repo import _BULK


def test_the_declaration_lists_the_header_in_order() -> None:
    assert HEADER_FIELDS == ("id", "env", "task_id", "harness", "policy_version", "run_id", "created_at", "parent_id",
                             "forked_at_step")
    assert HEADER_FIELDS == tuple(EpisodeHeader.model_fields)


def test_the_store_row_has_a_column_per_header_field_typed_as_declared() -> None:
    columns = EpisodeRow.__table__.c
    assert {n for n in vars(EpisodeHeaderColumns) if not n.startswith("_")} == set(HEADER_FIELDS)
    for name, field in EpisodeHeader.model_fields.items():
        kinds = get_args(field.annotation) or (field.annotation,)
        assert columns[name].type.python_type in kinds, name
        assert columns[name].nullable is (NoneType in kinds), name


def test_the_writer_and_the_events_carry_the_header_fields() -> None:
    for bulk in _BULK.values():
        assert bulk.insert_episodes.columns[:len(HEADER_FIELDS)] == HEADER_FIELDS
    assert events.HEADER_FIELDS == (*HEADER_FIELDS, "owner")


def test_the_views_are_the_header_and_more() -> None:
    for view in (EpisodeInfo, EpisodeDetail, EpisodeSummary):
        assert issubclass(view, EpisodeHeader)
        fields = tuple(n for n in view.model_fields if n != "protocol")  # the wire's version field comes first
        assert fields[:len(HEADER_FIELDS)] == HEADER_FIELDS, view
        assert all(view.model_fields[n].annotation == f.annotation for n, f in EpisodeHeader.model_fields.items())


async def test_the_sessions_header_is_the_declarations(hub: Hub) -> None:
    created = await hub.manager.create(ResetRequest(env="echo", task_id="echo/say-done", policy_version="p1"))
    try:
        session = hub.manager.get(created.session_id)
        assert tuple(session.header_fields) == HEADER_FIELDS
        assert session.header == EpisodeHeader(id=session.id, env="echo", task_id="echo/say-done", harness="plain",
                                               policy_version="p1", run_id=None, created_at=session.created_at)
        assert events.created(session)["policy_version"] == "p1"
    finally:
        await hub.manager.close(created.session_id)


#: Run against a copy of envhub whose `EpisodeHeader` declares one more field, `seed: int | None`.
EXTENDED = r"""
import json, sys
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import envhub.spec
assert envhub.spec.__file__.startswith(sys.argv[1]), envhub.spec.__file__  # the copy, not the repo's
from envhub.core.sessions import Session
from envhub.spec import EpisodeHeader, EpisodeInfo
from envhub.store import OPERATOR, EpisodeStore, events
from envhub.store.repo import write_events

session = Session(id="s1", family=SimpleNamespace(name="echo"), env=None, task=SimpleNamespace(id="echo/say-done"),
                  lease_s=60, harness="plain", policy_version=None, sessions_dir=Path(sys.argv[1]))
header = EpisodeHeader(id="e1", env="echo", task_id="echo/say-done", harness="plain", policy_version=None,
                       created_at=datetime(2026, 12, 1, tzinfo=UTC), seed=7)
store = EpisodeStore(f"sqlite:///{sys.argv[1]}/store.sqlite3")
store.episodes(viewer=OPERATOR)  # makes the schema
with store.engine.begin() as conn:
    write_events(conn, events=events.storable([{"kind": "created", "episode": header, "reset_s": 0.1}]))
[summary], _ = store.episodes(viewer=OPERATOR)
detail = store.episode("e1", viewer=OPERATOR)
print(json.dumps({"session": "seed" in session.header_fields, "summary": summary.seed, "detail": detail.seed,
                  "api": EpisodeInfo(**summary.model_dump()).seed}))
"""


SEED_REVISION = """
import sqlalchemy as sa
from alembic import op

revision = "9999"
down_revision = {head!r}


def upgrade() -> None:
    op.add_column("episodes", sa.Column("seed", sa.Integer(), nullable=True))
"""


def test_a_field_added_to_the_declaration_reaches_the_row_the_writer_and_the_views(tmp_path: Path) -> None:
    copy = tmp_path / "envhub"
    shutil.copytree(REPO_ROOT / "envhub", copy, ignore=shutil.ignore_patterns("__pycache__"))
    spec = copy / "spec.py"
    text = spec.read_text()
    declared = text.index("\nclass EpisodeHeader(BaseModel):")
    last = text.index("\n    created_at: datetime\n", declared) + len("\n    created_at: datetime\n")
    assert text.index("\nclass ", declared + 1) > last, "EpisodeHeader's last field is no longer created_at"
    spec.write_text(text[:last] + "    seed: int | None = None\n" + text[last:])
    # ... and, as every schema change, a revision that makes its column (the migrations are history).
    (copy / "store" / "migrations" / "versions" / "9999_seed.py").write_text(SEED_REVISION.format(head=head()))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO_ROOT)])}
    done = subprocess.run([sys.executable, "-c", EXTENDED, str(tmp_path)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    # The session's header has the field, the writer stored it, the row holds it and each view shows it.
    assert json.loads(done.stdout.splitlines()[-1]) == {"session": True, "summary": 7, "detail": 7, "api": 7}


def test_a_stored_time_reads_back_in_utc() -> None:
    """`EpisodeSummary.of` takes every field by name; its times still come back with their zone."""
    row = EpisodeRow(id="e", env="echo", task_id="t", harness="plain", policy_version=None, run_id=None,
                     created_at=datetime(2026, 12, 1, 6, 0), ended_at=None, step_count=0, reward=None, passed=None,
                     failure_class=None, trainable=None, reset_s=None, verify_s=None)
    summary = EpisodeSummary.of(row)
    assert summary.created_at.tzinfo is not None and summary.ended_at is None
