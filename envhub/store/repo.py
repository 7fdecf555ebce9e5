"""Repository functions of the episode store: keyword-only, one transaction's worth each.

Writes are idempotent (insert-or-ignore, then updates), so a batch retried after an unclear
failure, or replayed from a spill file, never duplicates anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Select, and_, bindparam, case, delete, func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session, selectinload

from envhub.store.events import Event
from envhub.store.models import CheckRow, EpisodeRow, StepRow


def _ts(value: str | datetime | None) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(value)


def utc(value: datetime | None) -> datetime | None:
    """SQLite hands back naive datetimes; everything stored is UTC."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def _insert(conn: Connection, model: type, rows: list[dict[str, Any]], keys: list[str]) -> None:
    if not rows:
        return
    insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
    conn.execute(insert(model).on_conflict_do_nothing(index_elements=keys), rows)


def write_events(conn: Connection, *, events: Sequence[Event]) -> None:
    """Apply plain events (see `events.plain`) in order, inside the caller's transaction."""
    headers: dict[str, dict[str, Any]] = {}
    for e in events:
        h = e["episode"]
        headers.setdefault(h["id"], {"id": h["id"], "env": h["env"], "task_id": h["task_id"],
                                     "harness": h.get("harness") or "plain", "policy_version": h.get("policy_version"),
                                     "created_at": _ts(h["created_at"]), "step_count": 0, "detail": "",
                                     "timings": {}, "reset_s": None, "ended_at": None})
        if e["kind"] == "created":
            headers[h["id"]]["reset_s"] = e.get("reset_s")
    steps = [{"episode_id": e["episode"]["id"], "idx": e["entry"]["step"],
              **{k: v for k, v in e["entry"].items() if k != "step"}} for e in events if e["kind"] == "step"]
    last_step: dict[str, int] = {}
    for row in steps:
        last_step[row["episode_id"]] = max(last_step.get(row["episode_id"], 0), row["idx"])
    closes = [{"eid": e["episode"]["id"], "at": _ts(e["at"]), "n": e["step_count"]} for e in events
              if e["kind"] == "closed"]
    # An episode whose `created` event is in this batch starts here: its row goes in with its step
    # count and end already set, without updates. (If the row exists all the same, this batch is a
    # retry of one that committed, and those updates would change nothing.)
    born = {e["episode"]["id"] for e in events if e["kind"] == "created"}
    for eid in born & last_step.keys():
        headers[eid]["step_count"] = last_step.pop(eid)
    for c in [c for c in closes if c["eid"] in born]:
        row = headers[c["eid"]]
        row["ended_at"], row["step_count"] = c["at"], max(row["step_count"], c["n"])
        closes.remove(c)
    _insert(conn, EpisodeRow, list(headers.values()), ["id"])
    _insert(conn, StepRow, steps, ["episode_id", "idx"])
    # One executemany per kind of update, not one round trip per episode.
    _update_many(conn, update(EpisodeRow).where(EpisodeRow.id == bindparam("eid"),
                                                EpisodeRow.step_count < bindparam("n"))
                 .values(step_count=bindparam("n")), [{"eid": eid, "n": n} for eid, n in last_step.items()])
    for e in events:
        if e["kind"] == "verified":
            _write_verdict(conn, e["episode"]["id"], e)
    larger = func.max if conn.dialect.name == "sqlite" else func.greatest
    _update_many(conn, update(EpisodeRow).where(EpisodeRow.id == bindparam("eid"))
                 .values(ended_at=bindparam("at"), step_count=larger(EpisodeRow.step_count, bindparam("n"))),
                 closes)


def _update_many(conn: Connection, stmt: Any, params: list[dict[str, Any]]) -> None:
    if params:
        conn.execute(stmt, params)


