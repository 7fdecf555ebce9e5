"""What a worksheet's conditional formats do: the cells their rules highlight, evaluated here.

A check that only reads a rule's range ("is there a rule on column C?") passes a rule that
highlights the wrong cells, or none. `highlighted` instead evaluates each rule's condition over
the cells it covers, against the recalculated values, the way a spreadsheet shows it: rules in
priority order, `stopIfTrue` ending the evaluation of a cell, and a cell counted as highlighted
only when a true rule gives it a visible format (a fill, a font change or a border).

Evaluated: `cellIs` (every operator), `expression` (a small formula engine below: references,
arithmetic, comparison, `&` and the functions in `FUNCTIONS`), `top10` (top/bottom, count or
percent), `aboveAverage` (without `stdDev`), `duplicateValues`/`uniqueValues`, the text rules
(`containsText`, `notContainsText`, `beginsWith`, `endsWith`), blanks and errors. Anything else
(colour scales, data bars, icon sets, time periods, defined names, an unknown function) is
reported as a problem and never counted as matching. Relative references in a rule's formula
are relative to the top-left cell of its range (of the bounding box, for a range of several
areas). An approximate MATCH or VLOOKUP takes the last value not above the one looked up, which
is what a spreadsheet gives on sorted data.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from openpyxl.formula.tokenizer import Token, Tokenizer, TokenizerError
from openpyxl.utils.cell import column_index_from_string, coordinate_from_string, get_column_letter

#: Cells one reference may span, and cell reads one sheet's rules may make in all, before what
#: they do counts as too large to evaluate (the agent writes the rules; a verify must end).
MAX_CELLS = 100_000
MAX_READS = 2_000_000
ERRORS = {"#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A", "#GETTING_DATA"}


class Unevaluable(Exception):
    """This rule or formula is outside what the evaluator knows; the message says what."""


@dataclass(frozen=True)
class XlError:
    code: str


@dataclass(frozen=True)
class Area:
    """A rectangle of cells on one sheet of the values workbook (`memo`: values already read)."""

    ws: Any
    min_row: int
    min_col: int
    max_row: int
    max_col: int
    memo: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    def cells(self) -> list[Any]:
        key = (id(self.ws), self.min_row, self.min_col, self.max_row, self.max_col)
        size = (self.max_row - self.min_row + 1) * (self.max_col - self.min_col + 1)
        self.memo["reads"] = self.memo.get("reads", 0) + size
        if self.memo["reads"] > MAX_READS:
            raise Unevaluable(f"the rules read more than {MAX_READS} cells")
        if key not in self.memo:
            if (self.max_row - self.min_row + 1) * (self.max_col - self.min_col + 1) > MAX_CELLS:
                raise Unevaluable(f"a reference of more than {MAX_CELLS} cells")
            self.memo[key] = [value_at(self.ws, r, c) for r in range(self.min_row, self.max_row + 1)
                              for c in range(self.min_col, self.max_col + 1)]
        return self.memo[key]

    def rows(self) -> list[list[Any]]:
        vals = self.cells()
        width = self.max_col - self.min_col + 1
        return [vals[i:i + width] for i in range(0, len(vals), width)]


def value_at(ws: Any, row: int, col: int) -> Any:
    """A cell's value (None when blank, `XlError` for an error), without creating the cell: a rule
    may name a large empty range, and openpyxl makes every cell it is asked for."""
    cell = ws._cells.get((row, col))
    if cell is None:
        return None
    v = cell.value
    if cell.data_type == "e" or (isinstance(v, str) and v in ERRORS):
        return XlError(str(v))
    return None if v == "" else v


# --- formulas: parse once, evaluate per cell --------------------------------------------------------

_PART = r"\$?[A-Z]{1,3}\$?\d+|\$?[A-Z]{1,3}|\$?\d+"
_REF = re.compile(rf"^(?:(?:'((?:[^']|'')+)'|([^'!:]+))!)?({_PART})(?::({_PART}))?$", re.I)
_NUMBER = re.compile(r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$")
_INFIX = {"=": 1, "<>": 1, "<": 1, ">": 1, "<=": 1, ">=": 1, "&": 2, "+": 3, "-": 3, "*": 4, "/": 4, "^": 5}
_UNARY = 6


def parse(formula: str) -> Any:
    """The expression tree of `formula` (with or without its leading `=`)."""
    try:
        tokens = [t for t in Tokenizer("=" + formula.lstrip("=")).items if t.type != Token.WSPACE]
    except TokenizerError as e:
        raise Unevaluable(f"cannot read the formula {formula!r}: {e}") from None
    parser = _Parser(tokens, formula)
    tree = parser.expr(0)
    if parser.i != len(tokens):
        raise Unevaluable(f"cannot read the formula {formula!r} past {tokens[parser.i].value!r}")
    return tree


class _Parser:
    def __init__(self, tokens: list[Token], formula: str) -> None:
        self.tokens, self.i, self.formula = tokens, 0, formula

    def _peek(self) -> Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def _next(self) -> Token:
        t = self._peek()
        if t is None:
            raise Unevaluable(f"the formula {self.formula!r} ends too early")
        self.i += 1
        return t

    def expr(self, min_prec: int) -> Any:
        left = self.unary()
        while (t := self._peek()) is not None and t.type == Token.OP_IN and _INFIX.get(t.value, 0) > min_prec:
            self.i += 1
            prec = _INFIX[t.value]
            # ^ is left-associative in spreadsheets, like the others
            left = ("op", t.value, left, self.expr(prec))
        return left

    def unary(self) -> Any:
        t = self._peek()
        if t is not None and t.type == Token.OP_PRE:
            self.i += 1
            operand = self.unary()
            return ("neg", operand) if t.value == "-" else operand
        node = self.primary()
        while (t := self._peek()) is not None and t.type == Token.OP_POST:
            self.i += 1
            node = ("op", "/", node, ("lit", 100.0))
        return node

    def primary(self) -> Any:
        t = self._next()
        if t.type == Token.OPERAND:
            if t.subtype == Token.NUMBER:
                return ("lit", float(t.value))
            if t.subtype == Token.TEXT:
                return ("lit", t.value[1:-1].replace('""', '"'))
            if t.subtype == Token.LOGICAL:
                return ("lit", t.value.upper() == "TRUE")
            if t.subtype == Token.ERROR:
                return ("lit", XlError(t.value.upper()))
            return ("ref", _ref(t.value))
        if t.type == Token.FUNC and t.subtype == Token.OPEN:
            name = t.value[:-1].upper().removeprefix("_XLFN.").removeprefix("_XLWS.")
            args: list[Any] = []
            if (c := self._peek()) is not None and c.type == Token.FUNC and c.subtype == Token.CLOSE:
                self.i += 1
                return ("call", name, args)
            while True:
                args.append(self.expr(0))
                sep = self._next()
                if sep.type == Token.FUNC and sep.subtype == Token.CLOSE:
                    return ("call", name, args)
                if not (sep.type == Token.SEP and sep.subtype == Token.ARG):
                    raise Unevaluable(f"cannot read the formula {self.formula!r} at {sep.value!r}")
        if t.type == Token.PAREN and t.subtype == Token.OPEN:
            inner = self.expr(0)
            close = self._next()
            if not (close.type == Token.PAREN and close.subtype == Token.CLOSE):
                raise Unevaluable(f"cannot read the formula {self.formula!r}: unbalanced parentheses")
            return inner
        raise Unevaluable(f"cannot read the formula {self.formula!r} at {t.value!r}")


def _part(text: str) -> tuple[int | None, bool, int | None, bool]:
    """(column, column absolute, row, row absolute) of one side of a reference."""
    m = re.match(r"^(\$?)([A-Z]{1,3})?(\$?)(\d+)?$", text)
    assert m, text
    col = column_index_from_string(m.group(2)) if m.group(2) else None
    row = int(m.group(4)) if m.group(4) else None
    return col, bool(m.group(1)), row, bool(m.group(3)) if m.group(2) else bool(m.group(1))


def _ref(text: str) -> tuple[str | None, tuple, tuple]:
    m = _REF.match(text)
    if not m:
        raise Unevaluable(f"{text!r} is not a cell reference (defined names are not evaluated)")
    sheet = m.group(1).replace("''", "'") if m.group(1) else m.group(2)
    a = _part(m.group(3).upper())
    b = _part(m.group(4).upper()) if m.group(4) else a
    return sheet, a, b


@dataclass
class Context:
    """Where a formula is evaluated: the values workbook, the sheet it sits on, and how far the
    evaluated cell lies from the rule's top-left cell (relative references move by that much)."""

    wb: Any
    sheet: str
    drow: int = 0
    dcol: int = 0
    row: int = 1
    col: int = 1
    memo: dict = field(default_factory=dict)

    def area(self, ref: tuple[str | None, tuple, tuple]) -> Area:
        sheet, a, b = ref
        name = sheet or self.sheet
        match = next((n for n in self.wb.sheetnames if n.lower() == name.lower()), None)
        if match is None:
            return Area(None, 0, 0, -1, -1)  # #REF!: the caller sees an error
        ws = self.wb[match]

        def place(p: tuple) -> tuple[int | None, int | None]:
            col, col_abs, row, row_abs = p
            return (None if col is None else col + (0 if col_abs else self.dcol),
                    None if row is None else row + (0 if row_abs else self.drow))
        (c1, r1), (c2, r2) = place(a), place(b)
        r1, r2 = r1 or 1, r2 or max(ws.max_row, 1)
        c1, c2 = c1 or 1, c2 or max(ws.max_column, 1)
        if min(r1, r2, c1, c2) < 1:
            return Area(None, 0, 0, -1, -1)
        return Area(ws, min(r1, r2), min(c1, c2), max(r1, r2), max(c1, c2), self.memo)


