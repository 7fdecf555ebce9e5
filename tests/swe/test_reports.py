"""The six report parsers, on real-shaped reports and on malformed input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifiers.swe_reports import ReportError, parse, parse_file

JUNIT_NESTED = """<?xml version="1.0"?>
<testsuites><testsuite name="outer"><testsuite name="inner">
  <testcase classname="pkg.T" name="ok"/>
  <testcase classname="pkg.T" name="fails"><failure message="boom"/></testcase>
  <testcase classname="pkg.T" name="errs"><error message="crash"/></testcase>
  <testcase classname="pkg.T" name="skips"><skipped/></testcase>
  <testcase classname="pkg.T" name="flaky"><flakyFailure message="once"/></testcase>
  <testcase classname="pkg.T" name="rerun"><rerunFailure/><failure/></testcase>
  <testcase name="no_class"/>
</testsuite></testsuite></testsuites>"""


def test_junit_dialects():
    s = parse("junit_xml", JUNIT_NESTED)
    assert s == {"pkg.T#ok": "passed", "pkg.T#fails": "failed", "pkg.T#errs": "error", "pkg.T#skips": "skipped",
                 "pkg.T#flaky": "flaky", "pkg.T#rerun": "failed", "no_class": "passed"}


def test_junit_single_testsuite_and_ctest_status():
    xml = '<testsuite><testcase name="a" classname="a" status="run"/><testcase name="b" classname="b" status="fail"/>' \
          '<testcase name="c" classname="c" status="notrun"/><testcase name="d" result="skipped" status="run"/></testsuite>'
    assert parse("junit_xml", xml) == {"a#a": "passed", "b#b": "failed", "c#c": "skipped", "d": "skipped"}


def test_duplicate_ids_keep_the_worst_status():
    xml = '<testsuites><testcase classname="c" name="t"/><testcase classname="c" name="t"><failure/></testcase>' \
          '<testcase classname="c" name="t"/></testsuites>'
    assert parse("junit_xml", xml) == {"c#t": "failed"}


@pytest.mark.parametrize("text", ["", "<testsuites", "<html><body/></html>", "<testsuite><testcase/></testsuite>",
                                  '<!DOCTYPE x [<!ENTITY a "aaaa">]><testsuite>&a;</testsuite>'])
def test_junit_malformed(text):
    with pytest.raises(ReportError):
        parse("junit_xml", text)


def test_go_test_json():
    lines = [{"Action": "run", "Package": "m/p", "Test": "TestA"}, {"Action": "pass", "Package": "m/p", "Test": "TestA"},
             {"Action": "run", "Package": "m/p", "Test": "TestB/sub"}, {"Action": "fail", "Package": "m/p", "Test": "TestB/sub"},
             {"Action": "skip", "Package": "m/p", "Test": "TestC"}, {"Action": "run", "Package": "m/p", "Test": "TestPanics"},
             {"Action": "output", "Package": "m/p", "Output": "--- PASS: TestB/sub\n"}, {"Action": "fail", "Package": "m/p"}]
    text = "# m/p build chatter\n" + "\n".join(json.dumps(x) for x in lines)
    assert parse("go_test_json", text) == {"m/p/TestA": "passed", "m/p/TestB/sub": "failed", "m/p/TestC": "skipped",
                                           "m/p/TestPanics": "failed"}


def test_libtest_json():
    text = "\n".join([
        '{ "type": "suite", "event": "started", "test_count": 3 }',
        '{ "type": "test", "event": "started", "name": "a::ok" }', '{ "type": "test", "name": "a::ok", "event": "ok" }',
        '{ "type": "test", "name": "a::bad", "event": "failed", "stdout": "x" }',
        '{ "type": "test", "name": "a::ign", "event": "ignored" }',
        '{ "type": "test", "event": "started", "name": "a::hung" }', "not json"])
    assert parse("libtest_json", text) == {"a::ok": "passed", "a::bad": "failed", "a::ign": "skipped",
                                           "a::hung": "failed"}


@pytest.mark.parametrize("fmt", ["go_test_json", "libtest_json"])
def test_json_lines_malformed(fmt):
    with pytest.raises(ReportError):
        parse(fmt, "")
    with pytest.raises(ReportError):
        parse(fmt, "garbage only\n{not json")


def test_tap_with_subtests_files_and_directives():
    text = """TAP version 13
