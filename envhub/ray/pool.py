"""The pool's controller: replicas per family between a min and a max, watched and autoscaled."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import math
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp

import ray
from envhub.ray.replica import HubReplica, actor_options

log = logging.getLogger("envhub.ray")


@dataclass
class PoolConfig:
    families: list[str]
    min_replicas: int = 1
    max_replicas: int = 3
    #: A replica's session capacity (its ENVHUB_MAX_SESSIONS).
    max_sessions: int = 32
    #: Scale up when a family's sessions exceed this share of its replicas' capacity.
    target_utilization: float = 0.75
    #: A family stays over-provisioned this long before an idle replica is removed.
    downscale_after_s: float = 10.0
    #: A replica not placed and started within this long is given up (e.g. no node has its resources).
    start_timeout_s: float = 120.0
    #: Placements tried for one replica whose actor dies before it serves (see `RayPool.add`).
    start_attempts: int = 3
    #: Settings passed to every replica (ENVHUB_* names without the prefix). Replicas serve the cluster's
    #: network without keys unless keys are set (as compose's do); sessions still belong to their caller.
    settings: dict[str, Any] = field(default_factory=lambda: {"auth": "off"})
    #: After a replica fails to start, its family waits this long before the next try.
    retry_start_after_s: float = 10.0
    resources: dict[str, dict[str, Any]] = field(default_factory=dict)
    docker_sandbox: bool = False


@dataclass
class Slot:
    """One replica as the controller sees it."""
    rid: str
    family: str
    handle: Any
    url: str | None = None
    state: str = "starting"  # starting | live | draining | dead
    active: int = 0
    capacity: int = 0
    refused: int = 0  # consecutive refused probes
    idle_since: float | None = None
    dead: asyncio.Event = field(default_factory=asyncio.Event)


class RayPool:
    def __init__(self, config: PoolConfig, tick_s: float = 0.5) -> None:
        self.config = config
        self.tick_s = tick_s
        self.slots: dict[str, Slot] = {}
        self._ids = itertools.count(1)
        self._over_since: dict[str, float] = {}
        self._failed_at: dict[str, float] = {}
        self._tasks: list[asyncio.Task[Any]] = []
        self._starting: set[asyncio.Task[Any]] = set()
        self.http: aiohttp.ClientSession | None = None
        self._actor = ray.remote(HubReplica)

    # -- lifecycle ------------------------------------------------------------------------------------
    async def start(self) -> None:
        self.http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=2, sock_connect=1))
        starts = [self.add(f) for f in self.config.families for _ in range(self.config.min_replicas)]
        await asyncio.gather(*starts)
        self._tasks.append(asyncio.create_task(self._loop()))

    async def stop(self) -> None:
        for t in [*self._tasks, *self._starting]:
            t.cancel()
        for slot in self.slots.values():
            if slot.state != "dead":
                ray.kill(slot.handle, no_restart=True)
        if self.http:
            await self.http.close()

    def live(self, family: str | None = None) -> list[Slot]:
        return [s for s in self.slots.values() if s.state == "live" and family in (None, s.family)]

    def by_url(self, url: str) -> Slot | None:
        return next((s for s in self.slots.values() if s.url == url), None)

    # -- adding and removing replicas -----------------------------------------------------------------
    async def add(self, family: str) -> Slot:
        """Start one replica of `family` and wait until it serves (or give it up).

        A replica whose actor dies before it serves is placed again, up to `start_attempts` times
        within `start_timeout_s`: its node was lost while it started (Ray keeps placing on a killed
        node until its health check finds it dead), which says nothing about the next placement."""
        rid = f"{family}-{next(self._ids)}"
        opts = actor_options(family, self.config.docker_sandbox, self.config.resources)
        slot = Slot(rid=rid, family=family, handle=None, capacity=self.config.max_sessions)
        self.slots[rid] = slot
        deadline = time.monotonic() + self.config.start_timeout_s
        for attempt in range(1, self.config.start_attempts + 1):
            slot.handle = self._actor.options(**opts).remote([family], self.config.max_sessions,
                                                             self.config.settings)
            try:
                slot.url = await asyncio.wait_for(slot.handle.address.remote(),
                                                  max(deadline - time.monotonic(), 0.1))
                break
            except ray.exceptions.RayActorError as e:
                if attempt < self.config.start_attempts and time.monotonic() < deadline \
                        and slot.state == "starting":
                    log.warning("replica %s died while it started (%r): placing it again", rid, e)
                    continue
                failure: BaseException = e
            except (TimeoutError, ray.exceptions.RayError) as e:
                failure = e
            log.warning("replica %s did not start: %r", rid, failure)
            self._failed_at[family] = time.monotonic()
            self._mark_dead(slot, kill=True)
            return slot
        if slot.state == "starting":
            slot.state = "live"
            log.info("replica %s live at %s", rid, slot.url)
        return slot

    def add_soon(self, family: str) -> None:
        task = asyncio.create_task(self.add(family))
        self._starting.add(task)
        task.add_done_callback(self._starting.discard)

    def remove(self, rid: str) -> bool:
        """Drain a replica: no new sessions; it is stopped when its last session ends."""
        slot = self.slots.get(rid)
        if slot is None or slot.state not in ("live", "starting"):
            return False
        slot.state = "draining"
        log.info("replica %s draining", rid)
        return True

    def _mark_dead(self, slot: Slot, kill: bool = False) -> None:
        if slot.state == "dead":
            return
        slot.state = "dead"
        slot.dead.set()
        log.warning("replica %s (%s) is gone", slot.rid, slot.url)
        if kill:
            ray.kill(slot.handle, no_restart=True)

    # -- watching ---------------------------------------------------------------------------------------
    async def confirm_dead(self, slot: Slot, within_s: float = 15.0) -> bool:
        """After a call to `slot` broke: is the replica gone, rather than one connection? Its port
        refusing settles it at once; a node that vanished (connections time out) is settled by Ray's
        node health check (about 3 s with `HEALTH_CHECK`), which this waits for, up to `within_s`."""
        deadline = time.monotonic() + within_s
        while slot.state != "dead" and time.monotonic() < deadline:
            slot.refused = max(slot.refused, 2)  # one more refusal settles it
            await self._check(slot)
            if slot.refused == 0:
                return False  # it answered: the replica is up
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(slot.dead.wait(), 1)
        return slot.state == "dead"

    async def _check(self, slot: Slot) -> None:
        """Ray's word (the actor died, its node died) or the replica's port refusing three times in a row."""
        assert self.http
        try:
            ok = await asyncio.wait_for(slot.handle.ping.remote(), 3)
        except ray.exceptions.RayActorError:
            self._mark_dead(slot)
            return
        except (TimeoutError, ray.exceptions.RayError):
            ok = True  # busy or slow: inconclusive
        if not ok:
            self._mark_dead(slot, kill=True)
            return
        try:
            async with self.http.get(f"{slot.url}/capacity") as r:
                c = await r.json()
                slot.active, slot.capacity, slot.refused = int(c["active_sessions"]), int(c["max_sessions"]), 0
        except (aiohttp.ClientConnectorError, ConnectionError):
            slot.refused += 1
            if slot.refused >= 3:
                self._mark_dead(slot, kill=True)
        except (TimeoutError, aiohttp.ClientError, ValueError, KeyError):
            slot.refused = max(slot.refused, 1)  # a slow answer says nothing either way
        if slot.state == "draining" and slot.active == 0:
            slot.state = "dead"  # drained: stopped on purpose, nothing lost
            ray.kill(slot.handle, no_restart=True)
            log.info("replica %s removed", slot.rid)

    def desired(self, family: str) -> int:
        live = self.live(family)
        active = sum(s.active for s in live)
        want = math.ceil(active / (self.config.max_sessions * self.config.target_utilization))
        if live and all(s.active >= s.capacity for s in live):
            want = max(want, len(live) + 1)
        return max(self.config.min_replicas, min(self.config.max_replicas, want))

    def _autoscale(self, now: float) -> None:
        for family in self.config.families:
            live = self.live(family)
            starting = [s for s in self.slots.values() if s.family == family and s.state == "starting"]
            want = self.desired(family)
            have = len(live) + len(starting)
            if want > have:
                self._over_since.pop(family, None)
                if now - self._failed_at.get(family, -math.inf) < self.config.retry_start_after_s:
                    continue
                for _ in range(want - have):
                    self.add_soon(family)
            elif want < len(live) and not starting:
                since = self._over_since.setdefault(family, now)
                idle = [s for s in live if s.active == 0]
                if now - since >= self.config.downscale_after_s and idle:
                    self.remove(idle[-1].rid)
                    self._over_since.pop(family, None)
            else:
                self._over_since.pop(family, None)

    async def _loop(self) -> None:
        while True:
            try:
                watched = [s for s in self.slots.values() if s.state in ("live", "draining")]
                await asyncio.gather(*(self._check(s) for s in watched))
                self._autoscale(time.monotonic())
            except Exception:  # noqa: BLE001 - the controller must survive anything
                log.exception("pool tick failed")
            await asyncio.sleep(self.tick_s)

    def table(self) -> list[dict[str, Any]]:
        return [{"id": s.rid, "family": s.family, "url": s.url, "state": s.state, "active": s.active,
                 "capacity": s.capacity} for s in self.slots.values()]
