"""Started session containers (`Box`es) and the warm pool that keeps some ready per limits shape."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from envhub.sandbox.base import SandboxLimits
from envhub.sandbox.docker.cgroup import Cgroup

log = logging.getLogger("envhub.sandbox.docker")


@dataclass(eq=False)
class Box:
    """A started container with its shell: what the pool holds and a sandbox owns."""

    cid: str
    root: Path
    cgroup: Cgroup
    init_pid: int
    shell: asyncio.subprocess.Process
    shell_pid: int
    limits: SandboxLimits
    #: Host pids that keep the container and its shell alive: PID 1, its `sleep`, the shell.
    core_pids: frozenset[int] = frozenset()
    loop: asyncio.AbstractEventLoop = field(default_factory=asyncio.get_running_loop)

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"


def limits_key(limits: SandboxLimits) -> tuple[float | int | None, ...]:
    """Containers are interchangeable only when every limit the engine enforces matches."""
    return (limits.memory_mb, limits.processes, limits.cpu_s, limits.file_mb, limits.open_files, limits.cpus)


class WarmPool:
    """Keeps `size` started boxes per limits shape, refilled in the background after each take."""

    def __init__(self, size: int, launch: Callable[[SandboxLimits], Awaitable[Box]],
                 remove: Callable[[Box], Awaitable[None]]) -> None:
        self.size = size
        self._launch = launch
        self._remove = remove
        self.boxes: dict[tuple, list[Box]] = {}
        self._filling: dict[tuple, asyncio.Task[None]] = {}

    def take(self, limits: SandboxLimits) -> Box | None:
        """A ready box of this shape (None when the pool has none), and a refill behind it."""
        key = limits_key(limits)
        loop = asyncio.get_running_loop()
        boxes = self.boxes.get(key, [])
        box = None
        while boxes and box is None:
            candidate = boxes.pop()
            if candidate.loop is loop and candidate.shell.returncode is None:
                box = candidate
            else:
                asyncio.ensure_future(self._remove(candidate))  # stale: another event loop, or dead
        self._refill(key, limits)
        return box

    def _refill(self, key: tuple, limits: SandboxLimits) -> None:
        if self.size <= 0:
            return
        task = self._filling.get(key)
        if task is not None and not task.done():
            return

        async def fill() -> None:
            while len(self.boxes.setdefault(key, [])) < self.size:
                try:
                    box = await self._launch(limits)
                except Exception as e:  # the engine may be down: the next start() tries cold and reports it
                    log.warning("warm pool refill failed: %s", e)
                    return
                self.boxes.setdefault(key, []).append(box)

        self._filling[key] = asyncio.ensure_future(fill())

    async def warm(self, limits: SandboxLimits) -> None:
        """Fill the pool for `limits` now."""
        key = limits_key(limits)
        self._refill(key, limits)
        task = self._filling.get(key)
        if task is not None:
            await task

    async def drain(self) -> None:
        """Stop refilling and remove every pooled box of this event loop."""
        loop = asyncio.get_running_loop()
        filling = [t for t in self._filling.values() if t.get_loop() is loop]
        for task in self._filling.values():
            task.cancel()
        # A launch cut short removes its own container: wait for that while the engine client is open.
        await asyncio.gather(*filling, return_exceptions=True)
        self._filling.clear()
        boxes = [b for bs in self.boxes.values() for b in bs]
        self.boxes.clear()
        await asyncio.gather(*(self._remove(b) for b in boxes if b.loop is loop), return_exceptions=True)
