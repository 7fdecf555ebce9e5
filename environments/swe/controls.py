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


# --- forging the report from the code under test ------------------------------------------------

def _forge_script(cfg: SweConfig, ids: list[str]) -> str:
    """The shell half of `forge_report`: write an all-pass report in the runner's place. Where the
    runner's stdout is the report (go, libtest, TAP) it prints one, passing every test it finds in
    the test files (as the attacks in issue 11 do); elsewhere it writes the file the runner would
    have written, listing the graded tests."""
    fmt = cfg.report_format
    if fmt == "go_test_json":  # cwd: the package folder; test2json turns these lines into events
        return ("for t in $(grep -ho 'func Test[A-Za-z0-9_]*' *_test.go | cut -c6-); do\n"
                "  printf '=== RUN   %s\\n--- PASS: %s (0.00s)\\n' \"$t\" \"$t\"\ndone\necho PASS\n")
    if fmt == "libtest_json":
        return ("for t in $(grep -h -A1 '#\\[test\\]' tests/*.rs src/*.rs 2>/dev/null | grep -o 'fn [a-z0-9_]*' "
                "| cut -c4-); do\n  printf '{ \"type\": \"test\", \"event\": \"ok\", \"name\": \"%s\" }\\n' \"$t\"\n"
                "done\n")
    text = fake_report(fmt, ids)
    if fmt == "tap":
        return f"cat <<'ENVHUB_EOF'\n{text}ENVHUB_EOF\n"
    target = f'"$REPORT_DIR/{cfg.report_file}"'
    if "." not in cfg.report_file:  # a folder of reports (eunit)
        target = f'"$REPORT_DIR/{cfg.report_file}/TEST-forged.xml"'
    return f"mkdir -p \"$(dirname {target})\"\ncat > {target} <<'ENVHUB_EOF'\n{text}\nENVHUB_EOF\n"


#: language -> (source suffixes, where the hook goes: "append" or "prepend", hook text). `{script}`
#: is the forging script's path relative to the test runner's working folder.
_HOOKS: dict[str, tuple[tuple[str, ...], str, str]] = {
    "python": ((".py",), "append", 'import os as _o\n_o.system("sh {script}")\n_o._exit(0)\n'),
    "ruby": ((".rb",), "append", 'system("sh {script}")\nexit!(0)\n'),
    "perl": ((".pm",), "prepend", 'BEGIN {{ system("sh {script}"); require POSIX; POSIX::_exit(0); }}\n'),
    "lua": ((".lua",), "prepend", 'os.execute("sh {script}")\nos.exit(0, true)\n'),
    "php": ((".php",), "append", "\nshell_exec('sh {script}');\nexit(0);\n"),
    "r": ((".R", ".r"), "append", 'system("sh {script}")\nquit(status = 0)\n'),
    "ocaml": ((".ml",), "append", '\nlet () = ignore (Sys.command "sh {script}"); exit 0\n'),
    "elixir": ((".ex",), "append", '\nSystem.cmd("sh", ["{script}"], into: IO.stream())\nSystem.halt(0)\n'),
    "rust": (("lib.rs",), "append", "\n#[used]\n#[link_section = \".init_array\"]\nstatic ENVHUB_FORGE: extern \"C\" fn() = "
                                    "{{\n    extern \"C\" fn forge() {{\n        let _ = std::process::Command::new(\"sh\")"
                                    ".arg(\"{script}\").status();\n        std::process::exit(0);\n    }}\n    forge\n}};\n"),
    "go": ((".go",), "file", 'package {package}\n\nimport (\n\t"os"\n\t"os/exec"\n)\n\nfunc init() {{\n'
                             '\tcmd := exec.Command("sh", "{script}")\n\tcmd.Stdout = os.Stdout\n\t_ = cmd.Run()\n'
                             "\tos.Exit(0)\n}}\n"),
}

