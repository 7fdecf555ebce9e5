"""Candidate bugs in Python source, from its `ast` (the operators of `mutation.OPERATORS`).

Only code inside functions and methods is mutated (a bug at module level breaks the import and
every test with it: a task that says nothing about where). Docstrings, annotations and string
literals are never touched. Every candidate still parses; a no-op is never one.
"""

from __future__ import annotations

import ast

from environments.swe.factory.mutation import Mutation

LANGUAGES = ("python",)

_FLIP = {ast.Lt: ">=", ast.LtE: ">", ast.Gt: "<=", ast.GtE: "<", ast.Eq: "!=", ast.NotEq: "==",
         ast.Is: "is not", ast.IsNot: "is", ast.In: "not in", ast.NotIn: "in"}
_OFF_BY_ONE = {ast.Lt: "<=", ast.LtE: "<", ast.Gt: ">=", ast.GtE: ">"}
_OP_TEXT = {ast.Lt: ("<",), ast.LtE: ("<=",), ast.Gt: (">",), ast.GtE: (">=",), ast.Eq: ("==",),
            ast.NotEq: ("!=",), ast.Is: ("is",), ast.IsNot: ("is not",), ast.In: ("in",), ast.NotIn: ("not in",)}
_ARITH = {ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.Mult: ("*", "//"), ast.FloorDiv: ("//", "*"),
          ast.Mod: ("%", "//")}