def _write_verdict(conn: Connection, eid: str, e: Event) -> None:
    r = e["result"]
    timings = r.get("timings") or {}
    conn.execute(update(EpisodeRow).where(EpisodeRow.id == eid).values(
        reward=r["reward"], passed=r["passed"], failure_class=r["failure_class"], trainable=r["trainable"],
        detail=r.get("detail", ""), verifier_sha256=(r.get("verifier") or {}).get("sha256"),
        verify_s=timings.get("total_s"), timings=timings, verified_at=_ts(e["at"])))
    conn.execute(delete(CheckRow).where(CheckRow.episode_id == eid))
    checks = [{"episode_id": eid, "pos": i, "check_id": c["id"], "kind": c.get("kind", "hard"),
               "weight": c.get("weight", 1.0), "passed": c["passed"], "score": c.get("score", 0.0),
               "message": c.get("message", "")} for i, c in enumerate(r.get("checks", []))]
    if checks:
        conn.execute(CheckRow.__table__.insert(), checks)


# -- reads ---------------------------------------------------------------------------------------

def _filtered(stmt: Select, *, env: str | None, task_id: str | None, failure_class: str | None,
              policy_version: str | None = None, harness: str | None = None) -> Select:
    if policy_version:
        stmt = stmt.where(EpisodeRow.policy_version == policy_version)
    if harness:
        stmt = stmt.where(EpisodeRow.harness == harness)
    if env:
        stmt = stmt.where(EpisodeRow.env == env)
    if task_id:
        stmt = stmt.where(EpisodeRow.task_id == task_id)
    if failure_class == "unverified":
        stmt = stmt.where(EpisodeRow.failure_class.is_(None))
    elif failure_class:
        stmt = stmt.where(EpisodeRow.failure_class == failure_class)
    return stmt


def list_episodes(session: Session, *, env: str | None = None, task_id: str | None = None,
                  failure_class: str | None = None, policy_version: str | None = None, harness: str | None = None,
                  limit: int = 50, offset: int = 0) -> tuple[list[EpisodeRow], int]:
    """Newest first, with the total that matches."""
    where = {"env": env, "task_id": task_id, "failure_class": failure_class, "policy_version": policy_version,
             "harness": harness}
    total = session.scalar(_filtered(select(func.count()).select_from(EpisodeRow), **where)) or 0
    rows = session.scalars(_filtered(select(EpisodeRow), **where)
                           .order_by(EpisodeRow.created_at.desc(), EpisodeRow.id).limit(limit).offset(offset)).all()
    return list(rows), total


def get_episode(session: Session, *, episode_id: str) -> EpisodeRow | None:
    return session.scalar(select(EpisodeRow).where(EpisodeRow.id == episode_id)
                          .options(selectinload(EpisodeRow.checks)))


def get_steps(session: Session, *, episode_id: str, offset: int = 0, limit: int = 50) -> list[StepRow]:
    return list(session.scalars(select(StepRow).where(StepRow.episode_id == episode_id).order_by(StepRow.idx)
                                .limit(limit).offset(offset)).all())


def count_steps(session: Session, *, episode_id: str) -> int:
    return session.scalar(select(func.count()).select_from(StepRow).where(StepRow.episode_id == episode_id)) or 0


def latency_samples(session: Session, *, env: str | None = None, task_id: str | None = None,
                    limit: int = 10_000) -> dict[str, list[float]]:
    """Recent reset, step and verify durations (seconds), newest `limit` of each."""
    eps = _filtered(select(EpisodeRow.reset_s, EpisodeRow.verify_s), env=env, task_id=task_id, failure_class=None)
    rows = session.execute(eps.order_by(EpisodeRow.created_at.desc()).limit(limit)).all()
    steps = select(StepRow.elapsed_s).join(EpisodeRow, EpisodeRow.id == StepRow.episode_id)
    steps = _filtered(steps, env=env, task_id=task_id, failure_class=None)
    step_vals = session.scalars(steps.where(StepRow.elapsed_s.is_not(None))
                                .order_by(EpisodeRow.created_at.desc()).limit(limit)).all()
    return {"reset": [r for r, _ in rows if r is not None], "step": [float(s) for s in step_vals],
            "verify": [v for _, v in rows if v is not None]}


def outcomes(session: Session, *, env: str | None = None, task_id: str | None = None,
             limit: int = 20_000) -> list[tuple[datetime, float | None, str | None]]:
    """(created_at, reward, failure_class) of recent episodes, oldest first, for the charts."""
    stmt = _filtered(select(EpisodeRow.created_at, EpisodeRow.reward, EpisodeRow.failure_class), env=env,
                     task_id=task_id, failure_class=None)
    rows = session.execute(stmt.order_by(EpisodeRow.created_at.desc()).limit(limit)).all()
    return [(utc(c), r, f) for c, r, f in reversed(rows)]  # type: ignore[misc]


