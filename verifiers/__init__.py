"""The verifier library task verifiers import. No task-specific code lives here.

Verifiers run inside the verifier sandbox with the final state read-only at `STATE`
(`/workspace`). Every helper checks that what it reads exists before judging it, so a missing
file is a failed check, never a vacuous pass.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

STATE = Path(os.environ.get("ENVHUB_STATE", "/workspace"))
TASK = Path(os.environ.get("ENVHUB_TASK", "/verify/task"))
TRAJECTORY = Path(os.environ.get("ENVHUB_TRAJECTORY", "/verify/trajectory.jsonl"))


class EnvFault(Exception):
    """Raise when the verifier sees an environment fault (not the agent's doing): env_error."""


def check(id: str, kind: str = "hard", weight: float = 1.0):  # noqa: A002 - matches the wire name
    """Decorator naming one verifier check: `@check("report-exists")`."""
    if kind not in ("hard", "collateral", "anti_hack", "soft", "quality"):
        raise ValueError(f"unknown check kind {kind!r}")
    return pytest.mark.check(id=id, kind=kind, weight=weight)


__all__ = ["STATE", "TASK", "TRAJECTORY", "EnvFault", "check"]
