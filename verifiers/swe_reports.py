"""Parsers for the structured test reports SWE tasks' runners write (never console text).

Six formats cover every language: `junit_xml` (dialect tolerant: pytest, node, CTest, gtest,
Surefire, EUnit, PHPUnit, busted...), `go_test_json` (test2json events), `libtest_json` (Rust's
`--format json`), `tap` (TAP 12/13, node's indented subtests, prove's per-file headers),
`rspec_json` and `nunit_xml` (NUnit 2 and 3).

Each parser maps a normalised test id to one status (`passed`, `failed`, `error`, `skipped`,
`flaky`). When an id appears more than once, the worst status wins, so a fake "pass" line can
never hide a real failure of the same test, and the id is listed in `Statuses.duplicates` (a
report that names a test twice is forged). Malformed input raises `ReportError`.

Ids (stable across runs; see research/swe.md §6.1):
    junit_xml     `classname#name` (`name` when there is no classname)
    go_test_json  `importpath/TestName[/subtest]`
    libtest_json  `module::test_name` as libtest names it
    tap           `[file::][parent > ]description` (`#N` when a line has no description)
    rspec_json    `file_path::full description`
    nunit_xml     the test case's full name
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path

try:  # the verifier site always has defusedxml; keep the parser usable without it
    from defusedxml import ElementTree as ET  # type: ignore[import-untyped]
    from defusedxml.common import DefusedXmlException  # type: ignore[import-untyped]
except ImportError:  # pragma: no cover - fallback for bare interpreters
    import xml.etree.ElementTree as ET  # noqa: N817

    class DefusedXmlException(Exception):  # type: ignore[no-redef]
        pass

PASSED, FAILED, ERROR, SKIPPED, FLAKY = "passed", "failed", "error", "skipped", "flaky"
STATUSES = (PASSED, FAILED, ERROR, SKIPPED, FLAKY)
_RANK = {PASSED: 0, SKIPPED: 1, FLAKY: 2, FAILED: 3, ERROR: 4}
MAX_REPORT_BYTES = 64 * 1024 * 1024



class Statuses(dict[str, str]):
    """Test id -> status, and `duplicates`: the ids the report gave more than once."""

    def __init__(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003 - dict's own signature
        super().__init__(*args, **kwargs)
        self.duplicates: list[str] = []


class ReportError(ValueError):
    """The report is missing, empty, too large or not in the declared format."""


def merge(statuses: Statuses, test_id: str, status: str) -> None:
    """Record `status` for `test_id`, keeping the worst one seen (and noting a repeated id)."""
    old = statuses.get(test_id)
    if old is not None and isinstance(statuses, Statuses):
        statuses.duplicates.append(test_id)
    if old is None or _RANK[status] > _RANK[old]:
        statuses[test_id] = status


# --- JUnit XML ------------------------------------------------------------------------------

def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def parse_junit_xml(text: str) -> Statuses:
    """JUnit XML in any common dialect: nested testsuites, failure vs error, skipped, Surefire
    flakyFailure/rerunFailure, CTest/gtest `status`/`result` attributes, missing classname."""
    root = _xml(text)
    if _local(root.tag) not in ("testsuites", "testsuite", "testcase"):
        raise ReportError(f"not a JUnit report: root element <{_local(root.tag)}>")
    out = Statuses()
    cases = [root] if _local(root.tag) == "testcase" else [e for e in root.iter() if _local(e.tag) == "testcase"]
    for case in cases:
        name = case.get("name")
        if not name:
            raise ReportError("a <testcase> has no name")
        classname = case.get("classname") or ""
        test_id = f"{classname}#{name}" if classname else name
        kids = {_local(k.tag) for k in case}
        status_attr = (case.get("status") or "").lower()
        result_attr = (case.get("result") or "").lower()
        if "error" in kids:
            status = ERROR
        elif "failure" in kids or "rerunFailure" in kids or status_attr in ("fail", "failed", "failure"):
            status = FAILED
        elif "rerunError" in kids:
            status = ERROR
        elif "skipped" in kids or status_attr in ("notrun", "disabled", "skipped") or result_attr == "skipped":
            status = SKIPPED
        elif "flakyFailure" in kids or "flakyError" in kids:
            status = FLAKY
        else:
            status = PASSED
        merge(out, test_id, status)
    return out


def _xml(text: str):  # noqa: ANN202 - an Element of whichever ElementTree is in use
    if not text.strip():
        raise ReportError("empty report")
    try:
        return ET.fromstring(text.encode("utf-8"))
    except DefusedXmlException as e:
        raise ReportError(f"refused XML construct: {e}") from e
    except ET.ParseError as e:
        raise ReportError(f"malformed XML: {e}") from e


# --- go test -json --------------------------------------------------------------------------

def parse_go_test_json(text: str) -> Statuses:
    """`go test -json` (test2json) events; a test that started but never ended counts as failed."""
    out = Statuses()
    started: set[str] = set()
    seen = 0
    for event in _json_lines(text):
        seen += 1
        test = event.get("Test")
        action = event.get("Action")
        if not test or not isinstance(test, str):
            continue
        test_id = f"{event.get('Package', '')}/{test}"
        if action == "run":
            started.add(test_id)
        elif action == "pass":
            merge(out, test_id, PASSED)
        elif action == "fail":
            merge(out, test_id, FAILED)
        elif action == "skip":
            merge(out, test_id, SKIPPED)
    if not seen:
        raise ReportError("no test2json events in the report")
    for test_id in started - set(out):
        merge(out, test_id, FAILED)
    return out


# --- libtest JSON -----------------------------------------------------------------------------

def parse_libtest_json(text: str) -> Statuses:
    """Rust libtest `--format json` events (`RUSTC_BOOTSTRAP=1 ... -Z unstable-options`)."""
    out = Statuses()
    started: set[str] = set()
    seen = 0
    for event in _json_lines(text):
        seen += 1
        if event.get("type") != "test" or not isinstance(event.get("name"), str):
            continue
        name, kind = event["name"], event.get("event")
        if kind == "started":
            started.add(name)
        elif kind == "ok":
            merge(out, name, PASSED)
        elif kind in ("failed", "timeout"):
            merge(out, name, FAILED)
        elif kind == "ignored":
            merge(out, name, SKIPPED)
    if not seen:
        raise ReportError("no libtest events in the report")
    for name in started - set(out):
        merge(out, name, FAILED)
    return out


def _json_lines(text: str) -> Iterable[dict]:
    """JSON objects, one a line; stray non-JSON lines (build chatter) are ignored."""
    if not text.strip():
        raise ReportError("empty report")
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            yield value


# --- TAP --------------------------------------------------------------------------------------

#: a description runs to the first unescaped `#` (node writes a `#` of a test's name as `\#`)
_TAP_LINE = re.compile(r"^(?P<indent>\s*)(?P<ok>not ok|ok)\b\s*(?P<num>\d+)?\s*(?:-\s*)?(?P<desc>(?:[^#\\]|\\.?)*?)\s*"
                       r"(?:#\s*(?P<directive>\S+)(?P<reason>.*))?$")
_TAP_ESCAPE = re.compile(r"\\([#\\])")
_TAP_SUBTEST = re.compile(r"^(?P<indent>\s*)# Subtest:\s*(?P<name>.*?)\s*$")
_TAP_FILE = re.compile(r"^(?:# file:\s*(?P<a>\S+)|(?P<b>\S+\.\w+) \.{2,}.*)$")


def parse_tap(text: str) -> Statuses:
    """TAP 12/13 lines; indented subtests are named `parent > child`; `# SKIP` and `# TODO` are
    skipped; `# file: X` or prove's `t/x.t ....` headers prefix ids with `X::`."""
    if not text.strip():
        raise ReportError("empty report")
    out = Statuses()
    file = ""
    parents: list[tuple[int, str]] = []  # (indent, subtest name)
    seen = 0
    for raw in text.splitlines():
        line = raw.rstrip()
        if m := _TAP_FILE.match(line.strip()):
            file = m.group("a") or m.group("b") or ""
            parents = []
            continue
        if m := _TAP_SUBTEST.match(line):
            indent = len(m.group("indent"))
            parents = [(i, n) for i, n in parents if i < indent] + [(indent, _TAP_ESCAPE.sub(r"\1", m.group("name")))]
            continue
        m = _TAP_LINE.match(line)
        if not m:
            continue
        seen += 1
        indent = len(m.group("indent"))
        desc = _TAP_ESCAPE.sub(r"\1", m.group("desc").strip()) or f"#{m.group('num') or seen}"
        # A result line closes its own subtest (same name, shallower or equal indent).
        chain = [n for i, n in parents if i < indent]
        parents = [(i, n) for i, n in parents if i < indent]
        test_id = " > ".join([*chain, desc])
        if file:
            test_id = f"{file}::{test_id}"
        directive = (m.group("directive") or "").upper()
        if directive.startswith(("SKIP", "TODO")):
            status = SKIPPED
        else:
            status = PASSED if m.group("ok") == "ok" else FAILED
        merge(out, test_id, status)
    if not seen:
        raise ReportError("no TAP result lines in the report")
    return out


