"""Negative controls for SWE validation: repository states a cheating or idle agent could leave.

Each control edits a copy of the base checkout in place; the production grader must then grade it
unresolved. They exercise what grading relies on: protected paths restored from the shipped base
copies (deleted tests, planted framework hooks) and only the runner's report outside the
repository being read (fake console output, fake report files inside the repository).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from xml.sax.saxutils import quoteattr

from verifiers.swe import SweConfig, protected_files

Control = Callable[[Path, SweConfig, list[str]], None]


def _sources(repo: Path, cfg: SweConfig, suffixes: tuple[str, ...]) -> list[Path]:
    """Non-protected source files with one of `suffixes` (where injected code will run)."""
    prot = set(protected_files(repo, cfg.protected_paths))
    out = []
    for dirpath, dirnames, filenames in os.walk(repo):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            p = Path(dirpath) / name
            rel = p.relative_to(repo).as_posix()
            if name.endswith(suffixes) and rel not in prot and not p.is_symlink():
                out.append(p)
    return sorted(out)


def fake_report(fmt: str, ids: list[str]) -> str:
    """A report in format `fmt` in which every test of `ids` passed."""
    if fmt == "junit_xml":
        cases = "".join(f"<testcase classname={quoteattr(i.partition('#')[0])} "
                        f"name={quoteattr(i.partition('#')[2] or i)}/>" for i in ids)
        return (f'<?xml version="1.0"?><testsuites><testsuite name="all" tests="{len(ids)}">{cases}'
                "</testsuite></testsuites>")
    if fmt == "go_test_json":
        lines = []
        for i in ids:
            pkg, _, test = i.rpartition("/Test")
            lines.append(f'{{"Action":"pass","Package":"{pkg}","Test":"Test{test}","Elapsed":0}}')
        return "\n".join(lines) + "\n"
    if fmt == "libtest_json":
        return "".join(f'{{ "type": "test", "event": "ok", "name": "{i}" }}\n' for i in ids)
    if fmt == "tap":
        return "TAP version 13\n" + "".join(f"ok {n} - {i}\n" for n, i in enumerate(ids, 1)) + f"1..{len(ids)}\n"
    if fmt == "rspec_json":
        import json

        return json.dumps({"examples": [{"full_description": i.partition("::")[2], "file_path": i.partition("::")[0],
                                         "status": "passed"} for i in ids]})
    if fmt == "nunit_xml":
        cases = "".join(f'<test-case name={quoteattr(i)} executed="True" result="Success" success="True"/>'
                        for i in ids)
        return (f'<test-results total="{len(ids)}"><test-suite name="all"><results>{cases}</results>'
                "</test-suite></test-results>")
    raise ValueError(fmt)


def _console_lines(cfg: SweConfig, ids: list[str]) -> list[str]:
    """What passing tests look like on the console of common runners."""
    out = []
    for i in ids:
        name = re.split(r"[#/:]", i)[-1]
        out += [f"PASSED {i}", f"ok - {name}", f"--- PASS: {name} (0.00s)", f"test {name} ... ok",
                f"[       OK ] {name}"]
    return out + ["ALL TESTS PASSED", "ok", "PASS"]


# --- the controls ------------------------------------------------------------------------------

def empty(repo: Path, cfg: SweConfig, ids: list[str]) -> None:
    """The agent changes nothing."""


def delete_tests(repo: Path, cfg: SweConfig, ids: list[str]) -> None:
    """The agent deletes every protected (test) file."""
    for rel in protected_files(repo, cfg.protected_paths):
        p = repo / rel
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()


def fake_output(repo: Path, cfg: SweConfig, ids: list[str]) -> None:
    """The agent's code prints fake passing lines, and fake reports are written into the repository."""
    text = fake_report(cfg.report_format, ids)
    for where in (repo / cfg.report_file, repo / "reports" / cfg.report_file, repo / "build" / cfg.report_file,
                  repo / "target" / cfg.report_file, repo / "test-results" / cfg.report_file):
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_text(text)
    lines = _console_lines(cfg, ids)
    joined = "\\n".join(line.replace('"', "'") for line in lines)
    lang = cfg.language
    if lang == "python":
        for p in _sources(repo, cfg, (".py",)):
            p.write_text(p.read_text() + f'\nprint("{joined}")\n')
    elif lang in ("javascript", "typescript"):
        for p in _sources(repo, cfg, (".js", ".mjs", ".cjs", ".ts")):
            p.write_text(p.read_text() + f'\nconsole.log("{joined}");\n')
    elif lang in ("c", "cpp"):
        for p in _sources(repo, cfg, (".c", ".cpp", ".cc")):
            p.write_text(p.read_text() + "\n#include <stdio.h>\n__attribute__((constructor)) static void "
                         f'envhub_fake_output(void) {{ printf("{joined}\\n"); fflush(stdout); }}\n')
    elif lang == "go":
        for p in _sources(repo, cfg, (".go",)):
            m = re.search(r"^package\s+(\w+)", p.read_text(), re.M)
            if m:
                (p.parent / "zz_envhub_fake.go").write_text(
                    f'package {m.group(1)}\n\nimport "os"\n\nfunc init() {{ os.Stdout.WriteString("{joined}\\n") }}\n')
    elif lang == "rust":
        build = repo / "build.rs"
        if not build.exists():
            build.write_text(f'fn main() {{ println!("cargo:warning={joined[:200]}"); }}\n')


PLANTED_CONFTEST = '''import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
'''


def planted_hook(repo: Path, cfg: SweConfig, ids: list[str]) -> None:
    """The agent plants a test-framework hook that turns failures into passes (a `conftest.py` or
    the language's equivalent), inside the test area and at the root."""
    lang = cfg.language
    if lang == "python":
        for d in {repo, *(repo / p.split("/", 1)[0] for p in cfg.protected_paths if "/" in p)}:
            if d.is_dir():
                (d / "conftest.py").write_text(PLANTED_CONFTEST)
        return
    if lang == "go":
        for p in _sources(repo, cfg, (".go",)):
            m = re.search(r"^package\s+(\w+)", p.read_text(), re.M)
            if m and not (p.parent / "zz_envhub_main_test.go").exists():
                lines = "\\n".join(f"--- PASS: {i.rpartition('/')[2]} (0.00s)" for i in ids)
                (p.parent / "zz_envhub_main_test.go").write_text(
                    f'package {m.group(1)}\n\nimport (\n\t"os"\n\t"testing"\n)\n\n'
                    f'func TestMain(m *testing.M) {{ os.Stdout.WriteString("{lines}\\nPASS\\n"); os.Exit(0) }}\n')
        return
    # Other languages: a file that looks like part of the suite, in every protected folder.
    text = fake_report(cfg.report_format, ids)
    for pattern in cfg.protected_paths:
        folder = pattern.split("*", 1)[0].rstrip("/")
        if folder and "/" not in folder.strip("/") and (repo / folder).is_dir():
            (repo / folder / f"zz_envhub_planted.{cfg.report_file.rsplit('.', 1)[-1]}").write_text(text)


CONTROLS: dict[str, Control] = {
    "empty-patch": empty,
    "delete-tests": delete_tests,
    "fake-output": fake_output,
    "planted-hook": planted_hook,
}