def evaluate(node: Any, ctx: Context) -> Any:
    """A node's value: a number, text, bool, None (blank), `XlError`, or an `Area`."""
    kind = node[0]
    if kind == "lit":
        return node[1]
    if kind == "ref":
        area = ctx.area(node[1])
        return XlError("#REF!") if area.ws is None else area
    if kind == "neg":
        v = _number(_scalar(evaluate(node[1], ctx)))
        return v if isinstance(v, XlError) else -v
    if kind == "op":
        return _infix(node[1], _scalar(evaluate(node[2], ctx)), _scalar(evaluate(node[3], ctx)))
    name, args = node[1], node[2]
    fn = FUNCTIONS.get(name)
    if fn is None:
        raise Unevaluable(f"the function {name} is not evaluated")
    return fn(ctx, args)


def _scalar(v: Any) -> Any:
    if isinstance(v, Area):
        if (v.min_row, v.min_col) != (v.max_row, v.max_col):
            raise Unevaluable("a range where one value is wanted")
        return v.cells()[0]
    return v


def _number(v: Any) -> float | XlError:
    if isinstance(v, XlError):
        return v
    if v is None:
        return 0.0
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, int | float):
        return float(v)
    try:
        return float(str(v).strip())
    except ValueError:
        return XlError("#VALUE!")


