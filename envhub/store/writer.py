"""The buffered episode writer: the store's `EpisodeObserver`.

Observer calls append to an in-memory buffer and return (no I/O on the serving path). A
background task drains the buffer in batches, each written in one transaction in a worker
thread. When the database cannot be written (locked, full disk, lost connection) the batch goes
back to the head of the buffer and is retried with exponential backoff; nothing is dropped
unless the buffer is full (`envhub_store_dropped_total`) or an event is unwritable in itself
(isolated by writing the failed batch one event at a time). On shutdown, what could not be
written is spilled to JSON lines under `spill_dir` and replayed at the next start.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine
from sqlalchemy import exc as sa_exc

from envhub.store import events, metrics
from envhub.store.db import create_schema
from envhub.store.events import Event, Session
from envhub.store.repo import write_events

if TYPE_CHECKING:
    from envhub.episode import StepEntry
    from envhub.spec import Reverified, VerifyResult

log = logging.getLogger("envhub.store")

TRANSIENT = (sa_exc.OperationalError, sa_exc.InterfaceError, sa_exc.DisconnectionError, sa_exc.TimeoutError, OSError)


def is_transient(exc: BaseException) -> bool:
    """A fault of the database's availability (retry), not of the data (isolate and drop)."""
    if isinstance(exc, sa_exc.DBAPIError) and exc.connection_invalidated:
        return True
    return isinstance(exc, TRANSIENT)


