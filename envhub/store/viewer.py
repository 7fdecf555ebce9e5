"""Who reads the episode store, and what each reader may see.

An episode belongs to whoever ran it: the API key's owner id, or without keys the client token's
(`envhub.core.auth.Caller.owner`), kept in the episode's `owner` column. Its row, its check
messages and its trajectory are shown to that owner and to an admin (a key marked `admin`, or the
operator reading the store file itself, as `envhub episodes` does); anyone else is told it does
not exist. Aggregates (counts, rewards, failure classes, timings) stay public.

A system run (an oracle or validation episode: its policy version starts with `envhub:`, as the
CLI's `run --agent oracle` and `smoke` record theirs) holds the task's solution in its actions:
those are shown to an admin only, even to the run's owner.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, false, true

#: Policy versions of system runs (`envhub:oracle`, `envhub:validation`, ...).
SYSTEM_POLICY_PREFIX = "envhub:"
ORACLE_POLICY = SYSTEM_POLICY_PREFIX + "oracle"


def is_system_run(policy_version: str | None) -> bool:
    return policy_version is not None and policy_version.startswith(SYSTEM_POLICY_PREFIX)


@dataclass(frozen=True)
class Viewer:
    """A reader of the store: `owner` sees its own episodes, `admin` every one, neither only aggregates."""

    owner: str | None = None
    admin: bool = False

    def may_read(self, owner: str | None) -> bool:
        """Whether an episode owned by `owner` (None: recorded before owners were kept) is this reader's."""
        return self.admin or (self.owner is not None and owner == self.owner)

    def may_read_rows(self, owner_column: Any) -> ColumnElement[bool]:
        """`may_read` as a query's condition on the rows' owner column (episodes', runs')."""
        if self.admin:
            return true()
        if self.owner is None:
            return false()
        return owner_column == self.owner

    def may_see_actions(self, owner: str | None, policy_version: str | None) -> bool:
        return self.admin or (self.may_read(owner) and not is_system_run(policy_version))


#: No credential: aggregates only.
PUBLIC = Viewer()
#: Whoever reads the store's file or database directly (the CLI on the server's machine).
OPERATOR = Viewer(admin=True)
