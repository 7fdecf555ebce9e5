"""ORM rows of the episode store (SQLAlchemy 2.0 typed mappings).

Rows are storage shapes only; what pages and the CLI show is built from them in
`envhub.store.schemas`, so a column can change without changing what a client sees.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, DateTime, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class Base(DeclarativeBase):
    pass


OWNER_CHARS = 80  # `key:NAME:HASH16` or `token:HASH32` (a key's name is short by convention; longer is cut)
RUN_ID_CHARS = 64  # `envhub.spec.RUN_ID_PATTERN`


class EpisodeRow(Base):
    """One session: who ran what, how it ended, how long each phase took."""

    __tablename__ = "episodes"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    #: Who ran it (`envhub.store.viewer`); None: recorded before owners were kept (admins only).
    owner: Mapped[str | None] = mapped_column(String(OWNER_CHARS), nullable=True)
    # Filtered by the composite indexes below (env or task first): no index of their own to keep up.
    env: Mapped[str] = mapped_column(String(64))
    task_id: Mapped[str] = mapped_column(String(300))
    harness: Mapped[str] = mapped_column(String(64), default="plain")
    policy_version: Mapped[str | None] = mapped_column(String(128), nullable=True)
    #: The training run the reset named (`RunRow.id`, not a foreign key: a reset may name a run
    #: before it is reported, and a run's figures count only its owner's episodes).
    run_id: Mapped[str | None] = mapped_column(String(RUN_ID_CHARS), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    verified_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    step_count: Mapped[int] = mapped_column(Integer, default=0)
    reward: Mapped[float | None] = mapped_column(Float, nullable=True)
    passed: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    failure_class: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    trainable: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    detail: Mapped[str] = mapped_column(Text, default="")
    verifier_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    reset_s: Mapped[float | None] = mapped_column(Float, nullable=True)
    verify_s: Mapped[float | None] = mapped_column(Float, nullable=True)
    timings: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)

    steps: Mapped[list[StepRow]] = relationship(back_populates="episode", order_by="StepRow.idx",
                                                cascade="all, delete-orphan", lazy="raise")
    checks: Mapped[list[CheckRow]] = relationship(back_populates="episode", order_by="CheckRow.pos",
                                                  cascade="all, delete-orphan", lazy="raise")


class StepRow(Base):
    """One tool call and what came back (text and arguments bounded in size)."""

    __tablename__ = "episode_steps"

    episode_id: Mapped[str] = mapped_column(ForeignKey("episodes.id", ondelete="CASCADE"), primary_key=True)
    idx: Mapped[int] = mapped_column(Integer, primary_key=True)
    tool: Mapped[str] = mapped_column(String(128))
    arguments: Mapped[str] = mapped_column(Text)  # JSON text, possibly cut (see `arguments_cut`)
    arguments_cut: Mapped[bool] = mapped_column(Boolean, default=False)
    observation: Mapped[str] = mapped_column(Text)
    observation_cut: Mapped[bool] = mapped_column(Boolean, default=False)
    is_error: Mapped[bool] = mapped_column(Boolean, default=False)
    failure: Mapped[str] = mapped_column(String(32), default="ok")
    elapsed_s: Mapped[float | None] = mapped_column(Float, nullable=True)

    episode: Mapped[EpisodeRow] = relationship(back_populates="steps")


class CheckRow(Base):
    """One verifier check's outcome for one episode."""

    __tablename__ = "episode_checks"

    episode_id: Mapped[str] = mapped_column(ForeignKey("episodes.id", ondelete="CASCADE"), primary_key=True)
    pos: Mapped[int] = mapped_column(Integer, primary_key=True)
    check_id: Mapped[str] = mapped_column(String(300))
    kind: Mapped[str] = mapped_column(String(32))
    weight: Mapped[float] = mapped_column(Float, default=1.0)
    passed: Mapped[bool] = mapped_column(Boolean)
    score: Mapped[float] = mapped_column(Float)
    message: Mapped[str] = mapped_column(Text, default="")

    episode: Mapped[EpisodeRow] = relationship(back_populates="checks")


class RunRow(Base):
    """A training run (`/v1/runs`): who reported it and with which configuration. Its episodes are
    the owner's episodes whose reset named its id (`EpisodeRow.run_id`)."""

    __tablename__ = "runs"

    id: Mapped[str] = mapped_column(String(RUN_ID_CHARS), primary_key=True)
    owner: Mapped[str | None] = mapped_column(String(OWNER_CHARS), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    config: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)

    steps: Mapped[list[RunStepRow]] = relationship(back_populates="run", order_by="RunStepRow.step",
                                                   cascade="all, delete-orphan", lazy="raise")


class RunStepRow(Base):
    """One trainer step's figures as the trainer reported them (loss, kl, valid samples, waits...)."""

    __tablename__ = "run_steps"

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    step: Mapped[int] = mapped_column(Integer, primary_key=True)
    policy_version: Mapped[str | None] = mapped_column(String(128), nullable=True)
    reported_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    figures: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)

    run: Mapped[RunRow] = relationship(back_populates="steps")


Index("ix_episodes_task_created", EpisodeRow.task_id, EpisodeRow.created_at)
Index("ix_episodes_env_created", EpisodeRow.env, EpisodeRow.created_at)
Index("ix_episodes_owner_created", EpisodeRow.owner, EpisodeRow.created_at)
Index("ix_episodes_run_created", EpisodeRow.run_id, EpisodeRow.created_at)
Index("ix_runs_owner_created", RunRow.owner, RunRow.created_at)

#: Columns added since the first schema, as (table, column, SQL type): `db.create_schema` adds the
#: ones an existing store lacks (`create_all` makes missing tables, never missing columns). Every
#: one is nullable, so adding it keeps every row; an index on it is made after it exists.
ADDED_COLUMNS = (("episodes", "owner", f"VARCHAR({OWNER_CHARS})"),
                 ("episodes", "run_id", f"VARCHAR({RUN_ID_CHARS})"))
ADDED_INDEXES = ("ix_episodes_owner_created", "ix_episodes_run_created")

#: Indexes earlier schemas made, covered by the composite ones above: each cost every episode's insert.
OBSOLETE_INDEXES = ("ix_episodes_env", "ix_episodes_task_id")