# Subtest: suite
    ok 1 - inner one
    not ok 2 - inner two
    1..2
not ok 1 - suite
ok 2 - plain # SKIP not here
not ok 3 - todo # TODO later
ok 4
t/other.t ..........
ok 1 - in file
"""
    assert parse("tap", text) == {"suite > inner one": "passed", "suite > inner two": "failed", "suite": "failed",
                                  "plain": "skipped", "todo": "skipped", "#4": "passed", "t/other.t::in file": "passed"}



def test_tap_names_keep_an_escaped_hash():
    """node's TAP reporter writes a `#` of a test's name as `\\#` (an unescaped one starts a
    directive): the name goes on past it, unescaped, and never reads as SKIP."""
    text = "# Subtest: q \\# 1\n    ok 1 - Should fuzz 21\\# XYZ\n    ok 2 - odd \\# SKIP me\n" \
           "    ok 3 - a \\\\ b # SKIP later\n    1..3\nok 1 - q \\# 1\n"
    assert parse("tap", text) == {"q # 1 > Should fuzz 21# XYZ": "passed", "q # 1 > odd # SKIP me": "passed",
                                  "q # 1 > a \\ b": "skipped", "q # 1": "passed"}


def test_tap_malformed():
    with pytest.raises(ReportError):
        parse("tap", "hello\nworld\n")


def test_rspec_json():
    doc = {"examples": [{"full_description": "Stack pushes", "file_path": "./spec/s_spec.rb", "status": "passed"},
                        {"full_description": "Stack pops", "file_path": "./spec/s_spec.rb", "status": "failed"},
                        {"full_description": "Stack peeks", "file_path": "./spec/s_spec.rb", "status": "pending"}]}
    assert parse("rspec_json", json.dumps(doc)) == {"./spec/s_spec.rb::Stack pushes": "passed",
                                                    "./spec/s_spec.rb::Stack pops": "failed",
                                                    "./spec/s_spec.rb::Stack peeks": "skipped"}
    for bad in ("", "[]", '{"examples": 3}', '{"examples": [{"status": "passed"}]}'):
        with pytest.raises(ReportError):
            parse("rspec_json", bad)


def test_nunit2_and_nunit3():
    v2 = """<test-results><test-suite name="x"><results>
      <test-case name="N.T.A" executed="True" result="Success" success="True"/>
      <test-case name="N.T.B" executed="True" result="Failure" success="False"/>
      <test-case name="N.T.C" executed="True" result="Error"/>
      <test-case name="N.T.D" executed="False" result="Ignored"/></results></test-suite></test-results>"""
    assert parse("nunit_xml", v2) == {"N.T.A": "passed", "N.T.B": "failed", "N.T.C": "error", "N.T.D": "skipped"}
    v3 = '<test-run><test-suite><test-case fullname="N.T.A" name="A" result="Passed"/>' \
         '<test-case fullname="N.T.B" name="B" result="Failed" label="Error"/>' \
         '<test-case fullname="N.T.C" name="C" result="Skipped"/></test-suite></test-run>'
    assert parse("nunit_xml", v3) == {"N.T.A": "passed", "N.T.B": "error", "N.T.C": "skipped"}
    with pytest.raises(ReportError):
        parse("nunit_xml", "<testsuites/>")


def test_unknown_format_and_missing_file(tmp_path: Path):
    with pytest.raises(ReportError):
        parse("yaml", "x")
    with pytest.raises(ReportError, match="not written"):
        parse_file("junit_xml", tmp_path / "nope.xml")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.xml").write_text('<testsuite><testcase name="a"/></testsuite>')
    (tmp_path / "d" / "b.xml").write_text('<testsuite><testcase name="a"><failure/></testcase></testsuite>')
    assert parse_file("junit_xml", tmp_path / "d") == {"a": "failed"}
