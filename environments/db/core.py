"""Shared machinery of the db family: the ORM base, typed tools and their argument checking.

A tool is a plain Python function over a SQLAlchemy `Session` plus a typed parameter list; the
parameter list is both the JSON schema the agent sees and the checker its arguments pass
through, so the two cannot drift. Business rules live in the tool functions and raise
`AgentError` (the step's transaction is then rolled back, so a refused call changes nothing).
Values reach the database only as bound parameters: an SQL-injection string is just data.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import DeclarativeBase, Session

from envhub.errors import AgentError
from envhub.spec import ToolSpec

MAX_STR = 200  # default cap on a string argument, in characters
MAX_TEXT = 2000  # cap for free-text arguments (notes, reasons, answers)
MAX_LIMIT = 100


#: Each domain declares its own `DeclarativeBase` subclass, so each has its own metadata and
#: registry (two domains may both have a `customers` table).
Base = DeclarativeBase


@dataclass(frozen=True)
class P:
    """One tool parameter: its JSON type, limits and description."""

    type: str  # integer | string | number | boolean | date | datetime | money | array
    description: str = ""
    required: bool = True
    enum: tuple[str, ...] | None = None
    max_len: int = MAX_STR
    minimum: float | None = None
    maximum: float | None = None
    items: dict[str, P] | None = None  # for arrays of objects
    max_items: int = 50

    def schema(self) -> dict[str, Any]:
        s: dict[str, Any]
        if self.type == "integer":
            s = {"type": "integer"}
        elif self.type in ("number", "money"):
            s = {"type": "number"}
        elif self.type == "boolean":
            s = {"type": "boolean"}
        elif self.type == "date":
            s = {"type": "string", "format": "date", "pattern": r"^\d{4}-\d{2}-\d{2}$"}
        elif self.type == "datetime":
            s = {"type": "string", "format": "date-time", "pattern": r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2})?$"}
        elif self.type == "array":
            assert self.items is not None
            s = {"type": "array", "maxItems": self.max_items, "minItems": 1,
                 "items": object_schema(self.items)}
        else:
            s = {"type": "string", "maxLength": self.max_len}
        if self.enum:
            s["enum"] = list(self.enum)
        if self.minimum is not None:
            s["minimum"] = self.minimum
        if self.maximum is not None:
            s["maximum"] = self.maximum
        if self.description:
            s["description"] = self.description
        return s


def object_schema(params: dict[str, P]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False,
            "required": [k for k, p in params.items() if p.required],
            "properties": {k: p.schema() for k, p in params.items()}}


def _coerce(name: str, p: P, value: Any) -> Any:
    """Check one argument against its parameter and return the typed Python value."""
    if p.type == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise AgentError(f"invalid argument {name!r}: expected an integer, got {_show(value)}")
    elif p.type in ("number", "money"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise AgentError(f"invalid argument {name!r}: expected a number, got {_show(value)}")
        if value != value or value in (float("inf"), float("-inf")):
            raise AgentError(f"invalid argument {name!r}: expected a finite number")
        if p.type == "money":
            value = to_cents(name, value)
    elif p.type == "boolean":
        if not isinstance(value, bool):
            raise AgentError(f"invalid argument {name!r}: expected true or false, got {_show(value)}")
    elif p.type == "array":
        if not isinstance(value, list) or not value:
            raise AgentError(f"invalid argument {name!r}: expected a non-empty array")
        if len(value) > p.max_items:
            raise AgentError(f"invalid argument {name!r}: at most {p.max_items} items")
        assert p.items is not None
        return [check_args(p.items, v, where=f"{name}[{i}]") for i, v in enumerate(value)]
    else:
        if not isinstance(value, str):
            raise AgentError(f"invalid argument {name!r}: expected a string, got {_show(value)}")
        if len(value) > p.max_len:
            raise AgentError(f"invalid argument {name!r}: at most {p.max_len} characters (got {len(value)})")
        if "\x00" in value:
            raise AgentError(f"invalid argument {name!r}: contains a NUL character")
        if p.type == "date":
            try:
                value = dt.date.fromisoformat(value)
            except ValueError:
                raise AgentError(f"invalid argument {name!r}: expected a date as YYYY-MM-DD, got {_show(value)}")
        elif p.type == "datetime":
            try:
                value = dt.datetime.fromisoformat(value.replace(" ", "T")).replace(tzinfo=None, microsecond=0)
            except ValueError:
                raise AgentError(f"invalid argument {name!r}: expected a time as YYYY-MM-DDTHH:MM, got {_show(value)}")
        elif not value.strip() and p.required:
            raise AgentError(f"invalid argument {name!r}: must not be empty")
    if p.enum and value not in p.enum:
        raise AgentError(f"invalid argument {name!r}: must be one of {', '.join(p.enum)}")
    if p.minimum is not None and value < (to_cents(name, p.minimum) if p.type == "money" else p.minimum):
        raise AgentError(f"invalid argument {name!r}: must be at least {p.minimum:g}")
    if p.maximum is not None and value > (to_cents(name, p.maximum) if p.type == "money" else p.maximum):
        raise AgentError(f"invalid argument {name!r}: must be at most {p.maximum:g}")
    return value


def _show(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def check_args(params: dict[str, P], args: Any, *, where: str = "arguments") -> dict[str, Any]:
    """Typed, checked arguments; unknown, missing or mistyped ones are an `AgentError`."""
    if not isinstance(args, dict):
        raise AgentError(f"{where} must be an object")
    unknown = sorted(set(args) - set(params))
    if unknown:
        raise AgentError(f"unexpected argument {unknown[0]!r}; expected: {', '.join(params) or 'none'}")
    out: dict[str, Any] = {}
    for name, p in params.items():
        if name not in args or args[name] is None:
            if p.required:
                raise AgentError(f"missing required argument {name!r}")
            continue
        out[name] = _coerce(name, p, args[name])
    return out


def to_cents(name: str, value: float | int) -> int:
    try:
        d = Decimal(str(value))
    except InvalidOperation:
        raise AgentError(f"invalid argument {name!r}: not an amount") from None
    if d != d.quantize(Decimal("0.01")):
        raise AgentError(f"invalid argument {name!r}: amounts have at most 2 decimal places")
    if abs(d) > Decimal("1000000000"):
        raise AgentError(f"invalid argument {name!r}: amount is out of range")
    return int(d * 100)


def money(cents: int) -> str:
    """Cents as a plain decimal string: 1234 -> "12.34"."""
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


@dataclass(frozen=True)
class Tool:
    """A typed tool: what the agent sees and the function that runs it."""

    name: str
    description: str
    params: dict[str, P]
    fn: Callable[..., Any]  # fn(session, **typed_args) -> JSON-able result
    writes: bool = False

    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, input_schema=object_schema(self.params))


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
    intents: list[Callable[..., Any]] = field(default_factory=list)

    def tool(self, name: str) -> Tool:
        for t in self.tools:
            if t.name == name:
                return t
        raise AgentError(f"unknown tool {name!r}; available tools: {', '.join(t.name for t in self.tools)}")


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


def answer_tools() -> list[Tool]:
    """`submit_answer` and `refuse`: how the agent reports a finding or declines a request.

    Both are recorded by the environment itself (they change no table)."""
    return [
        Tool("submit_answer", "Submit the final answer to a question. Give only the value(s) asked for; for several "
             "values, separate them with commas.",
             {"answer": P("string", "The answer.", max_len=MAX_TEXT)}, lambda s, answer: {"recorded": True}),
        Tool("refuse", "Decline the request because policy or the data does not allow it. Give the reason. "
             "Nothing is changed.",
             {"reason": P("string", "Why the request cannot be carried out.", max_len=MAX_TEXT)},
             lambda s, reason: {"recorded": True}),
    ]


RECORDING_TOOLS = ("submit_answer", "refuse")
