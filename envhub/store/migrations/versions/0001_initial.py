"""The episode store as it stood when migrations began: episodes with their steps and checks, runs
with their step reports.

A store an earlier envhub made has no `alembic_version` table and comes here too, whatever it
already holds: what it lacks is made (a table, the `owner` and `run_id` columns the first stores
had not, an index), and the single-column indexes the composite ones replaced are dropped. Its
rows stay: both columns are nullable, added in place on SQLite and PostgreSQL alike.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

WHEN = sa.DateTime(timezone=True)


def _tables() -> list[tuple[str, list[sa.SchemaItem]]]:
    """Each table as this revision makes it (new items each call: a column belongs to one table)."""
    return [
        ("episodes", [
            sa.Column("id", sa.String(64), primary_key=True),
            sa.Column("owner", sa.String(80), nullable=True),
            sa.Column("env", sa.String(64), nullable=False),
            sa.Column("task_id", sa.String(300), nullable=False),
            sa.Column("harness", sa.String(64), nullable=False),
            sa.Column("policy_version", sa.String(128), nullable=True),
            sa.Column("run_id", sa.String(64), nullable=True),
            sa.Column("created_at", WHEN, nullable=False),
            sa.Column("ended_at", WHEN, nullable=True),
            sa.Column("verified_at", WHEN, nullable=True),
            sa.Column("step_count", sa.Integer(), nullable=False),
            sa.Column("reward", sa.Float(), nullable=True),
            sa.Column("passed", sa.Boolean(), nullable=True),
            sa.Column("failure_class", sa.String(32), nullable=True),
            sa.Column("trainable", sa.Boolean(), nullable=True),
            sa.Column("detail", sa.Text(), nullable=False),
            sa.Column("verifier_sha256", sa.String(64), nullable=True),
            sa.Column("reset_s", sa.Float(), nullable=True),
            sa.Column("verify_s", sa.Float(), nullable=True),
            sa.Column("timings", sa.JSON(), nullable=False)]),
        ("runs", [
            sa.Column("id", sa.String(64), primary_key=True),
            sa.Column("owner", sa.String(80), nullable=True),
            sa.Column("created_at", WHEN, nullable=False),
            sa.Column("config", sa.JSON(), nullable=False)]),
        ("episode_checks", [
            sa.Column("episode_id", sa.String(64), sa.ForeignKey("episodes.id", ondelete="CASCADE"),
                      primary_key=True),
            sa.Column("pos", sa.Integer(), primary_key=True),
            sa.Column("check_id", sa.String(300), nullable=False),
            sa.Column("kind", sa.String(32), nullable=False),
            sa.Column("weight", sa.Float(), nullable=False),
            sa.Column("passed", sa.Boolean(), nullable=False),
            sa.Column("score", sa.Float(), nullable=False),
            sa.Column("message", sa.Text(), nullable=False)]),
        ("episode_steps", [
            sa.Column("episode_id", sa.String(64), sa.ForeignKey("episodes.id", ondelete="CASCADE"),
                      primary_key=True),
            sa.Column("idx", sa.Integer(), primary_key=True),
            sa.Column("tool", sa.String(128), nullable=False),
            sa.Column("arguments", sa.Text(), nullable=False),
            sa.Column("arguments_cut", sa.Boolean(), nullable=False),
            sa.Column("observation", sa.Text(), nullable=False),
            sa.Column("observation_cut", sa.Boolean(), nullable=False),
            sa.Column("is_error", sa.Boolean(), nullable=False),
            sa.Column("failure", sa.String(32), nullable=False),
            sa.Column("elapsed_s", sa.Float(), nullable=True)]),
        ("run_steps", [
            sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
            sa.Column("step", sa.Integer(), primary_key=True),
            sa.Column("policy_version", sa.String(128), nullable=True),
            sa.Column("reported_at", WHEN, nullable=False),
            sa.Column("figures", sa.JSON(), nullable=False)]),
    ]


#: (name, table, columns) of every index.
INDEXES = [
    ("ix_episodes_created_at", "episodes", ["created_at"]),
    ("ix_episodes_failure_class", "episodes", ["failure_class"]),
    ("ix_episodes_task_created", "episodes", ["task_id", "created_at"]),
    ("ix_episodes_env_created", "episodes", ["env", "created_at"]),
    ("ix_episodes_owner_created", "episodes", ["owner", "created_at"]),
    ("ix_episodes_run_created", "episodes", ["run_id", "created_at"]),
    ("ix_runs_owner_created", "runs", ["owner", "created_at"]),
]
#: Columns the first stores had not (nullable: added in place, every row kept).
ADDED_COLUMNS = [("episodes", "owner"), ("episodes", "run_id")]
#: Indexes earlier stores made, covered by the composite ones: each cost every episode's insert.
OBSOLETE_INDEXES = [("ix_episodes_env", "episodes"), ("ix_episodes_task_id", "episodes")]


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    present = set(inspector.get_table_names())
    for name, items in _tables():
        if name not in present:
            op.create_table(name, *items)
            continue
        have = {c["name"] for c in inspector.get_columns(name)}
        for column in (c for c in items if isinstance(c, sa.Column) and (name, c.name) in ADDED_COLUMNS):
            if column.name not in have:
                op.add_column(name, column)
    indexes = {(i["name"], t) for t in ("episodes", "runs") for i in sa.inspect(op.get_bind()).get_indexes(t)}
    for name, table in OBSOLETE_INDEXES:
        if (name, table) in indexes:
            op.drop_index(name, table_name=table)
    for name, table, columns in INDEXES:
        if (name, table) not in indexes:
            op.create_index(name, table, columns)


def downgrade() -> None:
    for name, _ in reversed(_tables()):
        op.drop_table(name)
