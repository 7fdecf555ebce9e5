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

from sqlalchemy import event, exc
from sqlalchemy import inspect as sa_inspect

from envhub.env import EnvContext, Environment, Family, Mutator, ValidationContext, ValidationFinding
from envhub.errors import AgentError, EnvError
from envhub.spec import Observation, ToolCall, ToolSpec
from envhub.tasks.model import Task
from envhub.tools import Tool
from environments.db import domains as domain_registry
from environments.db import dump as dumping
from environments.db.core import Domain, convert, row_dict
from environments.db.settings import DbSettings
from environments.db.store import Handle, Store, make_store

if TYPE_CHECKING:
    import typer

MAX_OBSERVATION = 60_000


def _key(obj: Any) -> str:
    ident = sa_inspect(obj).mapper.primary_key_from_instance(obj)
    return f"{obj.__table__.name}|{'|'.join(str(v) for v in ident)}"


def _trace(s: Any, trace: dict[str, Any]) -> None:
    """Record on `trace` the rows this session loads (`seen`; `_shown` narrows it to the rows a
    successful call returned) and flushes (`wrote`)."""
    seen: list[str] = trace.setdefault("seen", [])
    wrote: list[dict[str, Any]] = trace.setdefault("wrote", [])
    objects: list[Any] = trace.setdefault("_loaded", [])

    def loaded(_s: Any, obj: Any) -> None:
        key = _key(obj)
        if key not in seen:
            seen.append(key)
            objects.append(obj)

    def flushed(session: Any, _ctx: Any) -> None:  # after_flush: the pending sets are still filled
        for obj in session.new:
            wrote.append({"row": _key(obj), "op": "insert"})
        for obj in session.deleted:
            wrote.append({"row": _key(obj), "op": "delete"})
        for obj in session.dirty:
            state = sa_inspect(obj)
            cols = sorted(prop.columns[0].name for prop in state.mapper.column_attrs
                          if state.attrs[prop.key].history.has_changes())
            if cols:
                wrote.append({"row": _key(obj), "op": "update", "cols": cols})

    event.listen(s, "loaded_as_persistent", loaded)
    event.listen(s, "after_flush", flushed)


def _shown(result: Any, loaded: list[Any]) -> list[str]:
    """The loaded rows that the result shows the agent (a tool may load rows it only filters).

    A row is shown when some object in the result has its id and agrees with it on at least
    three of its columns (all of them, for rows with fewer)."""
    by_id: dict[Any, list[dict[str, Any]]] = {}
    stack = [result]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "id" in item:
                by_id.setdefault(item["id"], []).append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    out = []
    for obj in loaded:
        row = row_dict(obj)
        for d in by_id.get(row.get("id"), []):
            common = [k for k in row if k in d]
            if len(common) >= min(3, len(row)) and all(d[k] == row[k] for k in common):
                out.append(_key(obj))
                break
    return out


def run_call(handle: Handle, domain: Domain, call: ToolCall, trace: dict[str, Any] | None = None) -> Any:
    """Run one tool call as one transaction (blocking). Rule violations roll back and raise.

    The arguments are checked against the tool's declaration here too (the server already did for
    live calls), so a replay or a synthesised call can never reach a tool unchecked. With
    `trace`, the rows the call loaded and wrote are recorded on it (see `_trace`)."""
    tool = domain.tool(call.tool)
    args = convert(tool.params, tool.check(call.arguments))
    with handle.session() as s:
        if trace is not None:
            _trace(s, trace)
        try:
            result = tool.fn(s, **args)
            if trace is not None:
                trace["seen"] = _shown(result, trace.pop("_loaded"))
            s.commit()
        except AgentError:
            s.rollback()
            raise
        except exc.IntegrityError as e:
            s.rollback()
            raise AgentError(f"rejected by a database constraint: {str(e.orig).splitlines()[0][:200]}") from e
        except (exc.DataError, exc.ProgrammingError) as e:
            s.rollback()
            raise AgentError(f"invalid value: {str(e.orig).splitlines()[0][:200]}") from e
    return result


def replay(store: Store, domain: Domain, calls: list[dict[str, Any]], workdir: Path) -> tuple[dumping.Tables, list]:
    """Replay logged write calls on a fresh copy of the start; return its dump and any failures."""
    handle = store.create(domain, workdir, tag="r")
    failures: list[dict[str, Any]] = []
    try:
        for i, c in enumerate(calls):
            try:
                run_call(handle, domain, ToolCall.model_validate({"tool": c["tool"], "arguments": c["arguments"]}))
            except AgentError as e:
                failures.append({"index": i, "tool": c["tool"], "error": e.detail})
        with handle.engine.connect() as conn:
            return dumping.dump(conn, domain.base.metadata), failures
    finally:
        handle.drop()


class DbEnvironment(Environment):
    def __init__(self, ctx: EnvContext, store: Store) -> None:
        self.ctx = ctx
        self.store = store
        self.domain: Domain | None = None
        self.handle: Handle | None = None
        self.calls: list[dict[str, Any]] = []
        self.answers: list[str] = []
        self.refusals: list[str] = []
        self.frozen = False

    def tools(self) -> list[Tool]:
        return list(self.domain.tools) if self.domain else []

    async def reset(self, *, task: Task, seed: int | None = None) -> Observation:
        domain = domain_registry.get(str(task.config.metadata.get("domain", "")))
        if self.handle is not None:
            await asyncio.to_thread(self.handle.drop)
        self.domain = domain
        self.handle = await asyncio.to_thread(self.store.create, domain, self.ctx.workdir)
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
        replayed, failures = replay(self.store, domain, writes, self.ctx.workdir)
        dest.mkdir(parents=True)
        (dest / "schema.json").write_text(json.dumps(dumping.schema(domain.base.metadata), indent=1))
        dumping.write_tables(self.store.initial(domain), dest / "initial")
        dumping.write_tables(final, dest / "final")
        dumping.write_tables(replayed, dest / "replayed")
        meta = {"domain": domain.name, "engine": self.store.engine_name, "replay_failures": failures}
        (dest / "meta.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1))
        (dest / "calls.json").write_text(json.dumps(self.calls, ensure_ascii=False, indent=1))
        (dest / "answers.json").write_text(json.dumps({"answers": self.answers, "refusals": self.refusals},
                                                      ensure_ascii=False, indent=1))

    async def healthy(self) -> bool:
        if self.handle is None:
            return False
        return await asyncio.to_thread(self.handle.healthy)

    async def close(self) -> None:
        if self.handle is not None:
            handle, self.handle = self.handle, None
            await asyncio.to_thread(handle.drop)


class DbFamily(Family):
    name = "db"
    description = ("Business databases (retail, banking, HR, clinic in Korean, logistics) behind typed CRUD "
                   "tools with business rules; verified on the final database state.")
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
        from environments.db.mutators import MUTATORS

        return dict(MUTATORS)

    async def validate_task(self, task: Task, ctx: ValidationContext) -> list[ValidationFinding]:
        from environments.db.checks import validate_task

        return await asyncio.to_thread(validate_task, task, self.store(ctx.settings))
