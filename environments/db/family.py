"""The db family as registered: the judged family plus what only serving needs, namely copying a
live episode (`snapshot`, `restore`: forks and snapshots).

It lives apart from `env.py` because that file keys the family's validation records
(`DbFamily.judged_by`); a copy of a live episode says nothing about a verdict (the copy's export is
the judged code's, over the copied database and call log).

A copy is `episode.json` (domain, seed, call log, answers, refusals) and, on SQLite, `db.sqlite3`
(the session's database through SQLite's online backup). On PostgreSQL no database is kept: the
restore replays the logged write calls, rejected ones too (a rejected insert advances a sequence),
on a fresh copy of the start, the way the export's replay rebuilds the final state. So a snapshot
is self-contained on either engine and needs no clean-up beyond its folder; a restore on
PostgreSQL costs one call per logged write.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import uuid
from pathlib import Path
from typing import Any

from envhub.env import EnvContext
from envhub.errors import AgentError, EnvError
from envhub.spec import Observation, ToolCall
from envhub.tasks.model import Task
from environments.db import domains as domain_registry
from environments.db import env
from environments.db.calls import run_call
from environments.db.core import Domain
from environments.db.store import Handle, SqliteHandle, SqliteStore

#: The copy's call log, answers and what its database starts from.
EPISODE_FILE = "episode.json"
#: The copy's SQLite database (absent for PostgreSQL: its restore replays the writes).
DB_FILE = "db.sqlite3"


class DbEnvironment(env.DbEnvironment):
    async def snapshot(self, dest: Path) -> dict[str, Any]:
        domain, handle = self._ready()
        dest.mkdir(parents=True)
        episode = {"domain": domain.name, "seed": self.seed, "calls": self.calls, "answers": self.answers,
                   "refusals": self.refusals}
        (dest / EPISODE_FILE).write_text(json.dumps(episode, ensure_ascii=False))
        if isinstance(handle, SqliteHandle):
            await asyncio.to_thread(_backup, handle, dest / DB_FILE)
        return {}

    async def restore(self, *, task: Task, state: Path) -> Observation:
        episode = json.loads((state / EPISODE_FILE).read_text())
        domain = domain_registry.get(episode["domain"])
        self.domain, self.seed = domain, episode["seed"]
        self.calls, self.answers, self.refusals = episode["calls"], episode["answers"], episode["refusals"]
        saved = state / DB_FILE
        if isinstance(self.store, SqliteStore) and saved.is_file():
            self.handle = await asyncio.to_thread(self._copy, domain, saved)
        else:  # PostgreSQL, or a snapshot taken on another engine
            self.handle = await asyncio.to_thread(self._replay, domain)
        return Observation(text=f"{task.prompt}\n\n{domain.policy}", data={"domain": domain.name,
                                                                           "today": domain.today.isoformat()})

    def _copy(self, domain: Domain, saved: Path) -> SqliteHandle:
        path = self.ctx.workdir / f"{domain.name}-s-{uuid.uuid4().hex[:8]}.sqlite3"
        shutil.copyfile(saved, path)  # a finished backup: nothing writes it any more
        return SqliteHandle(path)

    def _replay(self, domain: Domain) -> Handle:
        """A fresh copy of the start with every logged write call run again; each must end as it did."""
        handle = self.store.create(domain, self.ctx.workdir, "s", self.seed)
        try:
            for i, c in enumerate([c for c in self.calls if c["writes"]]):
                try:
                    run_call(handle, domain, ToolCall(tool=c["tool"], arguments=c["arguments"]))
                    ok = True
                except AgentError:
                    ok = False
                if ok != c["ok"]:
                    raise EnvError(f"the copy diverged: write {i} ({c['tool']}) "
                                   f"{'succeeded' if ok else 'was rejected'} on replay")
        except BaseException:
            handle.drop()
            raise
        return handle


def _backup(handle: SqliteHandle, dest: Path) -> None:
    """The session's database, consistent, through SQLite's online backup (no step runs meanwhile)."""
    handle.check()
    source, copy = sqlite3.connect(f"file:{handle.path}?mode=ro", uri=True), sqlite3.connect(dest)
    try:
        source.backup(copy)
    finally:
        source.close()
        copy.close()


class DbFamily(env.DbFamily):
    def make(self, ctx: EnvContext) -> DbEnvironment:
        return DbEnvironment(ctx, self.store(ctx.settings))
