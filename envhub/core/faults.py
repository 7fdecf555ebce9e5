"""Fault injection (off by default): environment faults at a set rate on reset, step and verify,
so a trainer's masking path can be exercised end to end against a real server.

`ENVHUB_FAULT_RATE=0.1` makes each chosen operation (`ENVHUB_FAULT_OPS`, default all three) fail
with that probability as an `env_error` — a fault no policy could cause, never a reward of 0.
"""

from __future__ import annotations

import random

from envhub.config import Settings
from envhub.errors import EnvError

FAULT_OPS = ("reset", "step", "verify")


class FaultInjector:
    def __init__(self, settings: Settings) -> None:
        self.rate = settings.fault_rate
        self.ops = frozenset(settings.fault_ops)
        unknown = self.ops - set(FAULT_OPS)
        if unknown:
            raise ValueError(f"ENVHUB_FAULT_OPS: unknown operation(s) {sorted(unknown)}; choose from {FAULT_OPS}")
        self._rng = random.Random(settings.fault_seed)
        self.injected = {op: 0 for op in FAULT_OPS}

    def hit(self, op: str) -> EnvError | None:
        """An injected fault for this call of `op`, or None (always None when the rate is 0)."""
        if self.rate <= 0 or op not in self.ops or self._rng.random() >= self.rate:
            return None
        self.injected[op] += 1
        return EnvError(f"injected environment fault on {op} (ENVHUB_FAULT_RATE={self.rate:g})")