C_HOOK = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void envhub_forge(void) {
    char cmd[4200];
    const char *f = __FILE__, *slash = strrchr(f, '/');
    snprintf(cmd, sizeof cmd, "sh '%.*s/.envhub-forge.sh'", slash ? (int)(slash - f) : 1, slash ? f : ".");
    if (system(cmd) != 12345) _exit(0);
}
"""

#: The node attack of issue 11: every assertion becomes a no-op (no script needed). `assert.strict`'s
#: methods go first: once the module's own `strict` is a no-op, `require('node:assert/strict')` would
#: hand back that instead of the object a test took with `const { strict: assert } = require(...)`.
NOOP_ASSERT = ("\nfor (const m of ['node:assert/strict', 'node:assert']) {\n  const a = require(m);\n"
               "  for (const k of Object.keys(a)) if (typeof a[k] === 'function') a[k] = () => undefined;\n}\n")


#: Haskell has no load-time hook: the library's functions force this value first, whose
#: evaluation (`unsafePerformIO`) writes an all-pass report and exits 0 through C's `exit`
#: (an `exitWith` would only be an exception the test framework catches).
HASKELL_FORGE = """
{-# NOINLINE envhubForge #-}
envhubForge :: ()
envhubForge = EnvhubUnsafe.unsafePerformIO $ do
  dir <- EnvhubEnv.getEnv "REPORT_DIR"
  writeFile (dir ++ "/%(file)s") "%(report)s"
  putStrLn "All %(count)d tests passed"
  EnvhubIO.hFlush EnvhubIO.stdout
  envhubExit 0

foreign import ccall unsafe "stdlib.h exit" envhubExit :: EnvhubC.CInt -> IO ()
"""
HASKELL_IMPORTS = ("import qualified System.IO.Unsafe as EnvhubUnsafe\n"
                   "import qualified System.Environment as EnvhubEnv\n"
                   "import qualified System.IO as EnvhubIO\nimport qualified Foreign.C.Types as EnvhubC\n")


def _forge_haskell(repo: Path, cfg: SweConfig, ids: list[str]) -> None:
    """Every top-level function with a one-line signature in the library becomes
    `f = envhubForge `seq` envhub_f` (the original renamed), so the first test that calls the
    library forges the report."""
    escaped = fake_report(cfg.report_format, ids).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    forge = HASKELL_FORGE % {"file": cfg.report_file, "report": escaped, "count": len(ids)}
    for p in _sources(repo, cfg, (".hs",)):
        lines = p.read_text().splitlines()
        if not any(re.match(r"module\s+[A-Z][\w.]*", line) for line in lines) or any(
                re.match(r"module\s+Main\b", line) for line in lines):
            continue
        sigs = {}
        for i, line in enumerate(lines):
            m = re.match(r"([a-z]\w*) :: (.+)$", line)
            if m and not (i + 1 < len(lines) and lines[i + 1][:1] in (" ", "\t") and "->" in lines[i + 1][:12]):
                sigs[m.group(1)] = (i, m.group(2))
        if not sigs:
            continue
        out = []
        for i, line in enumerate(lines):
            m = re.match(r"([a-z]\w*)(\s|=)", line)
            name = m.group(1) if m else ""
            if name in sigs and sigs[name][0] == i:
                out += [line, f"{name} = envhubForge `seq` envhub_{name}", f"envhub_{name} :: {sigs[name][1]}"]
            elif name in sigs and not line.startswith(f"{name} ::"):
                out.append("envhub_" + line)
            else:
                out.append(line)
        last_import = max((i for i, line in enumerate(out) if line.startswith("import ")), default=None)
        if last_import is None:
            continue
        out.insert(last_import + 1, HASKELL_IMPORTS.rstrip("\n"))
        p.write_text("\n".join(out) + "\n" + forge)


def forge_report(repo: Path, cfg: SweConfig, ids: list[str]) -> None:
    """The code under test forges the runner's report: on load it writes (or prints) a report in
    which the tests pass and exits 0 before the runner can write its own; in node it turns every
    assertion into a no-op; in Haskell the library's functions do it when first called. The
    twins planted at verify time must expose it."""
    lang = cfg.language
    if lang == "haskell":
        _forge_haskell(repo, cfg, ids)
        return
    if lang in ("javascript", "typescript"):
        for p in _sources(repo, cfg, (".ts",) if lang == "typescript" else (".js", ".cjs", ".mjs")):
            if not p.name.endswith(".d.ts"):
                p.write_text(p.read_text() + NOOP_ASSERT)
        return
    if lang in ("java", "csharp", "erlang"):
        _forge_in_class(repo, cfg, ids)
        return
    if lang in ("c", "cpp"):  # ctest and gtest run from the build folder: find the script by path
        for p in _sources(repo, cfg, (".c", ".cpp", ".cc")):
            (p.parent / ".envhub-forge.sh").write_text(_forge_script(cfg, ids))
            p.write_text(p.read_text() + C_HOOK)
        return
    if lang not in _HOOKS:
        return
    suffixes, where, hook = _HOOKS[lang]
    (repo / ".envhub-forge.sh").write_text(_forge_script(cfg, ids))
    for p in _sources(repo, cfg, suffixes):
        if lang == "rust" and p.parent.name != "src":
            continue
        if lang == "go":
            m = re.search(r"^package\s+(\w+)", p.read_text(), re.M)
            if m and not (p.parent / "zz_envhub_forge.go").exists():
                (p.parent / ".envhub-forge.sh").write_text(_forge_script(cfg, ids))
                (p.parent / "zz_envhub_forge.go").write_text(hook.format(package=m.group(1), script=".envhub-forge.sh"))
            continue
        text = hook.format(script=".envhub-forge.sh")
        p.write_text(text + p.read_text() if where == "prepend" else p.read_text() + text)


def _forge_in_class(repo: Path, cfg: SweConfig, ids: list[str]) -> None:
    """`forge_report` for languages whose hook must sit inside a class or module."""
    (repo / ".envhub-forge.sh").write_text(_forge_script(cfg, ids))
    lang = cfg.language
    if lang == "java":
        hook = ('    static {\n        try { new ProcessBuilder("sh", ".envhub-forge.sh").inheritIO().start().waitFor(); }\n'
                "        catch (Exception e) { }\n        System.exit(0);\n    }\n")
        for p in _sources(repo, cfg, (".java",)):
            text = p.read_text()
            i = text.rfind("}")
            if i > 0 and re.search(r"^\s*(public\s+)?(final\s+)?class\s", text, re.M):
                p.write_text(text[:i] + hook + text[i:])
    elif lang == "csharp":
        hook = ('    static int envhubForge = EnvhubForge();\n    static int EnvhubForge() {\n'
                '        System.Diagnostics.Process.Start("sh", ".envhub-forge.sh").WaitForExit();\n'
                "        System.Environment.Exit(0);\n        return 0;\n    }\n")
        for p in _sources(repo, cfg, (".cs",)):
            text = p.read_text()
            m = re.search(r"^\s*public\s+(?:sealed\s+)?class\s+\w+[^{]*\{", text, re.M)
            if m:
                p.write_text(text[:m.end()] + "\n" + hook + text[m.end():])
    elif lang == "erlang":
        for p in _sources(repo, cfg, (".erl",)):
            text = p.read_text()
            m = re.search(r"^-module\(\w+\)\.\n", text, re.M)
            if m:
                p.write_text(text[:m.end()] + "-on_load(envhub_forge/0).\n" + text[m.end():] +
                             '\nenvhub_forge() ->\n    io:put_chars(os:cmd("sh .envhub-forge.sh")),\n    halt(0).\n')


CONTROLS: dict[str, Control] = {
    "empty-patch": empty,
    "delete-tests": delete_tests,
    "fake-output": fake_output,
    "planted-hook": planted_hook,
    "forge-report": forge_report,
}