def by_harness(session: Session, *, env: str | None = None, task_id: str | None = None) -> dict[str, dict[str, Any]]:
    """Per harness skin: episodes, their failure classes, and the mean reward of the judged
    trainable ones (where a model depends on a tool schema, the rewards differ)."""
    stmt = _filtered(select(EpisodeRow.harness, EpisodeRow.failure_class, func.count(),
                            func.count(EpisodeRow.reward), func.sum(EpisodeRow.reward)),
                     env=env, task_id=task_id, failure_class=None)
    stmt = stmt.group_by(EpisodeRow.harness, EpisodeRow.failure_class)
    out: dict[str, dict[str, Any]] = {}
    for harness, failure, n, judged, total in session.execute(stmt).all():
        row = out.setdefault(harness, {"episodes": 0, "failure_classes": {}, "judged": 0, "reward_sum": 0.0})
        row["episodes"] += n
        row["failure_classes"][failure or "unverified"] = n
        if failure in ("ok", "agent_error", "agent_timeout"):  # masked classes carry no reward
            row["judged"] += judged
            row["reward_sum"] += total or 0.0
    return {h: {"episodes": r["episodes"], "failure_classes": r["failure_classes"],
                "mean_reward": round(r["reward_sum"] / r["judged"], 4) if r["judged"] else None}
            for h, r in sorted(out.items())}


def counts_by(session: Session, *, column: str, env: str | None = None) -> dict[str, int]:
    """Episode counts grouped by `env` or `task_id`."""
    col = getattr(EpisodeRow, column)
    stmt = select(col, func.count()).group_by(col)
    if env:
        stmt = stmt.where(EpisodeRow.env == env)
    return {k: n for k, n in session.execute(stmt).all()}


def _solved_counts() -> tuple[Any, Any]:
    """(trainable verified episodes, of which passed): a solve rate leaves out masked infra faults."""
    trainable = EpisodeRow.trainable.is_(True)
    return (func.sum(case((trainable, 1), else_=0)),
            func.sum(case((and_(trainable, EpisodeRow.passed.is_(True)), 1), else_=0)))


def by_policy(session: Session, *, env: str | None = None, task_id: str | None = None,
              limit: int = 50) -> list[dict[str, Any]]:
    """Results per policy version, most recently active first: episodes, solved, mean reward."""
    verified, solved = _solved_counts()
    last = func.max(EpisodeRow.created_at)
    stmt = _filtered(select(EpisodeRow.policy_version, func.count(), verified, solved,
                            func.avg(case((EpisodeRow.trainable.is_(True), EpisodeRow.reward), else_=None)), last),
                     env=env, task_id=task_id, failure_class=None)
    rows = session.execute(stmt.group_by(EpisodeRow.policy_version).order_by(last.desc()).limit(limit)).all()
    return [{"policy_version": p, "episodes": n, "verified": int(v or 0), "solved": int(k or 0), "mean_reward": r,
             "last": utc(t)} for p, n, v, k, r, t in rows]


def task_outcomes(session: Session, *, task_ids: Sequence[str], limit: int = 20_000) -> dict[str, dict[str, Any]]:
    """Per task: trainable verified episodes, how many passed, and recent verify durations."""
    if not task_ids:
        return {}
    verified, solved = _solved_counts()
    out: dict[str, dict[str, Any]] = {t: {"verified": 0, "solved": 0, "verify_s": []} for t in task_ids}
    for task, v, k in session.execute(select(EpisodeRow.task_id, verified, solved)
                                      .where(EpisodeRow.task_id.in_(task_ids)).group_by(EpisodeRow.task_id)):
        out[task].update(verified=int(v or 0), solved=int(k or 0))
    durations = session.execute(select(EpisodeRow.task_id, EpisodeRow.verify_s)
                                .where(EpisodeRow.task_id.in_(task_ids), EpisodeRow.verify_s.is_not(None))
                                .order_by(EpisodeRow.created_at.desc()).limit(limit))
    for task, seconds in durations:
        out[task]["verify_s"].append(seconds)
    return out
