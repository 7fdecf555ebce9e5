"""The db environment: typed business tools over a per-session database.

The database engine runs in the server process, not in a sandbox: the agent never writes SQL,
it calls typed tools whose arguments are checked against their schema and bound as parameters.
Each call is one transaction; a call that breaks a rule raises `AgentError` and is rolled back.

`export_state` writes, under `dest`:

    schema.json          tables, primary keys, foreign keys
    initial/<table>.json the starting database
    final/<table>.json   the database as the agent left it
    replayed/<table>.json the successful write calls replayed on a fresh copy of the start
    calls.json           every call that reached a tool, in order: `ok` (false when a rule rejected
                         it), `seen` (rows it loaded, "table|pk") and, for successful writes,
                         `wrote` (rows it inserted, updated (with the columns) or deleted)
    answers.json         what the agent submitted with `submit_answer` / `refuse`

The call log is what process checks judge: a refusal must follow a look-up of the rows it rests
on, and a write to a row the task never asked to change is collateral even when a later call
undid it (the final state alone cannot show either).

The verifier checks `replayed == final`: a difference means the database was changed outside
the tools (an out-of-band edit), which is an environment fault.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envhub.env import EnvContext, Environment, Family, Mutator, ValidationContext, ValidationFinding
from envhub.errors import AgentError, EnvError
from envhub.spec import Observation, ToolCall, ToolSpec
from envhub.tasks.model import Task
from envhub.tools import Tool
from environments.db import checks
from environments.db import domains as domain_registry
from environments.db import dump as dumping
from environments.db.calls import replay, run_call
from environments.db.core import Domain
from environments.db.mutators import MUTATORS
from environments.db.settings import DbSettings
from environments.db.store import Handle, Store, make_store, seed_of

if TYPE_CHECKING:
    import typer

MAX_OBSERVATION = 60_000


class DbEnvironment(Environment):
    def __init__(self, ctx: EnvContext, store: Store) -> None:
        self.ctx = ctx
        self.store = store
        self.domain: Domain | None = None
        self.seed = 0  # the seed of the starting database (the task's `db_seed`, or the catalogue's)
        self.handle: Handle | None = None
        self.calls: list[dict[str, Any]] = []
        self.answers: list[str] = []
        self.refusals: list[str] = []
        self.frozen = False

    def tools(self) -> list[Tool]:
        return list(self.domain.tools) if self.domain else []

    async def reset(self, *, task: Task, seed: int | None = None) -> Observation:
        domain = domain_registry.get(str(task.config.metadata.get("domain", "")))
        db_seed = seed_of(task.config.metadata)
        if self.handle is not None:
            await asyncio.to_thread(self.handle.drop)
        self.domain, self.seed = domain, db_seed
        self.handle = await asyncio.to_thread(self.store.create, domain, self.ctx.workdir, "s", db_seed)
        self.calls, self.answers, self.refusals, self.frozen = [], [], [], False
        return Observation(text=f"{task.prompt}\n\n{domain.policy}", data={"domain": domain.name,
                                                                           "today": domain.today.isoformat()})

    def _ready(self) -> tuple[Domain, Handle]:
        if self.domain is None or self.handle is None:
            raise EnvError("environment was not reset")
        return self.domain, self.handle

    async def step(self, call: ToolCall) -> Observation:
        domain, handle = self._ready()
        if self.frozen:
            raise AgentError("the episode was exported for verification; no more changes")
        tool = domain.tool(call.tool)
        trace: dict[str, Any] = {}
        entry = {"tool": call.tool, "arguments": call.arguments, "writes": tool.writes, "ok": True}
        try:
            result = await asyncio.to_thread(run_call, handle, domain, call, trace)
        except AgentError as e:
            if trace:  # the call reached the tool: a rule rejected it (what it looked at still counts)
                self.calls.append({**entry, "ok": False, "error": e.detail[:300], "seen": trace["seen"]})
            raise
        self.calls.append({**entry, "seen": trace.get("seen", []),
                           **({"wrote": trace.get("wrote", [])} if tool.writes else {})})
        if tool.name == "submit_answer":
            self.answers.append(str(call.arguments["answer"]))
        elif tool.name == "refuse":
            self.refusals.append(str(call.arguments["reason"]))
        text = json.dumps(result, ensure_ascii=False, default=str)
        if len(text) > MAX_OBSERVATION:
            text = text[:MAX_OBSERVATION] + " ...[truncated]"
        return Observation(text=text, data=result if isinstance(result, dict) else {"result": result})

    async def export_state(self, dest: Path) -> None:
        domain, handle = self._ready()
        self.frozen = True
        await asyncio.to_thread(self._export, domain, handle, dest)

    def _export(self, domain: Domain, handle: Handle, dest: Path) -> None:
        handle.check()
        with handle.session() as s:
            final = dumping.dump(s.connection(), domain.base.metadata)
        writes = [c for c in self.calls if c["writes"] and c["ok"]]
        replayed, failures = replay(self.store, domain, writes, self.ctx.workdir, self.seed)
        dest.mkdir(parents=True)
        (dest / "schema.json").write_text(json.dumps(dumping.schema(domain.base.metadata), indent=1))
        dumping.write_tables(self.store.initial(domain, self.seed), dest / "initial")
        dumping.write_tables(final, dest / "final")
        dumping.write_tables(replayed, dest / "replayed")
        meta = {"domain": domain.name, "engine": self.store.engine_name, "replay_failures": failures}
        (dest / "meta.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1))
        (dest / "calls.json").write_text(json.dumps(self.calls, ensure_ascii=False, indent=1))
        (dest / "answers.json").write_text(json.dumps({"answers": self.answers, "refusals": self.refusals},
                                                      ensure_ascii=False, indent=1))

    async def close(self) -> None:
        if self.handle is not None:
            handle, self.handle = self.handle, None
            await asyncio.to_thread(handle.drop)


class DbFamily(Family):
    name = "db"
    description = ("Business databases (retail, banking, HR, clinic in Korean, logistics) behind typed CRUD "
                   "tools with business rules; verified on the final database state.")
    # What judges a task: the state export (env, calls: the call log and the replay; dump), the
    # seed databases (store, each domain's data module), the mutators and the family's checks.
    # The tools (core, domains/*_tools) and synthesis only serve the agent and the author: CI's
    # oracle smoke over HTTP guards them, so changing a tool does not re-key the catalogue.
    judged_by = ("env.py", "calls.py", "dump.py", "store.py", "mutators.py", "checks.py", "domains/__init__.py",
                 *(f"domains/{name}.py" for name in domain_registry.NAMES))
    facet_labels = {"domain": "domain", "language": "language"}
    settings_class = DbSettings
    cli_aliases = {"synth db": "synth"}

    @classmethod
    def cli(cls) -> typer.Typer:
        from environments.db.cli import app

        return app

    def __init__(self) -> None:
        self._stores: dict[tuple[str, str | None], Store] = {}

    def store(self, settings: Any) -> Store:
        key = (str(settings.data_dir), self.settings(settings).db_family_url)
        if key not in self._stores:
            self._stores[key] = make_store(settings.data_dir, key[1])
        return self._stores[key]

    def setup(self, settings: Any) -> None:
        store = self.store(settings)
        for domain in domain_registry.domains().values():  # build templates before the first session
            store.create(domain, settings.data_dir, tag="w").drop()

    async def shutdown(self) -> None:
        for store in self._stores.values():
            store.close()

    def make(self, ctx: EnvContext) -> DbEnvironment:
        return DbEnvironment(ctx, self.store(ctx.settings))

    def tool_specs(self) -> list[ToolSpec]:
        seen: dict[str, ToolSpec] = {}
        for domain in domain_registry.domains().values():
            for t in domain.tools:
                seen.setdefault(t.name, t.spec())
        return list(seen.values())

    def task_tool_specs(self, task: Task) -> list[ToolSpec]:
        """A task's session offers its own domain's tools, not every domain's."""
        return [t.spec() for t in domain_registry.get(str(task.config.metadata.get("domain", ""))).tools]

    def mutators(self) -> dict[str, Mutator]:
        return dict(MUTATORS)

    async def validate_task(self, task: Task, ctx: ValidationContext) -> list[ValidationFinding]:
        return await asyncio.to_thread(checks.validate_task, task, self.store(ctx.settings))