def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return f"{v:.15g}" if isinstance(v, float) else str(v)


def _rank(v: Any) -> int:
    """Spreadsheet ordering of types: numbers < text < logicals."""
    return 2 if isinstance(v, bool) else 1 if isinstance(v, str) else 0


def compare(a: Any, b: Any) -> int:
    """-1, 0 or 1 the way a spreadsheet compares (text without case; a blank is 0, "" or FALSE)."""
    if a is None:
        a = "" if isinstance(b, str) else False if isinstance(b, bool) else 0.0
    if b is None:
        b = "" if isinstance(a, str) else False if isinstance(a, bool) else 0.0
    ra, rb = _rank(a), _rank(b)
    if ra != rb:
        return -1 if ra < rb else 1
    if ra == 1:
        a, b = a.lower(), b.lower()
    elif ra == 0:
        a, b = float(a), float(b)
    return (a > b) - (a < b)


def _infix(op: str, a: Any, b: Any) -> Any:
    for v in (a, b):
        if isinstance(v, XlError):
            return v
    if op in ("=", "<>", "<", ">", "<=", ">="):
        c = compare(a, b)
        return {"=": c == 0, "<>": c != 0, "<": c < 0, ">": c > 0, "<=": c <= 0, ">=": c >= 0}[op]
    if op == "&":
        return _text(a) + _text(b)
    x, y = _number(a), _number(b)
    if isinstance(x, XlError) or isinstance(y, XlError):
        return x if isinstance(x, XlError) else y
    if op == "+":
        return x + y
    if op == "-":
        return x - y
    if op == "*":
        return x * y
    if op == "/":
        return XlError("#DIV/0!") if y == 0 else x / y
    try:
        return float(x ** y)
    except (OverflowError, ZeroDivisionError, TypeError):
        return XlError("#NUM!")


