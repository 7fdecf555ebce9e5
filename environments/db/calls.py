"""Running tool calls: one call as one transaction, with what it looked at and wrote recorded.

The environment runs the agent's calls through `run_call`, its export replays the logged writes
through `replay`, and synthesis and the family's checks run the oracle's calls the same way, so
all of them judge the same behaviour.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import event, exc
from sqlalchemy import inspect as sa_inspect

from envhub.errors import AgentError
from envhub.spec import ToolCall
from environments.db import dump as dumping
from environments.db.core import Domain, convert, row_dict
from environments.db.domains import SEED
from environments.db.store import Handle, Store


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


def replay(store: Store, domain: Domain, calls: list[dict[str, Any]], workdir: Path,
           seed: int = SEED) -> tuple[dumping.Tables, list]:
    """Replay logged write calls on a fresh copy of the start; return its dump and any failures."""
    handle = store.create(domain, workdir, tag="r", seed=seed)
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
