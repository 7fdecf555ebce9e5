"""Repository functions of the episode store: keyword-only, one transaction's worth each.

Writes are idempotent (insert-or-ignore, then updates), so a batch retried after an unclear
failure, or replayed from a spill file, never duplicates anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from itertools import chain
from typing import Any

from sqlalchemy import Connection, Select, and_, case, delete, func, select, update
from sqlalchemy.orm import Session, selectinload

from envhub.spec import HEADER_FIELDS, EpisodeHeader
from envhub.store.events import Event
from envhub.store.models import HEADER_COLUMN_OPTIONS, OWNER_CHARS, CheckRow, EpisodeRow, StepRow
from envhub.store.viewer import Viewer


def _ts(value: str | datetime | None) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(value)


def utc(value: datetime | None) -> datetime | None:
    """SQLite hands back naive datetimes; everything stored is UTC."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


class _Bulk:
    """The writes every episode makes (its row, its steps, its step count, its end) as SQL text
    handed to the driver: SQLAlchemy Core's per-row parameter processing cost the store's writer
    more CPU than SQLite's inserts did. Values are passed in the form SQLAlchemy's types store
    them, so the ORM reads these rows like any other (tests/store, SQLite and PostgreSQL)."""

    def __init__(self, dialect: str) -> None:
        pg = dialect == "postgresql"
        p = "%s" if pg else "?"
        self.ts = _ts if pg else _sqlite_ts
        #: SQLite stores a flag as 0/1; handed a bool, its driver looks for an adapter on every value.
        self.flag = bool if pg else int
        ep = [*HEADER_FIELDS, "owner", "ended_at", "step_count", "detail", "timings", "reset_s"]
        self.insert_episodes = _Insert(EpisodeRow.__tablename__, ep, "id", p,
                                       {"timings": f"{p}::json" if pg else p})
        st = ["episode_id", "idx", "tool", "arguments", "arguments_cut", "observation", "observation_cut",
              "is_error", "failure", "elapsed_s"]
        self.insert_steps = _Insert(StepRow.__tablename__, st, "episode_id, idx", p, {})
        self.raise_step_count = (f"UPDATE {EpisodeRow.__tablename__} SET step_count = {p} "
                                 f"WHERE id = {p} AND step_count < {p}")
        larger = "GREATEST" if pg else "max"
        self.close = (f"UPDATE {EpisodeRow.__tablename__} SET ended_at = {p}, "
                      f"step_count = {larger}(step_count, {p}) WHERE id = {p}")


class _Insert:
    """`INSERT ... VALUES (...), (...), ... ON CONFLICT DO NOTHING`: one statement for many rows
    costs the driver less than an `executemany` of one per row. Rows go in chunks of a few fixed
    sizes, so a handful of statement texts serve every batch: the driver keeps those prepared, and a
    text of any other length had SQLite parse and plan hundreds of placeholders again."""

    SIZES = (128, 32, 8, 2, 1)  # rows; the parameters stay far below SQLite's limit of 32,766

    def __init__(self, table: str, columns: list[str], key: str, p: str, casts: dict[str, str]) -> None:
        self.columns = tuple(columns)
        head = f"INSERT INTO {table} ({', '.join(columns)}) VALUES "
        row = "(" + ", ".join(casts.get(c, p) for c in columns) + ")"
        tail = f" ON CONFLICT ({key}) DO NOTHING"
        self.sql = {n: head + ", ".join([row] * n) + tail for n in self.SIZES}

    def run(self, conn: Connection, rows: list[tuple[Any, ...]]) -> None:
        i = 0
        for size in self.SIZES:
            sql = self.sql[size]
            while len(rows) - i >= size:
                conn.exec_driver_sql(sql, tuple(chain.from_iterable(rows[i:i + size])))
                i += size


_SECONDS: dict[tuple[int, ...], str] = {}  # "YYYY-MM-DD HH:MM:SS." of the seconds seen lately


