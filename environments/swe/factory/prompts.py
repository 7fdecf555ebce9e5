"""Issue text for a factory task, written from what its failing tests observed (no model).

A user reports what they saw: the call, what came back and what they expected, or the failure
lines of a CI log. The text never holds a test's code, a test's name, a test file's path, the
mutated line (before or after the bug) or the test command's own code; a sentence that would is
dropped. Styles: `report` (a user's bug report with the call and values), `ci-log` (an excerpt of
the failing run's error lines), `terse` (one line, as in a tracker's title). A runner whose
console prints no failure messages (its report goes to a file only) leaves just the count of
failing tests. The optional rewrite by an OpenAI-compatible endpoint is not built yet.
"""

from __future__ import annotations

import ast
import builtins
import json
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from environments.swe.factory.packages import Package
from verifiers.swe import RunResult, is_protected

STYLES = ("report", "ci-log", "terse")
_HEADER = re.compile(r"^_{3,} (.+?) _{3,}$")
_ASSERT_VALUES = re.compile(r"^(?:AssertionError: )?assert (.+?) (==|!=|is|in|not in) (.+)$")
_BUILTINS = frozenset(dir(builtins))
MAX_VALUE = 160


@dataclass
class Failure:
    call: str = ""        # the expression the test checked, e.g. `groupby(len, words)`
    got: str = ""
    expected: str = ""
    error: str = ""       # an exception line, e.g. `TypeError: ...`
    lines: tuple[str, ...] = ()  # the run's `E` lines


@dataclass
class Issue:
    text: str
    title: str
    style: str
    called_directly: bool
    #: whether the text quotes anything the failing tests saw (a call, a value, an error line): the
    #: tests are not in the checkout, so an issue that only counts them leaves nothing to go on
    informative: bool = True


def _blocks(output: str) -> dict[str, list[str]]:
    """pytest's failure sections by their header (`TestX.test_y`, `test_z[1]`)."""
    out: dict[str, list[str]] = {}
    cur: list[str] | None = None
    for line in output.splitlines():
        m = _HEADER.match(line.strip())
        if m:
            cur = out.setdefault(m.group(1), [])
        elif line.startswith(("=====", "FAILED ", "ERROR ")):
            cur = None
        elif cur is not None:
            cur.append(line)
    return out


def _failure(lines: list[str]) -> Failure:
    e_lines = tuple(line[1:].strip() for line in lines if line.startswith("E "))
    f = Failure(lines=e_lines)
    checked = [line[1:].strip() for line in lines if line.startswith(">")]
    if checked:
        try:
            node = ast.parse(checked[-1]).body[0]
        except (SyntaxError, IndexError, ValueError):
            node = None
        if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare) and isinstance(node.test.left, ast.Call):
            f.call = ast.unparse(node.test.left)
        elif isinstance(node, (ast.Expr, ast.Assign)) and isinstance(node.value, ast.Call):
            f.call = ast.unparse(node.value)
    for line in e_lines:
        m = _ASSERT_VALUES.match(line)
        if m and not f.got:
            f.got, f.expected = m.group(1), m.group(3)
        elif re.match(r"^[A-Z]\w*(Error|Exception|Warning)\b", line) and not f.error:
            f.error = line
    return f


def _test_name(test_id: str) -> str:
    """The test's own name in an id of any runner (`pkg.tests.test_x#test_y`, `a.py::T::test_y[1]`)."""
    return re.split(r"::|#|\.|/", test_id.split("[")[0])[-1]


def _test_files(test_id: str) -> list[str]:
    """Candidate files of a test id: `a/b.py::t` names one; `a.b.c#t` (junit's class name) may be
    module a/b/c.py or class c of a/b.py."""
    if "::" in test_id:
        return [test_id.split("::")[0]]
    parts = test_id.split("#")[0].split(".")
    return ["/".join(parts[:i]) + ".py" for i in range(len(parts), 0, -1)]


def _scrub(line: str) -> str:
    return re.sub(r"0x[0-9a-f]{6,}", "0x…", line)