# --- RSpec JSON -------------------------------------------------------------------------------

def parse_rspec_json(text: str) -> Statuses:
    """`rspec --format json` output: `examples[]` with `status` passed/failed/pending."""
    if not text.strip():
        raise ReportError("empty report")
    try:
        doc = json.loads(text)
        examples = doc["examples"]
    except (ValueError, KeyError, TypeError) as e:
        raise ReportError(f"not an RSpec JSON report: {e}") from e
    if not isinstance(examples, list):
        raise ReportError("RSpec JSON: `examples` is not a list")
    out = Statuses()
    for ex in examples:
        if not isinstance(ex, dict) or not ex.get("full_description"):
            raise ReportError(f"RSpec JSON: malformed example {ex!r:.200}")
        test_id = f"{ex.get('file_path', '')}::{ex['full_description']}"
        status = {"passed": PASSED, "failed": FAILED, "pending": SKIPPED}.get(ex.get("status"), ERROR)
        merge(out, test_id, status)
    return out


# --- NUnit XML --------------------------------------------------------------------------------

def parse_nunit_xml(text: str) -> Statuses:
    """NUnit 2 (`test-results`, result Success/Failure/Error/Ignored) or NUnit 3 (`test-run`,
    result Passed/Failed/Skipped) XML."""
    root = _xml(text)
    if root.tag not in ("test-results", "test-run"):
        raise ReportError(f"not an NUnit report: root element <{root.tag}>")
    out = Statuses()
    for case in root.iter("test-case"):
        test_id = case.get("fullname") or case.get("name")
        if not test_id:
            raise ReportError("a <test-case> has no name")
        result = (case.get("result") or "").lower()
        executed = (case.get("executed") or "true").lower() == "true"
        if result in ("success", "passed"):
            status = PASSED if executed else SKIPPED
        elif result in ("failure", "failed"):
            status = ERROR if (case.get("label") or "").lower() == "error" else FAILED
        elif result in ("error", "cancelled"):
            status = ERROR
        else:  # ignored, skipped, notrunnable, inconclusive, notrun
            status = SKIPPED
        merge(out, test_id, status)
    return out