def _sqlite_ts(value: str | datetime | None) -> str | None:
    """SQLAlchemy's SQLite storage of a datetime (naive UTC text, microseconds always written). The
    writer formats two per episode, and formatting cost it more than SQLite's inserts did: a batch's
    times share a few seconds, each formatted once (strftime took four times as long, `%02d` twice)."""
    value = _ts(value)
    if value is None:
        return None
    if value.tzinfo is not None and value.tzinfo is not UTC:
        value = value.astimezone(UTC)
    second = (value.year, value.month, value.day, value.hour, value.minute, value.second)
    head = _SECONDS.get(second)
    if head is None:
        if len(_SECONDS) > 4096:
            _SECONDS.clear()
        year, month, day, hour, minute, sec = second
        head = _SECONDS[second] = f"{year:04d}-{month:02d}-{day:02d} {hour:02d}:{minute:02d}:{sec:02d}."
    return head + str(value.microsecond + 1_000_000)[1:]


_BULK = {name: _Bulk(name) for name in ("sqlite", "postgresql")}


def write_events(conn: Connection, *, events: Sequence[Event]) -> None:
    """Apply flat events (see `events.storable`) in order, inside the caller's transaction."""
    bulk = _BULK[conn.dialect.name]
    flag, ts = bulk.flag, bulk.ts
    # Per episode: [its first event (for the header), created here, reset_s, highest step here, end].
    # A list, not a dict: the writer's thread reads and writes these for every event of every batch.
    rows: dict[str, list[Any]] = {}
    steps: list[tuple[Any, ...]] = []
    closes: list[tuple[list[Any], Any, int]] = []
    verdicts: list[Event] = []
    reverdicts: list[tuple[dict[str, Any], str]] = []
    for e in events:
        eid = e["id"]
        row = rows.get(eid)
        if row is None:
            row = rows[eid] = [e, False, None, 0, None]
        kind = e["kind"]
        if kind == "step":
            n = e["step"]
            steps.append((eid, n, e["tool"], e["arguments"], flag(e["arguments_cut"]), e["observation"],
                          flag(e["observation_cut"]), flag(e["is_error"]), e["failure"], e["elapsed_s"]))
            if n > row[3]:
                row[3] = n
        elif kind == "created":
            row[1], row[2] = True, e.get("reset_s")
        elif kind == "closed":
            closes.append((row, e["at"], e["step_count"]))
        elif kind == "verified":
            verdicts.append(e)
        elif kind == "reverified":
            reverdicts.append((e["reverify"], eid))
    # An episode whose `created` event is in this batch starts here: its row goes in with its step
    # count and end already set, without updates. (If the row exists all the same, this batch is a
    # retry of one that committed, and those updates would change nothing.) An episode that started
    # in an earlier batch gets its row only if that one was lost, and its updates either way.
    late_closes = []
    for row, at, n in closes:
        if row[1]:
            row[4] = at
            if n > row[3]:
                row[3] = n
        else:
            late_closes.append((ts(at), n, row[0]["id"]))
    raise_steps = [(n, eid, n) for eid, (_, born, _, n, _) in rows.items() if n and not born]
    episodes = [(*_header(h, ts), _owner(h.get("owner")), ts(end), n if born else 0, "", "{}", reset_s)
                for h, born, reset_s, n, end in rows.values()]
    raw = conn.exec_driver_sql
    bulk.insert_episodes.run(conn, episodes)
    bulk.insert_steps.run(conn, steps)
    if raise_steps:  # one executemany per kind of update, not one round trip per episode
        raw(bulk.raise_step_count, raise_steps)
    for e in verdicts:
        _write_verdict(conn, e["id"], e)
    if late_closes:
        raw(bulk.close, late_closes)
    for second, eid in reverdicts:
        conn.execute(update(EpisodeRow).where(EpisodeRow.id == eid).values(reverify=second))


#: Where in `HEADER_FIELDS` a time is (stored through the dialect's `ts`), and the ORM's default of
#: each field that has one (for an event without it: a spill file an earlier version wrote).
_HEADER_TIMES = tuple(i for i, (n, f) in enumerate(EpisodeHeader.model_fields.items()) if f.annotation is datetime)
_HEADER_DEFAULTS = tuple((i, HEADER_COLUMN_OPTIONS[n]["default"]) for i, n in enumerate(HEADER_FIELDS)
                         if "default" in HEADER_COLUMN_OPTIONS.get(n, {}))