class EpisodeWriter:
    def __init__(self, engine: Engine, *, capacity: int = 100_000, batch_size: int = 10_000, linger_s: float = 0.5,
                 backoff_s: tuple[float, float] = (0.1, 5.0), spill_dir: Path | None = None) -> None:
        self.engine = engine
        self.capacity = capacity
        self.batch_size = batch_size
        self.linger_s = linger_s
        self.backoff_min, self.backoff_max = backoff_s
        self.spill_dir = spill_dir
        self.dropped = 0
        self.write_errors = 0
        self.written = 0
        self.batches = 0  # transactions committed
        self.failing_since: float | None = None
        self._buf: deque[Event] = deque()
        self._inflight: list[Event] = []
        self._wake: asyncio.Event | None = None
        self._lingering: asyncio.Future[None] | None = None  # resolved when the gathering should end
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._schema_ready = False

    # -- EpisodeObserver (called on the event loop; must not block) ----------------------------------
    def session_created(self, session: Session) -> None:
        self.put(events.created(session))

    def step_done(self, session: Session, entry: StepEntry) -> None:
        self.put(events.step(session, entry))

    def verified(self, session: Session, result: VerifyResult) -> None:
        self.put(events.verified(session, result))

    def reverified(self, session: Session, answer: Reverified) -> None:
        self.put(events.reverified(session, answer))

    def session_closed(self, session: Session) -> None:
        self.put(events.closed(session))

    def put(self, event: Event) -> None:
        if len(self._buf) >= self.capacity:
            self.dropped += 1
            metrics.DROPPED.inc()
            if self.dropped == 1 or self.dropped % 1000 == 0:
                log.error("episode store buffer full (%d events): %d events dropped so far",
                          self.capacity, self.dropped)
            return
        self._buf.append(event)
        if self._wake is not None and not self._wake.is_set():
            self._wake.set()

    @property
    def pending(self) -> int:
        return len(self._buf) + len(self._inflight)

    def _gauge(self) -> None:
        metrics.PENDING.set(self.pending)

    # -- lifecycle ------------------------------------------------------------------------------------
    async def start(self) -> None:
        self._wake = asyncio.Event()
        self._stopping = False
        self._replay_spill()
        self._task = asyncio.create_task(self._run(), name="envhub-store-writer")
        if self._buf:
            self._wake.set()

    async def flush(self, timeout_s: float = 30.0) -> bool:
        """Wait until everything buffered is written; False if that did not happen in time."""
        deadline = time.monotonic() + timeout_s
        while self.pending:
            if time.monotonic() > deadline:
                return False
            self._hurry()
            await asyncio.sleep(0.02)
        return True

    async def stop(self, timeout_s: float = 10.0) -> None:
        """Write what is buffered; spill the rest to disk if the database does not take it in time."""
        self._stopping = True
        self._hurry()
        if self._wake is not None:
            self._wake.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), timeout=timeout_s)
            except TimeoutError:
                self._task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._task
        left = self._inflight + list(self._buf)
        self._inflight, self._buf = [], deque()
        if left:
            self._spill(left)
        self._gauge()

    # -- the drain loop -------------------------------------------------------------------------------
    async def _run(self) -> None:
        assert self._wake is not None
        delay = self.backoff_min
        while True:
            if not self._buf:
                if self._stopping:
                    return
                self._wake.clear()
                await self._wake.wait()
            if len(self._buf) < self.batch_size and not self._stopping:
                # Let events gather into one batch, also right after a write: each batch is a commit
                # (SQLite writes the same last pages of every index again) and a hand-over to the
                # writer's thread, and many small ones cost the server's CPU more than the rows do.
                await self._linger()
            if not self._buf:
                continue
            batch = [self._buf.popleft() for _ in range(min(self.batch_size, len(self._buf)))]
            self._inflight = batch
            self._gauge()  # per batch, not per event: the serving path only appends
            try:
                await asyncio.to_thread(self._write, batch)
            except Exception as exc:  # noqa: BLE001 - every failure is handled below
                self.write_errors += 1
                metrics.WRITE_ERRORS.inc()
                if is_transient(exc):
                    self._buf.extendleft(reversed(batch))
                    self._inflight = []
                    self._gauge()
                    self._failing(exc)
                    if self._stopping:
                        await asyncio.sleep(min(delay, 0.5))
                    else:
                        await asyncio.sleep(delay)
                    delay = min(delay * 2, self.backoff_max)
                    continue
                log.exception("episode store: a batch of %d events failed; writing them one by one", len(batch))
                await asyncio.to_thread(self._isolate, batch)
            self._inflight = []
            self._gauge()
            delay = self.backoff_min
            if self.failing_since is not None:
                log.warning("episode store writable again after %.1fs; %d events pending",
                            time.monotonic() - self.failing_since, self.pending)
                self.failing_since = None

    async def _linger(self) -> None:
        """Wait `linger_s`, or less when `flush` or `stop` want the events written now."""
        loop = asyncio.get_running_loop()
        self._lingering = loop.create_future()
        timer = loop.call_later(self.linger_s, self._hurry)
        try:
            await self._lingering
        finally:
            timer.cancel()
            self._lingering = None

    def _hurry(self) -> None:
        if self._lingering is not None and not self._lingering.done():
            self._lingering.set_result(None)

    def _failing(self, exc: BaseException) -> None:
        if self.failing_since is None:
            self.failing_since = time.monotonic()
            log.error("episode store unavailable (%s); buffering %d events and retrying",
                      str(exc).splitlines()[0][:300], self.pending)
        elif self.write_errors % 20 == 0:
            log.error("episode store still unavailable after %.0fs; %d events buffered",
                      time.monotonic() - self.failing_since, self.pending)

    def _write(self, batch: list[Event]) -> None:
        rows = events.storable(batch)
        if not self._schema_ready:
            create_schema(self.engine)
            self._schema_ready = True
        with self.engine.begin() as conn:
            write_events(conn, events=rows)
        self.written += len(batch)
        self.batches += 1
        metrics.WRITTEN.inc(len(batch))

    def _isolate(self, batch: list[Event]) -> None:
        for i, event in enumerate(batch):
            try:
                self._write([event])
            except Exception as exc:
                if is_transient(exc):  # the database went away meanwhile: keep the rest for retry
                    self._buf.extendleft(reversed(batch[i:]))
                    return
                self.dropped += 1
                metrics.DROPPED.inc()
                log.exception("episode store: dropped an unwritable %s event of episode %s",
                              event.get("kind"), events.episode_id(event))

    # -- spill ----------------------------------------------------------------------------------------
    def _spill(self, left: list[Event]) -> None:
        if self.spill_dir is None:
            self._lost(left, "no spill folder")
            return
        try:
            self.spill_dir.mkdir(parents=True, exist_ok=True)
            path = self.spill_dir / f"spill-{time.time_ns()}-{os.getpid()}.jsonl"
            with path.open("w", encoding="utf-8") as f:
                for e in left:
                    f.write(json.dumps(events.plain(e), ensure_ascii=False, default=str) + "\n")
            log.warning("episode store: %d unwritten events spilled to %s (replayed at next start)", len(left), path)
        except OSError as exc:
            self._lost(left, f"spilling failed: {exc}")

    def _lost(self, left: list[Event], why: str) -> None:
        self.dropped += len(left)
        metrics.DROPPED.inc(len(left))
        log.error("episode store: %d events lost at shutdown (%s)", len(left), why)

    def _replay_spill(self) -> None:
        if self.spill_dir is None or not self.spill_dir.is_dir():
            return
        for path in sorted(self.spill_dir.glob("spill-*.jsonl")):
            try:
                loaded = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
            except (OSError, ValueError):
                log.exception("episode store: unreadable spill file %s left in place", path)
                continue
            self._buf.extend(loaded)
            path.unlink()
            log.info("episode store: replaying %d events from %s", len(loaded), path)
        self._gauge()