def truthy(v: Any) -> bool | XlError:
    v = _scalar(v)
    if isinstance(v, XlError):
        return v
    if isinstance(v, str):
        if v.upper() in ("TRUE", "FALSE"):
            return v.upper() == "TRUE"
        return XlError("#VALUE!")
    n = _number(v)
    return n if isinstance(n, XlError) else n != 0


# --- functions ------------------------------------------------------------------------------------

def _values(v: Any) -> list[Any]:
    return v.cells() if isinstance(v, Area) else [v]


def _wildcard(pattern: str) -> re.Pattern[str]:
    """A spreadsheet text pattern (`*` any run, `?` one character, `~` escapes) as a regex, caseless."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "~" and i + 1 < len(pattern) and pattern[i + 1] in "*?~":
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "*" else "." if ch == "?" else re.escape(ch))
        i += 1
    return re.compile("^" + "".join(out) + "$", re.I | re.S)


def _same(needle: Any) -> Callable[[Any], bool]:
    """Equal to `needle` as a lookup compares: text by pattern and without case, numbers by value."""
    if isinstance(needle, str):
        pattern = _wildcard(needle)
        return lambda v: isinstance(v, str) and bool(pattern.match(v))
    return lambda v: v is not None and not isinstance(v, XlError) and _rank(v) == _rank(needle) \
        and compare(v, needle) == 0


def _criterion(crit: Any) -> Callable[[Any], bool]:
    """COUNTIF-style criterion: a value (equal), or text such as ">5", "<>x", "ab*"."""
    if isinstance(crit, XlError):
        return lambda v: isinstance(v, XlError) and v.code == crit.code
    if crit is None:
        crit = 0.0  # a blank criterion cell counts as 0
    if not isinstance(crit, str):
        return _same(crit)
    m = re.match(r"^(<=|>=|<>|<|>|=)?(.*)$", crit, re.S)
    assert m
    op, rest = m.group(1) or "=", m.group(2)
    if _NUMBER.match(rest):
        target = float(rest)

        def numeric(v: Any) -> bool:
            if not _num(v):
                return op == "<>"
            return _infix(op, float(v), target) is True
        return numeric
    if op in ("=", "<>"):
        if rest == "":
            return (lambda v: v is None) if op == "=" else (lambda v: v is not None)
        same = _same(rest)
        return same if op == "=" else (lambda v: not same(v))
    return lambda v: isinstance(v, str) and _infix(op, v, rest) is True


def _countif(ctx: Context, args: list[Any]) -> Any:
    if len(args) < 2 or len(args) % 2:
        raise Unevaluable("COUNTIF(S) takes range, criterion pairs")
    pairs = [(_values(evaluate(args[i], ctx)), _criterion(_scalar(evaluate(args[i + 1], ctx))))
             for i in range(0, len(args), 2)]
    n = len(pairs[0][0])
    if any(len(vals) != n for vals, _ in pairs):
        return XlError("#VALUE!")
    return float(sum(all(test(vals[i]) for vals, test in pairs) for i in range(n)))


def _sumif(ctx: Context, args: list[Any]) -> Any:
    if len(args) not in (2, 3):
        raise Unevaluable("SUMIF takes 2 or 3 arguments")
    vals = _values(evaluate(args[0], ctx))
    test = _criterion(_scalar(evaluate(args[1], ctx)))
    sums = _values(evaluate(args[2], ctx)) if len(args) == 3 else vals
    return float(sum(s for v, s in zip(vals, sums) if test(v) and isinstance(s, int | float)
                     and not isinstance(s, bool)))


def _lookup_index(needle: Any, hay: list[Any], exact: bool) -> int | None:
    if isinstance(needle, XlError):
        return None
    if exact:
        same = _same(needle)
        return next((i for i, v in enumerate(hay) if same(v)), None)
    best = None
    for i, v in enumerate(hay):
        if v is not None and not isinstance(v, XlError) and _rank(v) == _rank(needle) and compare(v, needle) <= 0:
            best = i
    return best


def _match(ctx: Context, args: list[Any]) -> Any:
    if len(args) not in (2, 3):
        raise Unevaluable("MATCH takes 2 or 3 arguments")
    needle = _scalar(evaluate(args[0], ctx))
    kind = _number(_scalar(evaluate(args[2], ctx))) if len(args) == 3 else 1.0
    if isinstance(kind, XlError):
        return kind
    if kind < 0:
        raise Unevaluable("MATCH with match type -1 is not evaluated")
    i = _lookup_index(needle, _values(evaluate(args[1], ctx)), exact=kind == 0)
    return XlError("#N/A") if i is None else float(i + 1)


def _vlookup(ctx: Context, args: list[Any]) -> Any:
    if len(args) not in (3, 4):
        raise Unevaluable("VLOOKUP takes 3 or 4 arguments")
    needle = _scalar(evaluate(args[0], ctx))
    table = evaluate(args[1], ctx)
    if not isinstance(table, Area):
        return XlError("#VALUE!")
    col = _number(_scalar(evaluate(args[2], ctx)))
    approx = truthy(evaluate(args[3], ctx)) if len(args) == 4 else True
    if isinstance(col, XlError) or isinstance(approx, XlError):
        return col if isinstance(col, XlError) else approx
    rows = table.rows()
    if not 1 <= int(col) <= (table.max_col - table.min_col + 1):
        return XlError("#REF!")
    i = _lookup_index(needle, [r[0] for r in rows], exact=not approx)
    return XlError("#N/A") if i is None else rows[i][int(col) - 1]


def _logic(combine: Callable[[list[bool]], bool]) -> Callable[[Context, list[Any]], Any]:
    def fn(ctx: Context, args: list[Any]) -> Any:
        got = []
        for a in args:
            v = evaluate(a, ctx)
            for x in (_values(v) if isinstance(v, Area) else [v]):
                if isinstance(v, Area) and not isinstance(x, bool | int | float | XlError):
                    continue  # text and blanks in a range are skipped
                t = truthy(x)
                if isinstance(t, XlError):
                    return t
                got.append(t)
        return combine(got) if got else XlError("#VALUE!")
    return fn


def _if(ctx: Context, args: list[Any]) -> Any:
    if not 1 <= len(args) <= 3:
        raise Unevaluable("IF takes 1 to 3 arguments")
    t = truthy(evaluate(args[0], ctx))
    if isinstance(t, XlError):
        return t
    if t:
        return _scalar(evaluate(args[1], ctx)) if len(args) > 1 else True
    return _scalar(evaluate(args[2], ctx)) if len(args) > 2 else False


def _iferror(only_na: bool) -> Callable[[Context, list[Any]], Any]:
    def fn(ctx: Context, args: list[Any]) -> Any:
        if len(args) != 2:
            raise Unevaluable("IFERROR/IFNA take 2 arguments")
        v = _scalar(evaluate(args[0], ctx))
        caught = isinstance(v, XlError) and (not only_na or v.code == "#N/A")
        return _scalar(evaluate(args[1], ctx)) if caught else v
    return fn


def _is(test: Callable[[Any], bool]) -> Callable[[Context, list[Any]], Any]:
    def fn(ctx: Context, args: list[Any]) -> Any:
        if len(args) != 1:
            raise Unevaluable("IS functions take 1 argument")
        return test(_scalar(evaluate(args[0], ctx)))
    return fn


def _one(f: Callable[[Any], Any]) -> Callable[[Context, list[Any]], Any]:
    def fn(ctx: Context, args: list[Any]) -> Any:
        if len(args) != 1:
            raise Unevaluable("this function takes 1 argument")
        v = _scalar(evaluate(args[0], ctx))
        return v if isinstance(v, XlError) else f(v)
    return fn


def _numbers(ctx: Context, args: list[Any]) -> list[float] | XlError:
    out: list[float] = []
    for a in args:
        v = evaluate(a, ctx)
        for x in _values(v):
            if isinstance(x, XlError):
                return x
            if isinstance(x, int | float) and not isinstance(x, bool):
                out.append(float(x))
            elif not isinstance(v, Area):
                n = _number(x)
                if isinstance(n, XlError):
                    return n
                out.append(n)
    return out


def _aggregate(f: Callable[[list[float]], Any]) -> Callable[[Context, list[Any]], Any]:
    def fn(ctx: Context, args: list[Any]) -> Any:
        nums = _numbers(ctx, args)
        return nums if isinstance(nums, XlError) else f(nums)
    return fn


def _round(ctx: Context, args: list[Any]) -> Any:
    if len(args) not in (1, 2):
        raise Unevaluable("ROUND takes 1 or 2 arguments")
    x = _number(_scalar(evaluate(args[0], ctx)))
    d = _number(_scalar(evaluate(args[1], ctx))) if len(args) == 2 else 0.0
    if isinstance(x, XlError) or isinstance(d, XlError):
        return x if isinstance(x, XlError) else d
    q = 10 ** int(d)
    return math.copysign(math.floor(abs(x) * q + 0.5) / q, x)


def _position(axis: str) -> Callable[[Context, list[Any]], Any]:
    def fn(ctx: Context, args: list[Any]) -> Any:
        if not args:
            return float(ctx.row if axis == "row" else ctx.col)
        v = evaluate(args[0], ctx)
        if not isinstance(v, Area):
            return XlError("#VALUE!")
        return float(v.min_row if axis == "row" else v.min_col)
    return fn


def _num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


FUNCTIONS: dict[str, Callable[[Context, list[Any]], Any]] = {
    "COUNTIF": _countif, "COUNTIFS": _countif, "SUMIF": _sumif, "MATCH": _match, "VLOOKUP": _vlookup,
    "AND": _logic(all), "OR": _logic(any), "XOR": _logic(lambda v: sum(v) % 2 == 1),
    "NOT": _one(lambda v: not truthy(v) if not isinstance(truthy(v), XlError) else truthy(v)),
    "IF": _if, "IFERROR": _iferror(False), "IFNA": _iferror(True),
    "ISNUMBER": _is(_num), "ISTEXT": _is(lambda v: isinstance(v, str)),
    "ISNONTEXT": _is(lambda v: not isinstance(v, str)), "ISBLANK": _is(lambda v: v is None),
    "ISLOGICAL": _is(lambda v: isinstance(v, bool)), "ISERROR": _is(lambda v: isinstance(v, XlError)),
    "ISERR": _is(lambda v: isinstance(v, XlError) and v.code != "#N/A"),
    "ISNA": _is(lambda v: isinstance(v, XlError) and v.code == "#N/A"),
    "TRUE": lambda ctx, args: True, "FALSE": lambda ctx, args: False,
    "LEN": _one(lambda v: float(len(_text(v)))), "TRIM": _one(lambda v: " ".join(_text(v).split())),
    "UPPER": _one(lambda v: _text(v).upper()), "LOWER": _one(lambda v: _text(v).lower()),
    "ABS": _one(lambda v: abs(n) if not isinstance(n := _number(v), XlError) else n),
    "ROUND": _round,
    "SUM": _aggregate(lambda v: float(sum(v))), "MIN": _aggregate(lambda v: min(v) if v else 0.0),
    "MAX": _aggregate(lambda v: max(v) if v else 0.0), "COUNT": _aggregate(lambda v: float(len(v))),
    "AVERAGE": _aggregate(lambda v: sum(v) / len(v) if v else XlError("#DIV/0!")),
    "COUNTA": lambda ctx, args: float(sum(x is not None for a in args for x in _values(evaluate(a, ctx)))),
    "EXACT": lambda ctx, args: _text(_scalar(evaluate(args[0], ctx))) == _text(_scalar(evaluate(args[1], ctx))),
    "ROW": _position("row"), "COLUMN": _position("col"),
}


# --- rules ----------------------------------------------------------------------------------------

def _colour_set(c: Any) -> bool:
    if c is None:
        return False
    if getattr(c, "type", "rgb") in ("theme", "indexed"):
        return True
    rgb = getattr(c, "rgb", None)
    return isinstance(rgb, str) and rgb not in ("00000000",)


def visible(dxf: Any) -> bool:
    """Whether a rule's format changes how a cell looks (a fill, a font change or a border)."""
    if dxf is None:
        return False
    fill = dxf.fill
    if fill is not None and (getattr(fill, "patternType", None) not in (None, "none")
                             or _colour_set(getattr(fill, "fgColor", None))
                             or _colour_set(getattr(fill, "bgColor", None)) or getattr(fill, "stop", None)):
        return True
    font = dxf.font
    if font is not None and (font.b or font.i or font.u or font.strike or _colour_set(font.color)):
        return True
    border = dxf.border
    return border is not None and any(getattr(getattr(border, side, None), "style", None)
                                      for side in ("left", "right", "top", "bottom", "diagonal"))