PARSERS: dict[str, Callable[[str], Statuses]] = {
    "junit_xml": parse_junit_xml,
    "go_test_json": parse_go_test_json,
    "libtest_json": parse_libtest_json,
    "tap": parse_tap,
    "rspec_json": parse_rspec_json,
    "nunit_xml": parse_nunit_xml,
}


def parse(fmt: str, text: str) -> Statuses:
    """Parse `text` as report format `fmt`."""
    try:
        parser = PARSERS[fmt]
    except KeyError:
        raise ReportError(f"unknown report format {fmt!r}; known: {', '.join(PARSERS)}") from None
    return parser(text)


def parse_file(fmt: str, path: Path) -> Statuses:
    """Parse the report at `path` (one file, or every file of a folder for several suites)."""
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file())
        if not files:
            raise ReportError(f"report folder {path.name} holds no files")
        out = Statuses()
        for f in files:
            part = parse_file(fmt, f)
            out.duplicates += part.duplicates
            for test_id, status in part.items():
                merge(out, test_id, status)
        return out
    if not path.is_file():
        raise ReportError(f"report file {path.name} was not written")
    size = path.stat().st_size
    if size > MAX_REPORT_BYTES:
        raise ReportError(f"report file {path.name} is {size} bytes, over the {MAX_REPORT_BYTES} limit")
    return parse(fmt, path.read_text(encoding="utf-8", errors="replace"))


__all__ = ["PARSERS", "STATUSES", "ReportError", "Statuses", "merge", "parse", "parse_file"]
