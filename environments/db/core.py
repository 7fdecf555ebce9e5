"""Shared machinery of the db family: the ORM base and typed tools.

A tool is a plain Python function over a SQLAlchemy `Session` plus a core tool declaration
(`envhub.tools`): the declaration is both the JSON schema the agent sees and the check the
server runs on every call, so the two cannot drift; `P` declares parameters in the db's
vocabulary (dates, times, money) and `convert` hands the checked values to the function typed.
Business rules live in the tool functions and raise `AgentError` (the step's transaction is then
rolled back, so a refused call changes nothing).
Values reach the database only as bound parameters: an SQL-injection string is just data.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import DeclarativeBase, Session

from envhub.errors import AgentError
from envhub.tools import Param, find
from envhub.tools import Tool as DeclaredTool

MAX_STR = 200  # default cap on a string argument, in characters
MAX_TEXT = 2000  # cap for free-text arguments (notes, reasons, answers)
MAX_LIMIT = 100


#: Each domain declares its own `DeclarativeBase` subclass, so each has its own metadata and
#: registry (two domains may both have a `customers` table).
Base = DeclarativeBase


#: The db's own kinds of value, on top of JSON's: each is a checked JSON value the tool then
#: receives converted (ISO text to `date`/`datetime`, an amount to integer cents).
DB_KINDS = ("date", "datetime", "money")
MONEY_LIMIT = 1_000_000_000  # the largest amount a tool accepts, in currency units


@dataclass(frozen=True)
class DbParam(Param):
    """A core `Param` that remembers which db kind it was declared as, for `convert`."""

    kind: str = ""


def P(type: str, description: str = "", *, required: bool = True, enum: tuple[str, ...] | None = None,
      max_len: int = MAX_STR, minimum: float | None = None, maximum: float | None = None,
      items: dict[str, DbParam] | None = None, max_items: int = 50) -> DbParam:
    """A tool parameter in the db's vocabulary (integer, number, boolean, string, date, datetime,
    money, or an array of objects with `items` fields), declared as a core `Param`."""
    common = {"description": description, "required": required, "enum": enum, "kind": type}
    if type == "date":
        return DbParam("string", format="date", **common)
    if type == "datetime":
        return DbParam("string", format="date-time", **common)
    if type == "money":
        return DbParam("number", decimals=2, minimum=-MONEY_LIMIT if minimum is None else minimum,
                       maximum=MONEY_LIMIT if maximum is None else maximum, **common)
    if type in ("integer", "number"):
        return DbParam(type, minimum=minimum, maximum=maximum, **common)
    if type == "array":
        assert items is not None
        return DbParam("array", items=DbParam("object", properties=items), min_items=1, max_items=max_items,
                       **common)
    if type == "boolean":
        return DbParam("boolean", **common)
    # A required text must say something: whitespace alone is no name, reason or answer.
    return DbParam("string", max_len=max_len, pattern=r"\S" if required and not enum else None, **common)


def convert(params: dict[str, Param], args: dict[str, Any]) -> dict[str, Any]:
    """Arguments that passed the declaration, as the tool functions take them (dates as
    `date`/`datetime`, amounts as integer cents)."""
    out: dict[str, Any] = {}
    for name, value in args.items():
        p = params[name]
        kind = p.kind if isinstance(p, DbParam) else ""
        if kind == "date":
            value = dt.date.fromisoformat(value)
        elif kind == "datetime":
            value = dt.datetime.fromisoformat(value.replace(" ", "T")).replace(tzinfo=None, microsecond=0)
        elif kind == "money":
            value = to_cents(value)
        elif kind == "array" and p.items is not None and p.items.properties is not None:
            value = [convert(p.items.properties, v) for v in value]
        out[name] = value
    return out


def to_cents(value: float | int) -> int:
    """An amount (at most 2 decimals, within `MONEY_LIMIT`: the declaration checked both) in cents."""
    return int((Decimal(repr(value)) * 100).to_integral_value())


def money(cents: int) -> str:
    """Cents as a plain decimal string: 1234 -> "12.34"."""
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


@dataclass(frozen=True)
class Tool(DeclaredTool):
    """A declared tool plus the function that runs it: fn(session, **converted_args) -> JSON-able."""

    fn: Callable[..., Any] = field(default=lambda s: None)
    writes: bool = False


@dataclass(eq=False)
class Domain:
    """A business domain: its tables, seed, tools and the facts prompts and tasks need."""

    name: str
    title: str
    language: str  # "en" or "ko"
    base: type[Base]
    seed: Callable[[Session, int], None]
    tools: list[Tool]
    today: dt.date
    policy: str = ""

    def tool(self, name: str) -> Tool:
        return find(self.tools, name)


# --- helpers tools use ---------------------------------------------------------------------------

def row_dict(obj: Any, *, money_cols: tuple[str, ...] = ()) -> dict[str, Any]:
    """A row as JSON-able data (dates as ISO text, cents columns also shown as amounts)."""
    out: dict[str, Any] = {}
    for col in obj.__table__.columns:
        v = getattr(obj, col.key)
        if isinstance(v, dt.datetime):
            v = v.isoformat(timespec="minutes")
        elif isinstance(v, dt.date):
            v = v.isoformat()
        if col.key.endswith("_cents") and isinstance(v, int):
            out[col.key[:-6]] = money(v)
            continue
        out[col.key] = v
    return out


def get_or_404(s: Session, model: type, id_: int, label: str) -> Any:
    obj = s.get(model, id_)
    if obj is None:
        raise AgentError(f"{label} {id_} not found")
    return obj


def next_id(s: Session, model: type) -> int:
    """Ids are assigned by the tools (max + 1), never by an engine sequence, so SQLite and
    PostgreSQL give the same ids for the same calls, and a rolled-back call consumes none."""
    return int(s.execute(select(func.coalesce(func.max(model.id), 0))).scalar_one()) + 1


def add(s: Session, obj: Any) -> Any:
    obj.id = next_id(s, type(obj))
    s.add(obj)
    s.flush()
    return obj


_LIKE_ESCAPE = re.compile(r"([\\%_])")


def like(text: str) -> str:
    """A case-insensitive substring pattern with LIKE wildcards escaped (use escape='\\')."""
    return "%" + _LIKE_ESCAPE.sub(r"\\\1", text.lower()) + "%"


def search(s: Session, model: type, filters: dict[str, Any], *, text_cols: tuple[str, ...] = (),
           limit: int = 20, order: Any = None) -> tuple[list[Any], int]:
    """Rows matching every filter: substring match on `text_cols`, equality elsewhere."""
    q = select(model)
    for key, value in filters.items():
        col = getattr(model, key)
        if key in text_cols:
            q = q.where(func.lower(col).like(like(value), escape="\\"))
        else:
            q = q.where(col == value)
    total = int(s.execute(select(func.count()).select_from(q.subquery())).scalar_one())
    rows = list(s.execute(q.order_by(order if order is not None else model.id).limit(limit)).scalars())
    return rows, total


LIMIT = P("integer", "Maximum rows to return (default 20).", required=False, minimum=1, maximum=MAX_LIMIT)


def listing(rows: list[Any], total: int, key: str, **kw: Any) -> dict[str, Any]:
    return {key: [row_dict(r, **kw) for r in rows], "count": len(rows), "total": total}


def answer_tools(rules: dict[str, str]) -> list[Tool]:
    """`submit_answer` and `refuse`: how the agent reports a finding or declines a request.

    A refusal names its grounds: the domain's rule it rests on (`rules`: id -> what the rule
    forbids and which figure it rests on) and that figure as the records show it. The figure is
    what a refusal cannot guess: a policy that declines without reading the records is right about
    the rule at best, never about the balance, the shift or the count behind it.
    Both are recorded by the environment itself (they change no table)."""
    listed = "; ".join(f"{rule}: {meaning}" for rule, meaning in rules.items())
    return [
        Tool("submit_answer", "Submit the final answer to a question. Give only the value(s) asked for; for several "
             "values, separate them with commas.",
             {"answer": P("string", "The answer.", max_len=MAX_TEXT)}, lambda s, answer: {"recorded": True}),
        Tool("refuse", "Decline the request because policy or the data does not allow it, naming the rule and the "
             f"figure it rests on. Nothing is changed. Rules: {listed}.",
             {"rule": P("string", "The policy rule the request breaks.", enum=tuple(rules)),
              "figure": P("string", "The figure the rule rests on, as the records show it (see the rule).", max_len=80),
              "reason": P("string", "Why the request cannot be carried out.", max_len=MAX_TEXT)},
             lambda s, rule, figure, reason: {"recorded": True}),
    ]