def _bounds(sqref: Any) -> tuple[int, int, int, int]:
    rs = list(sqref.ranges)
    return (min(r.min_row for r in rs), min(r.min_col for r in rs), max(r.max_row for r in rs),
            max(r.max_col for r in rs))


def _coords(sqref: Any, ws: Any, memo: dict) -> list[str]:
    """Every cell a rule covers, in row order (whole columns and rows cut to the used area);
    counted in `memo`'s reads."""
    out = set()
    for r in sqref.ranges:
        max_row, max_col = min(r.max_row, max(ws.max_row, 1)), min(r.max_col, max(ws.max_column, 1))
        size = max(0, max_row - r.min_row + 1) * max(0, max_col - r.min_col + 1)
        memo["reads"] = memo.get("reads", 0) + size
        if size > MAX_CELLS or memo["reads"] > MAX_READS:
            raise Unevaluable(f"the range {sqref} is too large to evaluate")
        out |= {(row, col) for row in range(r.min_row, max_row + 1) for col in range(r.min_col, max_col + 1)}
    return [f"{get_column_letter(c)}{r}" for r, c in sorted(out)]


def _condition(rule: Any, sqref: Any, wb: Any, sheet: str, memo: dict) -> Callable[[str], bool]:
    """A test of one cell for `rule` on `sqref`; raises `Unevaluable` for what is not evaluated.
    `memo` keeps the ranges formulas read (read once for every cell) and counts the reads."""
    ws = wb[sheet]
    top, left, _, _ = _bounds(sqref)
    kind = rule.type

    def context(coord: str) -> Context:
        col, row = coordinate_from_string(coord)
        c = column_index_from_string(col)
        return Context(wb, sheet, row - top, c - left, row, c, memo)

    def value(coord: str) -> Any:
        col, row = coordinate_from_string(coord)
        return value_at(ws, row, column_index_from_string(col))

    def formula_at(i: int) -> Callable[[str], Any]:
        formulas = list(rule.formula or [])
        if len(formulas) <= i:
            raise Unevaluable(f"a {kind} rule without its formula")
        tree = parse(formulas[i])
        return lambda coord: _scalar(evaluate(tree, context(coord)))

    if kind == "expression":
        f = formula_at(0)
        return lambda coord: truthy(f(coord)) is True
    if kind == "cellIs":
        op = rule.operator
        ops = {"equal": "=", "notEqual": "<>", "greaterThan": ">", "lessThan": "<", "greaterThanOrEqual": ">=",
               "lessThanOrEqual": "<="}
        if op in ops:
            f = formula_at(0)
            return lambda coord: _infix(ops[op], value(coord), f(coord)) is True
        if op in ("between", "notBetween"):
            f, g = formula_at(0), formula_at(1)

            def between(coord: str) -> bool:
                v, a, b = value(coord), f(coord), g(coord)
                if any(isinstance(x, XlError) for x in (v, a, b)):
                    return False
                lo, hi = (a, b) if compare(a, b) <= 0 else (b, a)
                inside = compare(v, lo) >= 0 and compare(v, hi) <= 0
                return inside if op == "between" else not inside
            return between
        raise Unevaluable(f"a cellIs rule with the operator {op!r}")
    if kind in ("containsText", "notContainsText", "beginsWith", "endsWith"):
        needle = (rule.text or "").lower()
        test = {"containsText": lambda s: needle in s, "notContainsText": lambda s: needle not in s,
                "beginsWith": lambda s: s.startswith(needle), "endsWith": lambda s: s.endswith(needle)}[kind]
        return lambda coord: not isinstance(value(coord), XlError) and test(_text(value(coord)).lower())
    if kind in ("containsBlanks", "notContainsBlanks"):
        blank = lambda coord: not isinstance(value(coord), XlError) and not _text(value(coord)).strip()  # noqa: E731
        return blank if kind == "containsBlanks" else (lambda coord: not blank(coord))
    if kind in ("containsErrors", "notContainsErrors"):
        return lambda coord: isinstance(value(coord), XlError) == (kind == "containsErrors")
    covered = [value(c) for c in _coords(sqref, ws, memo)]
    if kind in ("duplicateValues", "uniqueValues"):
        keys = [_text(v).lower() if isinstance(v, str) else v for v in covered if v is not None]
        counts = {k: keys.count(k) for k in set(keys)}

        def dup(coord: str) -> bool:
            v = value(coord)
            if v is None:
                return False
            n = counts.get(_text(v).lower() if isinstance(v, str) else v, 0)
            return n > 1 if kind == "duplicateValues" else n == 1
        return dup
    nums = sorted(float(v) for v in covered if _num(v))
    if kind == "top10":
        if not nums:
            return lambda coord: False
        rank = int(rule.rank or 10)
        k = max(1, int(len(nums) * rank / 100)) if rule.percent else min(rank, len(nums))
        edge = nums[k - 1] if rule.bottom else nums[-k]
        return lambda coord: _num(value(coord)) and (value(coord) <= edge if rule.bottom else value(coord) >= edge)
    if kind == "aboveAverage":
        if rule.stdDev:
            raise Unevaluable("an aboveAverage rule with standard deviations")
        if not nums:
            return lambda coord: False
        mean = sum(nums) / len(nums)
        above = rule.aboveAverage is None or bool(rule.aboveAverage)
        eq = bool(rule.equalAverage)

        def average(coord: str) -> bool:
            v = value(coord)
            if not _num(v):
                return False
            return (v > mean or (eq and v == mean)) if above else (v < mean or (eq and v == mean))
        return average
    if kind in ("colorScale", "dataBar", "iconSet"):
        raise Unevaluable(f"a {kind} rule marks every cell by its value; it highlights no particular cells")
    raise Unevaluable(f"a {kind} rule is not evaluated")


