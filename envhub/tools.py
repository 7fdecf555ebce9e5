"""Tool declarations: one place that says what a tool takes, for the agent and for the checker.

A family declares each tool once — `Tool(name, description, {arg: Param(...)})` — and two things
come from that one declaration: the JSON Schema the agent sees (`Tool.spec()`, MCP's shape) and
the check every call passes through before the environment sees it (`Tool.check`). The session
manager runs the check, so no family parses raw arguments, and a violation is the agent's
(`InvalidArguments`, an `agent_error` observation naming the argument and the rule).

Every value is bounded even where a declaration says nothing: integers fit a 32-bit column,
numbers are finite and within ±1e15, strings are valid Unicode without NUL and have a length
cap, dates lie between 1900 and 2100, arrays and objects have item caps and a nesting depth.
Inputs that no schema bounds are how a policy crashes a tool, and a crash inside a tool would
be graded `env_error` (masked): the bounds make such inputs the agent's error instead.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import cached_property
from typing import Any

from envhub.errors import AgentError
from envhub.spec import ToolSpec

INT_MIN, INT_MAX = -(2**31), 2**31 - 1  # a 32-bit column (PostgreSQL INTEGER) holds any accepted id
NUMBER_LIMIT = 1e15  # finite, and exact to the cent as a float
STRING_MAX = 10_000  # characters, unless a parameter says otherwise
ARRAY_MAX = 1_000
OBJECT_MAX = 1_000  # keys of a free-form object
DEPTH_MAX = 16  # nesting of free-form values
DATE_MIN, DATE_MAX = dt.date(1900, 1, 1), dt.date(2100, 12, 31)
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
DATETIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2})?$")
JSON_TYPES = ("string", "integer", "number", "boolean", "array", "object", "null")


class InvalidArguments(AgentError):
    """A tool call's arguments break the tool's declaration (the agent's error)."""

    code = "invalid_arguments"

    def __init__(self, argument: str, rule: str) -> None:
        super().__init__(f"invalid argument '{argument}': {rule}" if argument else f"invalid arguments: {rule}",
                         argument=argument, rule=rule)
        self.argument = argument
        self.rule = rule


def show(value: Any, limit: int = 40) -> str:
    """A value as short JSON text for an error message; always encodable (a lone surrogate is
    escaped, other text such as Korean stays readable)."""
    text = json.dumps(value, default=str, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(value, default=str, ensure_ascii=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e16 else f"{x:g}"


_MISSING: Any = object()


@dataclass(frozen=True)
class Param:
    """One parameter (or nested value) of a tool.

    `type` is a JSON type, a tuple of them (a union), or "any" (free-form JSON, still bounded).
    `format` "date" / "date-time" makes a string an ISO date / time within `DATE_MIN..DATE_MAX`.
    Arrays take `items`; objects take `properties` (declared keys only) or `values` (a map of
    free keys to one value type).
    """

    type: str | tuple[str, ...]
    description: str = ""
    required: bool = True
    default: Any = _MISSING
    enum: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: float | None = None
    decimals: int | None = None  # at most this many decimal places
    min_len: int = 0
    max_len: int = STRING_MAX
    pattern: str | None = None
    format: str | None = None  # "date" | "date-time"
    items: Param | None = None
    min_items: int = 0
    max_items: int = ARRAY_MAX
    properties: dict[str, Param] | None = None
    values: Param | None = None

    @property
    def types(self) -> tuple[str, ...]:
        return self.type if isinstance(self.type, tuple) else (self.type,)

    def schema(self) -> dict[str, Any]:
        """This parameter's JSON Schema."""
        s: dict[str, Any] = {}
        if self.type != "any":
            s["type"] = self.types[0] if len(self.types) == 1 else list(self.types)
        types = self.types
        if "integer" in types or "number" in types:
            lo, hi = self._bounds()
            if self.exclusive_minimum is not None:
                s["exclusiveMinimum"] = self.exclusive_minimum
            else:
                s["minimum"] = lo
            s["maximum"] = hi
            if self.decimals is not None:  # not multipleOf: JSON Schema validators misjudge 0.47 / 0.01
                s["description"] = f"At most {self.decimals} decimal places."
        if "string" in types:
            if self.min_len:
                s["minLength"] = self.min_len
            s["maxLength"] = self.max_len
            if self.format == "date":
                s.update(format="date", pattern=DATE_RE.pattern)
            elif self.format == "date-time":
                s.update(format="date-time", pattern=DATETIME_RE.pattern)
            elif self.pattern:
                s["pattern"] = self.pattern
        if "array" in types:
            s["maxItems"] = self.max_items
            if self.min_items:
                s["minItems"] = self.min_items
            if self.items is not None:
                s["items"] = self.items.schema()
        if "object" in types:
            if self.properties is not None:
                s.update(object_schema(self.properties))
            elif self.values is not None:
                s.update(additionalProperties=self.values.schema(), maxProperties=OBJECT_MAX)
        if self.enum is not None:
            s["enum"] = list(self.enum)
        if self.default is not _MISSING:
            s["default"] = self.default
        if self.description:
            s["description"] = f"{self.description} {s['description']}" if "description" in s else self.description
        return s

    def _bounds(self) -> tuple[float, float]:
        integer = self.types == ("integer",)
        lo = self.minimum if self.minimum is not None else (INT_MIN if integer else -NUMBER_LIMIT)
        hi = self.maximum if self.maximum is not None else (INT_MAX if integer else NUMBER_LIMIT)
        return lo, hi

    # -- checking ----------------------------------------------------------------------------
    def check(self, where: str, value: Any, depth: int = 0) -> Any:
        """`value` if it satisfies this parameter (integral floats become ints); else raise."""
        if depth > DEPTH_MAX:
            raise InvalidArguments(where, f"nested deeper than {DEPTH_MAX} levels")
        if self.type == "any":
            return _check_json(where, value, depth)
        kind = _json_type(value)
        if kind == "integer" and "integer" not in self.types and "number" in self.types:
            kind = "number"
        elif kind == "number" and "integer" in self.types and isinstance(value, float) and value.is_integer() \
                and math.isfinite(value):
            value, kind = int(value), "integer"
        if kind not in self.types:
            want = " or ".join("a number" if t == "number" else f"{'an' if t[0] in 'aeiou' else 'a'} {t}"
                               for t in self.types)
            raise InvalidArguments(where, f"expected {want}, got {show(value)}")
        if kind in ("integer", "number"):
            self._check_number(where, value)
        elif kind == "string":
            self._check_string(where, value)
        elif kind == "array":
            if len(value) < self.min_items:
                raise InvalidArguments(where, f"needs at least {self.min_items} item(s)")
            if len(value) > self.max_items:
                raise InvalidArguments(where, f"at most {self.max_items} items (got {len(value)})")
            item = self.items or ANY
            value = [item.check(f"{where}[{i}]", v, depth + 1) for i, v in enumerate(value)]
        elif kind == "object":
            if self.properties is not None:
                value = check_object(self.properties, value, where=where, depth=depth + 1)
            else:
                value = _check_map(where, value, self.values or ANY, depth + 1)
        if self.enum is not None and value not in self.enum:
            raise InvalidArguments(where, f"must be one of {', '.join(show(e) for e in self.enum)} (got {show(value)})")
        return value

    def _check_number(self, where: str, value: float) -> None:
        if not math.isfinite(value):
            raise InvalidArguments(where, "must be a finite number")
        lo, hi = self._bounds()
        if self.exclusive_minimum is not None and value <= self.exclusive_minimum:
            raise InvalidArguments(where, f"must be greater than {_num(self.exclusive_minimum)}")
        if value < lo:
            raise InvalidArguments(where, f"must be at least {_num(lo)} (got {show(value)})")
        if value > hi:
            raise InvalidArguments(where, f"must be at most {_num(hi)} (got {show(value)})")
        if self.decimals is not None:
            try:
                exact = Decimal(repr(value))
                ok = exact == exact.quantize(Decimal(1).scaleb(-self.decimals))
            except InvalidOperation:
                ok = False
            if not ok:
                raise InvalidArguments(where, f"at most {self.decimals} decimal places (got {show(value)})")

    def _check_string(self, where: str, value: str) -> None:
        _check_text(where, value)
        if len(value) > self.max_len:
            raise InvalidArguments(where, f"at most {self.max_len} characters (got {len(value)})")
        if len(value) < self.min_len:
            raise InvalidArguments(where, "must not be empty" if self.min_len == 1
                                   else f"at least {self.min_len} characters")
        if self.format in ("date", "date-time"):
            _check_date(where, value, self.format)
        elif self.pattern and not re.search(self.pattern, value):
            raise InvalidArguments(where, f"must match {self.pattern} (got {show(value)})")


ANY = Param("any")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _check_text(where: str, value: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InvalidArguments(where, f"is not valid Unicode (a lone surrogate at character {e.start})") from None
    if "\x00" in value:
        raise InvalidArguments(where, "contains a NUL character")


def _check_date(where: str, value: str, fmt: str) -> None:
    if fmt == "date":
        if not DATE_RE.match(value):
            raise InvalidArguments(where, f"expected a date as YYYY-MM-DD, got {show(value)}")
        try:
            day = dt.date.fromisoformat(value)
        except ValueError:
            raise InvalidArguments(where, f"not a calendar date: {show(value)}") from None
    else:
        if not DATETIME_RE.match(value):
            raise InvalidArguments(where, f"expected a time as YYYY-MM-DDTHH:MM, got {show(value)}")
        try:
            day = dt.datetime.fromisoformat(value.replace(" ", "T")).date()
        except ValueError:
            raise InvalidArguments(where, f"not a calendar time: {show(value)}") from None
    if not DATE_MIN <= day <= DATE_MAX:
        raise InvalidArguments(where, f"must lie between {DATE_MIN} and {DATE_MAX} (got {show(value)})")


def _check_map(where: str, value: dict, values: Param, depth: int) -> dict:
    if len(value) > OBJECT_MAX:
        raise InvalidArguments(where, f"at most {OBJECT_MAX} keys")
    out = {}
    for k, v in value.items():
        _check_text(_join(where, k), k)
        if len(k) > STRING_MAX:
            raise InvalidArguments(_join(where, k), f"a key of at most {STRING_MAX} characters")
        out[k] = values.check(_join(where, k), v, depth)
    return out


def _check_json(where: str, value: Any, depth: int) -> Any:
    """Free-form JSON: any shape, every part bounded."""
    kind = _json_type(value)
    if kind == "string":
        _check_text(where, value)
        if len(value) > STRING_MAX * 100:
            raise InvalidArguments(where, f"at most {STRING_MAX * 100} characters")
    elif kind in ("integer", "number"):
        if not math.isfinite(value) or abs(value) > NUMBER_LIMIT:
            raise InvalidArguments(where, f"must be finite and within ±{_num(NUMBER_LIMIT)} (got {show(value)})")
    elif kind == "array":
        if len(value) > ARRAY_MAX * 10:
            raise InvalidArguments(where, f"at most {ARRAY_MAX * 10} items")
        return [ANY.check(f"{where}[{i}]", v, depth + 1) for i, v in enumerate(value)]
    elif kind == "object":
        return _check_map(where, value, ANY, depth + 1)
    elif kind not in ("boolean", "null"):
        raise InvalidArguments(where, f"not a JSON value: {kind}")
    return value


def object_schema(params: dict[str, Param]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False,
            "required": [k for k, p in params.items() if p.required],
            "properties": {k: p.schema() if p.required else _nullable(p.schema()) for k, p in params.items()}}


def _nullable(s: dict[str, Any]) -> dict[str, Any]:
    """An optional parameter also takes null, read as left out (function-calling models send it)."""
    if "type" in s:
        types = s["type"] if isinstance(s["type"], list) else [s["type"]]
        s["type"] = types if "null" in types else [*types, "null"]
    if "enum" in s and None not in s["enum"]:
        s["enum"] = [*s["enum"], None]
    return s


def _join(where: str, key: str) -> str:
    """A path to a value, e.g. `items[1].qty`; an odd key is shown as escaped JSON text."""
    name = key if key.isidentifier() else show(key, limit=60)
    return f"{where}.{name}" if where else name


def check_object(params: dict[str, Param], args: Any, *, where: str = "", depth: int = 0) -> dict[str, Any]:
    """Checked arguments: declared keys only, required ones present, each value per its `Param`;
    an optional one left out (or null) takes its default when it declares one. `args` itself when
    every value passes as it is (nothing filled in, dropped or converted): no copy for most calls."""
    if not isinstance(args, dict):
        raise InvalidArguments(where, f"must be an object, got {show(args)}")
    unknown = [k for k in args if k not in params]
    if unknown:
        expected = ", ".join(params) or "none"
        raise InvalidArguments(_join(where, unknown[0]), f"is not a parameter of this tool (expected: {expected})")
    out: dict[str, Any] = {}
    same = True
    for name, p in params.items():
        label = _join(where, name)
        value = args.get(name)
        if value is None:
            if p.required:
                raise InvalidArguments(label, "is required")
            if p.default is not _MISSING:
                out[name] = p.default
                same = False
            elif name in args:
                same = False  # a null, read as left out: dropped
            continue
        checked = out[name] = p.check(label, value, depth)
        same = same and checked is value
    return args if same else out


@dataclass(frozen=True)
class Tool:
    """A tool as the agent sees it and as every call to it is checked."""

    name: str
    description: str
    params: dict[str, Param] = field(default_factory=dict)

    def spec(self) -> ToolSpec:
        """The tool as a reset answer lists it: built once per declaration and shared (read-only)."""
        return self._spec

    @cached_property
    def _spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, input_schema=self._schema)

    @cached_property
    def _schema(self) -> dict[str, Any]:
        # Built once per declaration, not at every reset; shared by every spec of this tool: read-only.
        return object_schema(self.params)

    def check(self, arguments: Any) -> dict[str, Any]:
        return check_object(self.params, arguments)


def find(tools: list[Tool], name: str) -> Tool:
    """The tool called `name`, or the agent's error listing the ones there are."""
    for t in tools:
        if t.name == name:
            return t
    raise AgentError(f"unknown tool {show(name)}; tools are: {', '.join(t.name for t in tools)}")


# -- the same tools in model providers' formats ----------------------------------------------------

FORMATS = ("openai", "anthropic", "gemini", "mcp")
_GEMINI_KEYS = {"type", "format", "description", "nullable", "enum", "maxItems", "minItems", "properties", "required",
                "minimum", "maximum", "minLength", "maxLength", "pattern", "items", "anyOf"}


def as_format(specs: list[ToolSpec], fmt: str) -> list[dict[str, Any]]:
    """Tools as OpenAI function calling, Anthropic tool use, Gemini function declarations or MCP
    `tools/list` entries: one declaration, every provider's shape."""
    if fmt == "openai":
        return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                  "parameters": t.input_schema}} for t in specs]
    if fmt == "anthropic":
        return [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in specs]
    if fmt == "gemini":
        return [{"name": t.name, "description": t.description, "parameters": _gemini(t.input_schema)} for t in specs]
    if fmt == "mcp":
        return [t.model_dump(by_alias=True) for t in specs]
    raise ValueError(f"unknown format {fmt!r}; formats are: {', '.join(FORMATS)}")


def _gemini(schema: dict[str, Any]) -> dict[str, Any]:
    """JSON Schema → Gemini's OpenAPI-subset Schema (upper-case types, `nullable`, no unknown keywords)."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type":
            types = value if isinstance(value, list) else [value]
            real = [t for t in types if t != "null"]
            if len(real) == 1:
                out["type"] = real[0].upper()
            elif real:
                out["anyOf"] = [{"type": t.upper()} for t in real]
            if "null" in types:
                out["nullable"] = True
        elif key == "exclusiveMinimum":
            out["minimum"] = value
        elif key == "properties":
            out[key] = {k: _gemini(v) for k, v in value.items()}
        elif key == "items":
            out[key] = _gemini(value)
        elif key == "enum":
            out[key] = [str(v) for v in value if v is not None]
        elif key in _GEMINI_KEYS:
            out[key] = value
    return out
