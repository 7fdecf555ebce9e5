"""ORM rows of the episode store (SQLAlchemy 2.0 typed mappings).

Rows are storage shapes only; what pages and the CLI show is built from them in
`envhub.store.schemas`, so a column can change without changing what a client sees.
"""

from __future__ import annotations

from datetime import datetime
from types import NoneType
from typing import Any, get_args

from pydantic.fields import FieldInfo
from sqlalchemy import JSON, Boolean, DateTime, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, MappedColumn, mapped_column, relationship
from sqlalchemy.types import TypeEngine

from envhub.spec import EpisodeHeader, Stored


class Base(DeclarativeBase):
    pass


OWNER_CHARS = 80  # `key:NAME:HASH16` or `token:HASH32` (a key's name is short by convention; longer is cut)
RUN_ID_CHARS = 64  # `envhub.spec.RUN_ID_PATTERN`

#: What each header field's column needs beyond its type: the key, an index, the ORM's default. (env
#: and task_id are filtered by the composite indexes below, env or task first: no index of their own
#: to keep up.) `run_id` is `RunRow.id`, but not a foreign key: a reset may name a run before it is
#: reported, and a run's figures count only its owner's episodes.
HEADER_COLUMN_OPTIONS: dict[str, dict[str, Any]] = {
    "id": {"primary_key": True}, "harness": {"default": "plain"}, "created_at": {"index": True}}


def header_column(name: str, field: FieldInfo) -> MappedColumn[Any]:
    """The column of the header field `name` (`envhub.spec.EpisodeHeader`): its type from the field's
    (a text as wide as its `Stored` note says), nullable where the field may be None."""
    kinds = get_args(field.annotation) or (field.annotation,)
    kind = next(k for k in kinds if k is not NoneType)
    sql: TypeEngine[Any]
    if kind is str:
        sql = String(next(m.chars for m in field.metadata if isinstance(m, Stored)))
    else:
        sql = {datetime: DateTime(timezone=True), int: Integer(), float: Float(), bool: Boolean()}[kind]
    # Ahead of the row's own columns (`owner` between `id` and the rest), so a new store's table has
    # its columns in the order every earlier version made them.
    order = -2 if name == "id" else -1
    return mapped_column(sql, nullable=NoneType in kinds, sort_order=order, **HEADER_COLUMN_OPTIONS.get(name, {}))


class EpisodeHeaderColumns:
    """The header's columns: one per field of its declaration (`envhub.spec.EpisodeHeader`), made
    below, so a field added there is a column here (and in `repo`'s insert) without a word more."""


for _name, _field in EpisodeHeader.model_fields.items():
    setattr(EpisodeHeaderColumns, _name, header_column(_name, _field))


class EpisodeRow(EpisodeHeaderColumns, Base):
    """One session: who ran what (`EpisodeHeaderColumns`), how it ended, how long each phase took."""

    __tablename__ = "episodes"

    #: Who ran it (`envhub.store.viewer`); None: recorded before owners were kept (admins only).
    owner: Mapped[str | None] = mapped_column(String(OWNER_CHARS), nullable=True, sort_order=-1)
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
    #: The verifier's second verdict on the same final state (`reward`, `passed`, `failure_class`,
    #: `flipped`), for the episodes a trainer sampled (`POST /v1/sessions/{id}/reverify`); else None.
    reverify: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)

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