def _header(event: Event, ts: Any) -> list[Any]:
    """An event's header values as the episodes insert takes them, in `HEADER_FIELDS`' order."""
    values = [event.get(name) for name in HEADER_FIELDS]
    for i in _HEADER_TIMES:
        values[i] = ts(values[i])
    for i, default in _HEADER_DEFAULTS:
        values[i] = values[i] or default
    return values


def _owner(owner: str | None) -> str | None:
    return owner[:OWNER_CHARS] if owner else None


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
              policy_version: str | None = None, harness: str | None = None, run_id: str | None = None) -> Select:
    if run_id:
        stmt = stmt.where(EpisodeRow.run_id == run_id)
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


def _visible(stmt: Select, viewer: Viewer) -> Select:
    """Only the episodes `viewer` may read: all for an admin, its own for an owner, none for the public."""
    return stmt.where(viewer.may_read_rows(EpisodeRow.owner))


def list_episodes(session: Session, *, viewer: Viewer, env: str | None = None, task_id: str | None = None,
                  failure_class: str | None = None, policy_version: str | None = None, harness: str | None = None,
                  run_id: str | None = None, limit: int = 50, offset: int = 0) -> tuple[list[EpisodeRow], int]:
    """The episodes `viewer` may read, newest first, with the total of those that match."""
    where = {"env": env, "task_id": task_id, "failure_class": failure_class, "policy_version": policy_version,
             "harness": harness, "run_id": run_id}
    total = session.scalar(_visible(_filtered(select(func.count()).select_from(EpisodeRow), **where), viewer)) or 0
    rows = session.scalars(_visible(_filtered(select(EpisodeRow), **where), viewer)
                           .order_by(EpisodeRow.created_at.desc(), EpisodeRow.id).limit(limit).offset(offset)).all()
    return list(rows), total


def count_episodes(session: Session, *, env: str | None = None, task_id: str | None = None) -> int:
    """Every recorded episode that matches, whoever ran it (an aggregate: public)."""
    stmt = _filtered(select(func.count()).select_from(EpisodeRow), env=env, task_id=task_id, failure_class=None)
    return session.scalar(stmt) or 0


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


def failure_mix(session: Session, *, env: str | None = None, task_id: str | None = None) -> dict[str, Any]:
    """Episodes per failure class, the mean reward of the judged trainable ones, and how many of those
    were verified and passed (an aggregate)."""
    verified, solved = _solved_counts()
    stmt = _filtered(select(EpisodeRow.failure_class, func.count(), func.count(EpisodeRow.reward),
                            func.sum(EpisodeRow.reward), verified, solved), env=env, task_id=task_id,
                     failure_class=None)
    classes: dict[str, int] = {}
    judged, reward_sum, n_verified, n_solved = 0, 0.0, 0, 0
    for failure, n, rewarded, total, v, k in session.execute(stmt.group_by(EpisodeRow.failure_class)).all():
        classes[failure or "unverified"] = n
        n_verified, n_solved = n_verified + int(v or 0), n_solved + int(k or 0)
        if failure in ("ok", "agent_error", "agent_timeout"):  # masked classes carry no reward
            judged += rewarded
            reward_sum += total or 0.0
    return {"failure_classes": classes, "mean_reward": round(reward_sum / judged, 4) if judged else None,
            "verified": n_verified, "solved": n_solved}


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


def by_policy(session: Session, *, viewer: Viewer, env: str | None = None, task_id: str | None = None,
              limit: int = 50) -> list[dict[str, Any]]:
    """Results per policy version of the episodes `viewer` may read (a policy's name is its owner's),
    most recently active first: episodes, solved, mean reward."""
    verified, solved = _solved_counts()
    last = func.max(EpisodeRow.created_at)
    stmt = _filtered(select(EpisodeRow.policy_version, func.count(), verified, solved,
                            func.avg(case((EpisodeRow.trainable.is_(True), EpisodeRow.reward), else_=None)), last),
                     env=env, task_id=task_id, failure_class=None)
    stmt = _visible(stmt, viewer).group_by(EpisodeRow.policy_version).order_by(last.desc()).limit(limit)
    rows = session.execute(stmt).all()
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