def changed_lines(patch: str) -> list[str]:
    """The lines a unified diff removes or adds, without their `-`/`+` (file headers left out)."""
    return [line[1:] for line in patch.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def _forbidden(f2p: list[str], gold: str) -> list[str]:
    """Strings the text must not contain: test names, test paths, a line the fix changes either way."""
    out = {_test_name(t) for t in f2p} | {f for t in f2p for f in _test_files(t)[:1]}
    out |= {line.strip() for line in changed_lines(gold) if len(line.strip()) >= 8}
    return sorted((x for x in out if x), key=len, reverse=True)


#: A line sharing this many characters in a row with the package's test command quotes the
#: harness (a runner given code inline, e.g. node's `--import data:...` adapter echoed in a stack
#: frame), not the library's behaviour.
HARNESS_RUN = 32


def _harness_windows(test_command: str) -> frozenset[str]:
    text = " ".join(test_command.split())
    return frozenset(text[i:i + HARNESS_RUN] for i in range(len(text) - HARNESS_RUN + 1))


def _quotes(windows: frozenset[str], line: str) -> bool:
    text = " ".join(line.split())
    return any(text[i:i + HARNESS_RUN] in windows for i in range(len(text) - HARNESS_RUN + 1))


def _api(call: str) -> str:
    """The library function a failing call exercises: `next(merge_sorted(a, b))` is about
    `merge_sorted`, not `next` (builtins wrap the call in many tests)."""
    try:
        node = ast.parse(call, mode="eval").body
    except SyntaxError:
        return call.split("(")[0]
    while (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _BUILTINS
           and node.args and isinstance(node.args[0], ast.Call)):
        node = node.args[0]
    return ast.unparse(node.func) if isinstance(node, ast.Call) else call.split("(")[0]


#: Lines that state what a failing check saw, in any runner's console (node, go, cargo, rspec, ...).
_ASSERTION = re.compile(r"(?i)\b(expected|actual|assert\w*|got|want|panic\w*|mismatch|not equal|differ\w*)\b"
                        r"|!==|===|(?-i:[A-Z]\w*(Error|Exception))\b"  # a class name, not rspec's raise_error
                        r"|^\s*(left|right):"  # Rust's assert_eq! prints both sides so
                        r"|\S\s+!=\s+\S")  # go's `t.Errorf("%v != %v", got, want)`: `Max([1 2]) => 3 != 2`
#: Lines that report a test's status (they name the test, or a passing one), a stack frame, or the
#: source line a check failed on (rspec's `Failure/Error:` echoes the hidden test's code).
_STATUS_OR_FRAME = re.compile(r"^\s*(✔|✓|√|✖|✗|×|ok\b|not ok\b|PASS|FAIL|--- (PASS|FAIL)|"
                              r"=== (RUN|CONT|PAUSE|NAME)|test .* \.\.\. |at |#\s*(Subtest|tests|pass|fail)|"
                              r"Failure/Error:)|node:internal|\.\w+:\d+")

_LOCATION = re.compile(r"^\s*[\w./-]+\.\w+:\d+(:\d+)?:\s+")
_EVENT_FRAGMENT = re.compile(r'(Action|Output|Test|Package|event|stdout)"\s*:\s*"')
#: Unity's failure line (`tests/parse_number.c:60:assert_is_number:FAIL: Expected 1 Was 0`): its
#: file, line and test name go, its message stays
_UNITY_FAIL = re.compile(r"^[\w./-]+:\d+:\w+:FAIL:?[ \t]*")
#: Rust's panic line names the test's thread, and its message ends with the test file's location
_RUST_THREAD = re.compile(r"^thread '[^']*' panicked at ")
_RUST_LOCATION = re.compile(r"', [\w./-]+\.rs:\d+:\d+$")


def _console_lines(output: str) -> Iterator[str]:
    """The console's lines, with a JSON event stream's (`go test -json`, libtest's) printed text
    in place of each event."""
    for line in output.splitlines():
        if line.startswith("{") and line.endswith("}"):
            try:
                event = json.loads(line)
            except ValueError:
                event = None
            if isinstance(event, dict):
                text = event.get("Output") or event.get("stdout") or ""
                yield from (str(text).splitlines() if isinstance(text, str) else [])
                continue
        if _EVENT_FRAGMENT.search(line):  # an event cut by the output's tail: its text unknown
            continue
        yield line


#: An exception's class alone (`NoMethodError:`, `E   AssertionError`): it says what kind of
#: failure, never what was seen; rspec and others print the message on the next line.
_BARE_ERROR = re.compile(r"^[A-Z]\w*(Error|Exception|Failure)?:?$")
_BARE_LABEL = re.compile(r"^[\w ]{1,20}:$")


def _observed(raw: str) -> str:
    """A console line without the file, line and test name a runner puts before what it saw (go's
    `x_test.go:12: got 3`, Unity's, Rust's panic)."""
    line = _LOCATION.sub("", _UNITY_FAIL.sub("", raw.strip())).strip()
    return _RUST_LOCATION.sub("'", _RUST_THREAD.sub("panicked at ", line))


def _assertion_lines(output: str, ok: Callable[[str], bool]) -> list[str]:
    """Up to 8 distinct lines of `output` that say what a failing check saw (no status lines,
    test names, stack frames or file:line); a bare exception class brings its message line."""
    out = []
    lines = [_observed(raw) for raw in _console_lines(output)]
    for i, line in enumerate(lines):
        if _ASSERTION.search(line) and not _STATUS_OR_FRAME.search(line) and ok(line) and not line.startswith(">"):
            out.append(_scrub(line))
            message = next((x for x in lines[i + 1:i + 3] if x), "")
            if _BARE_ERROR.match(line) and message and not _STATUS_OR_FRAME.search(message) and ok(message) \
                    and not message.startswith((">", "#")):
                out.append(_scrub(message))
    return list(dict.fromkeys(out))[:8]


def _says_something(excerpt: list[str]) -> bool:
    """Whether a CI-log excerpt quotes more than exception class names and bare labels (go's
    `got:` and `want:` lines whose values followed on lines of their own)."""
    return any(not _BARE_ERROR.match(line) and not _BARE_LABEL.match(line) for line in excerpt)


def _clip(value: str) -> str:
    return value if len(value) <= MAX_VALUE else value[: MAX_VALUE - 1] + "…"


def _called_directly(names: set[str], f2p: list[str], tree: Path, pkg: Package) -> bool:
    """Whether a failing test's file names a mutated function (a call depth of one, likely)."""
    files = {f for t in f2p for f in _test_files(t)}
    for rel in files:
        p = tree / rel
        if p.is_file() and is_protected(rel, pkg.test_globs):
            text = p.read_text(encoding="utf-8", errors="replace")
            if any(re.search(rf"\b{re.escape(n)}\b", text) for n in names):
                return True
    return False


def _self_contained(call: str) -> bool:
    """Whether a call's arguments mean something outside its test: literals and builtins only
    (`next(it)` names a variable of the hidden test)."""
    try:
        node = ast.parse(call, mode="eval").body
    except SyntaxError:
        return False
    if not isinstance(node, ast.Call):
        return False
    args = [*node.args, *(k.value for k in node.keywords)]
    return all(n.id in _BUILTINS for a in args for n in ast.walk(a) if isinstance(n, ast.Name))


def _also(shown: Failure, failures: list[Failure], ok: Callable[[str], bool]) -> list[str]:
    """Sentences for failing calls of up to two more functions than `shown`'s: the tests are not
    in the checkout, so a second bug (a pair's) must be told, not found by running them."""
    apis, out = {_api(shown.call)}, []
    for f in failures:
        if len(apis) >= 3 or _api(f.call) in apis or not _self_contained(f.call) or f.error.startswith("NameError"):
            continue
        what = (f"`{_clip(f.call)}` gives `{_scrub(_clip(f.got))}` instead of `{_clip(f.expected)}`"
                if f.got and f.expected else f"`{_clip(f.call)}` raises `{_clip(f.error)}`")
        if ok(what):
            out.append(f"Also, {what}.")
            apis.add(_api(f.call))
    return out


def write(pkg: Package, f2p: list[str], run: RunResult, functions: set[str], gold: str, tree: Path,
          rng: random.Random) -> Issue:
    """The issue for a bug whose FAIL_TO_PASS tests `f2p` failed in `run`, fixed by the patch `gold`
    in `functions`. The tests are not in the agent's checkout (`repo.source_base_commit`), so the
    text says what they saw: the failing calls of up to three functions, or the CI log's lines."""
    blocks = _blocks(run.test_output)
    failures = []
    for t in f2p:
        name = _test_name(t)
        for header, lines in blocks.items():
            if _test_name(header.replace(".", "::")) == name or header.endswith(name):
                failures.append(_failure(lines))
                break
    forbidden = _forbidden(f2p, gold)
    harness = _harness_windows(pkg.test_command)

    def ok(sentence: str) -> bool:
        return (not any(x in sentence for x in forbidden) and not re.search(r"\btest_\w+|tests?/", sentence)
                and not _quotes(harness, sentence))

    with_call = [f for f in failures if f.call and (f.got or f.error) and ok(f.call)]
    style = rng.choice(STYLES)
    # a crate vendored in another package's source goes by its own name
    name = pkg.slug if pkg.source.root else pkg.name
    label = f"{name} (vendored in {pkg.name} {pkg.version})" if pkg.source.root else f"{name} {pkg.version}"
    n = len(f2p)
    paragraphs: list[str] = []
    title = f"{name}: wrong results since the last change"
    if style == "report" and with_call:
        f = rng.choice(with_call)
        if f.got and f.expected:
            sentence = (f"With {label}, `{_clip(f.call)}` gives `{_scrub(_clip(f.got))}`; "
                        f"I expected `{_clip(f.expected)}`.")
        else:
            sentence = f"With {label}, `{_clip(f.call)}` fails with `{_clip(f.error)}`."
        if ok(sentence):
            paragraphs.append(sentence)
            title = f"{name}: `{_clip(_api(f.call))}` " + ("returns a wrong result" if f.got else "raises")
            paragraphs += _also(f, with_call, ok)
    if style in ("report", "terse") and not paragraphs and with_call:
        f = with_call[0]
        what = f"gives `{_scrub(_clip(f.got))}` instead of `{_clip(f.expected)}`" if f.got and f.expected \
            else f"raises `{_clip(f.error)}`"
        sentence = f"`{_clip(f.call)}` {what} ({label})."
        if ok(sentence):
            paragraphs = [sentence, *_also(f, with_call, ok)]
            style = "terse"
            title = f"{name}: `{_clip(_api(f.call))}` misbehaves"
    informative = True
    if not paragraphs:
        style = "ci-log"
        excerpt = list(dict.fromkeys(_scrub(line) for f in failures for line in f.lines if ok(line)))[:8]
        if not excerpt:  # a runner whose console we cannot read: its assertion lines, whatever the format
            excerpt = _assertion_lines(run.test_output, ok)
        paragraphs.append(f"Since the last change to {label}, {n} test{'s' if n != 1 else ''} of our CI "
                          f"fail{'s' if n == 1 else ''}. From the CI log:")
        paragraphs.append("\n".join("    " + _clip(x) for x in excerpt) if excerpt else
                          "    (the failing assertions print no values)")
        informative = _says_something(excerpt)
        title = f"{name}: {n} test{'s fail' if n != 1 else ' fails'} in CI"
    if style != "terse":
        others = n - 1
        if others > 0 and style != "ci-log":
            paragraphs.append(f"{others} other test{'s' if others != 1 else ''} of our CI fail"
                              f"{'s' if others == 1 else ''} the same way or nearby.")
        paragraphs.append("Please fix the library. The failing tests are correct; they are not in this checkout, "
                          "and they run when the fix is checked.")
    text = "\n\n".join(paragraphs)
    return Issue(text=text, title=title, style=style, called_directly=_called_directly(functions, f2p, tree, pkg),
                 informative=informative)