@dataclass
class Highlights:
    """What the rules of a sheet do to some cells: those shown highlighted, and what could not be
    evaluated (a rule that cannot be evaluated never counts as matching)."""

    cells: set[str]
    problems: list[str]


def highlighted(rules_ws: Any, values_wb: Any, cells: Iterable[str]) -> Highlights:
    """Which of `cells` (on `rules_ws`'s sheet) its conditional formats highlight: the rules are
    read from `rules_ws` (the agent's workbook), the values from `values_wb` (recalculated)."""
    wanted = set(cells)
    sheet = rules_ws.title
    rules = [(cf.sqref, rule) for cf in rules_ws.conditional_formatting for rule in cf.rules]
    entries = sorted(enumerate(rules), key=lambda e: (e[1][1].priority or 0, e[0]))
    lit: set[str] = set()
    stopped: set[str] = set()
    problems: list[str] = []
    memo: dict = {}
    if sheet not in values_wb.sheetnames:
        return Highlights(set(), [f"the sheet {sheet!r} is missing from the recalculated workbook"])
    for _, (sqref, rule) in entries:
        try:
            hit = [c for c in _coords(sqref, values_wb[sheet], memo) if c in wanted and c not in stopped]
            if not hit:
                continue
            test = _condition(rule, sqref, values_wb, sheet, memo)
            on = [c for c in hit if test(c)]
        except (Unevaluable, RecursionError) as e:
            problems.append(f"the {rule.type} rule on {sqref} ({'; '.join(rule.formula or []) or 'no formula'}) "
                            f"cannot be evaluated: {e}")
            continue
        if visible(rule.dxf):
            lit |= set(on)
        if rule.stopIfTrue:
            stopped |= set(on)
    return Highlights(lit, problems)