class _Source:
    """Character offsets from `ast`'s (line, UTF-8 byte column) positions."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, line: int, col_bytes: int) -> int:
        raw = self.lines[line - 1].encode("utf-8")
        return self.starts[line - 1] + len(raw[:col_bytes].decode("utf-8", errors="ignore"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (self.offset(node.lineno, node.col_offset),  # type: ignore[attr-defined]
                self.offset(node.end_lineno, node.end_col_offset))  # type: ignore[attr-defined]

    def line_span(self, first: int, last: int) -> tuple[int, int]:
        """Whole lines first..last (1-based, inclusive), newline included."""
        return self.starts[first - 1], self.starts[last]

    def owns_lines(self, node: ast.AST) -> bool:
        """Whether `node` alone fills its lines (nothing else before it or after it but a comment)."""
        start, end = self.span(node)
        ls, le = self.line_span(node.lineno, node.end_lineno)  # type: ignore[attr-defined]
        after = self.text[end:le].strip()
        return not self.text[ls:start].strip() and (not after or after.startswith("#"))


def _docstring(node: ast.AST) -> ast.AST | None:
    body = getattr(node, "body", None)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[0]
    return None


class _Finder(ast.NodeVisitor):
    def __init__(self, src: _Source, path: str) -> None:
        self.src = src
        self.path = path
        self.out: list[Mutation] = []
        self.function = ""
        self.skip: set[int] = set()  # ids of nodes never mutated (docstrings, annotations)

    # -- helpers ---------------------------------------------------------------------------------
    def add(self, operator: str, start: int, end: int, replacement: str, line: int) -> None:
        original = self.src.text[start:end]
        if replacement != original and self.function:
            self.out.append(Mutation(self.path, operator, line, start, end, replacement, self.function, original))

    def _gap_token(self, left: ast.AST, right: ast.AST, tokens: tuple[str, ...]) -> tuple[int, int] | None:
        """The operator token between two nodes: the text between them less spaces and brackets."""
        a, b = self.src.span(left)[1], self.src.span(right)[0]
        gap = self.src.text[a:b]
        if "#" in gap or "\\" in gap:
            return None
        core = gap.strip().strip("()").strip()
        if core not in tokens:
            return None
        i = gap.index(core)
        return a + i, a + i + len(core)

    # -- traversal -------------------------------------------------------------------------------
    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if node.name.startswith("test"):
            return
        outer, self.function = self.function, node.name
        if (doc := _docstring(node)) is not None:
            self.skip.add(id(doc))
        for a in [*node.args.args, *node.args.kwonlyargs, *node.args.posonlyargs, node.args.vararg, node.args.kwarg]:
            if a is not None and a.annotation is not None:
                self.skip.add(id(a.annotation))
        if node.returns is not None:
            self.skip.add(id(node.returns))
        for d in node.decorator_list:
            self.skip.add(id(d))
        self._body(node.body, function=node)
        for stmt in node.body:
            self.visit(stmt)
        self.function = outer

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        if (doc := _docstring(node)) is not None:
            self.skip.add(id(doc))
        outer, self.function = self.function, ""
        for stmt in node.body:
            self.visit(stmt)
        self.function = outer

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.skip.add(id(node.annotation))
        self.generic_visit(node)

    def generic_visit(self, node: ast.AST) -> None:
        if id(node) in self.skip:
            return
        super().generic_visit(node)

    def _body(self, body: list[ast.stmt], function: ast.AST | None = None) -> None:
        """drop_statement and remove_early_return over one block of statements."""
        if not self.function:
            return
        for i, stmt in enumerate(body):
            if id(stmt) in self.skip or not self.src.owns_lines(stmt):
                continue
            first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
            start, end = self.src.line_span(first, last)
            if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)) or (
                    isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
                if len(body) > 1:
                    self.add("drop_statement", start, end, "", first)
            elif isinstance(stmt, ast.If) and not stmt.orelse and i < len(body) - 1 and len(stmt.body) == 1 \
                    and isinstance(stmt.body[0], (ast.Return, ast.Raise)) and function is not None:
                self.add("remove_early_return", start, end, "", first)

    def visit_If(self, node: ast.If) -> None:
        self._condition(node.test, node.lineno)
        self._body(node.body)
        self._body(node.orelse)
        self._drop_branch(node)
        self.generic_visit(node)

    def visit_While(self, node: ast.While) -> None:
        self._condition(node.test, node.lineno)
        self._body(node.body)
        self.generic_visit(node)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self._body(node.body)
        self.generic_visit(node)

    visit_AsyncFor = visit_For  # type: ignore[assignment]

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        self._body(node.body)
        self.generic_visit(node)

    visit_AsyncWith = visit_With  # type: ignore[assignment]

    def visit_Try(self, node: ast.Try) -> None:
        self._body(node.body)
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._condition(node.test, node.lineno)
        self.generic_visit(node)

    # -- operators -------------------------------------------------------------------------------
    def _condition(self, test: ast.expr, line: int) -> None:
        start, end = self.src.span(test)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.src.span(test.operand)
            self.add("invert_condition", start, end, self.src.text[inner[0]:inner[1]], line)
        elif test.lineno == test.end_lineno:
            self.add("invert_condition", start, end, f"not ({self.src.text[start:end]})", line)

    def _drop_branch(self, node: ast.If) -> None:
        if not node.orelse or not self.function:
            return
        lines = self.src.lines
        first_else = node.orelse[0]
        is_elif = isinstance(first_else, ast.If) and lines[first_else.lineno - 1].lstrip().startswith("elif")
        if is_elif:
            # only the elif's own branch: up to its own else/elif line
            chain = first_else
            stop = (chain.orelse[0].lineno - 1) if chain.orelse else chain.end_lineno
            if chain.orelse:  # the line of the following `else:` / `elif` stays
                stop = next((n for n in range(chain.body[-1].end_lineno + 1, chain.orelse[0].lineno + 1)
                             if lines[n - 1].lstrip().startswith(("else", "elif"))), chain.orelse[0].lineno) - 1
            start, end = self.src.line_span(first_else.lineno, stop)
            self.add("drop_branch", start, end, "", first_else.lineno)
            return
        body_end = node.body[-1].end_lineno or node.lineno
        else_line = next((n for n in range(body_end + 1, first_else.lineno + 1)
                          if lines[n - 1].strip().split("#")[0].strip() == "else:"), None)
        if else_line is None:
            return
        start, end = self.src.line_span(else_line, node.orelse[-1].end_lineno or else_line)
        self.add("drop_branch", start, end, "", else_line)

    def visit_Compare(self, node: ast.Compare) -> None:
        if len(node.ops) == 1:
            op = type(node.ops[0])
            tok = self._gap_token(node.left, node.comparators[0], _OP_TEXT[op])
            if tok is not None:
                self.add("flip_comparison", *tok, _FLIP[op], node.lineno)
                if op in _OFF_BY_ONE:
                    self.add("off_by_one", *tok, _OFF_BY_ONE[op], node.lineno)
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        word = "and" if isinstance(node.op, ast.And) else "or"
        tok = self._gap_token(node.values[0], node.values[1], (word,))
        if tok is not None and node.lineno == node.end_lineno:
            self.add("flip_boolean_operator", *tok, "or" if word == "and" else "and", node.lineno)
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        op = type(node.op)
        if op in _ARITH:
            text, other = _ARITH[op]
            tok = self._gap_token(node.left, node.right, (text,))
            if tok is not None:
                self.add("flip_arithmetic", *tok, other, node.lineno)
        if op in (ast.Add, ast.Sub) and isinstance(node.right, ast.Constant) and node.right.value == 1 \
                and type(node.right.value) is int:
            start, end = self.src.span(node)
            left = self.src.span(node.left)
            self.add("off_by_one", start, end, self.src.text[left[0]:left[1]], node.lineno)
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        for part in ([node.slice.lower, node.slice.upper] if isinstance(node.slice, ast.Slice) else [node.slice]):
            if isinstance(part, ast.Constant) and type(part.value) is int:
                start, end = self.src.span(part)
                self.add("off_by_one", start, end, str(part.value + 1), part.lineno)
            elif isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.USub) \
                    and isinstance(part.operand, ast.Constant) and type(part.operand.value) is int:
                start, end = self.src.span(part)
                self.add("off_by_one", start, end, str(-part.operand.value + 1) if part.operand.value > 1 else "-2",
                         part.lineno)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        args = node.args
        if len(args) >= 2 and not any(isinstance(a, ast.Starred) for a in args[:2]):
            a, b = self.src.span(args[0]), self.src.span(args[1])
            ta, tb = self.src.text[a[0]:a[1]], self.src.text[b[0]:b[1]]
            if ta != tb and "#" not in self.src.text[a[1]:b[0]]:
                self.add("swap_arguments", a[0], b[1], tb + self.src.text[a[1]:b[0]] + ta, node.lineno)
        if isinstance(node.func, ast.Name) and node.func.id in ("min", "max") and len(args) >= 1:
            start, end = self.src.span(node.func)
            self.add("flip_arithmetic", start, end, "max" if node.func.id == "min" else "min", node.lineno)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if id(node) in self.skip:
            return
        v = node.value
        start, end = self.src.span(node)
        if v is True or v is False:
            self.add("wrong_constant", start, end, "False" if v else "True", node.lineno)
        elif type(v) is int and self.src.text[start:end].isdigit():
            self.add("wrong_constant", start, end, "1" if v == 0 else "0" if v == 1 else str(v + 1), node.lineno)


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def candidates(language: str, path: str, source: str) -> list[Mutation]:
    """Every candidate mutation of `source` (deterministic order: offset, then operator)."""
    if language not in LANGUAGES:
        raise ValueError(f"mutate_py handles {', '.join(LANGUAGES)}, not {language}")
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    finder = _Finder(_Source(source), path)
    if (doc := _docstring(tree)) is not None:
        finder.skip.add(id(doc))
    finder.visit(tree)
    seen: set[tuple[int, int, str]] = set()
    out = []
    for m in sorted(finder.out, key=lambda m: (m.start, m.operator, m.end)):
        key = (m.start, m.end, m.replacement)
        if key in seen:
            continue
        seen.add(key)
        if _parses(source[:m.start] + m.replacement + source[m.end:]):
            out.append(m)
    return out
