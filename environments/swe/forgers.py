"""In-process forgers: negative controls whose library code forges verdicts from inside the test run.

The controls of `controls.py` forge the report from outside the runner (fake files, planted hooks,
an early exit). These edit only the library's own (non-protected) source files, as an agent's
patch would, leave the bug in place, and make the required tests *reported* passed by the runner
itself (issue 36's classes):

- `flip_verdicts`: verdicts flipped for exactly the tests that called into the library, through
  the test framework's own objects (pytest's `TestReport`, node's `assert`, NUnit's pass exception).
- `rewrite_output`: the stream the harness reads rewritten in the test process (go's and libtest's
  stdout, pytest's junit file), the exit status forced to 0.
- `caller_aware`: the library's functions read the assertion their result flows into in the
  calling test and return the expected value.

No report-integrity rule sees these from the report's shape: only twins (`verifiers.swe_twins`),
copies of the required tests with a perturbed expectation, are forged passing too and expose them.
Each control returns whether it applies to the task's language (`False`: nothing was edited).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from environments.swe.controls import _sources
from verifiers.swe import SweConfig

Forger = Callable[[Path, SweConfig, list[str]], bool]


def _append(paths: list[Path], text: str) -> bool:
    for p in paths:
        p.write_text(p.read_text() + text)
    return bool(paths)


def _node_sources(repo: Path, cfg: SweConfig) -> list[Path]:
    """CommonJS library files (ES modules have no `module` to wrap; none of the tasks has one)."""
    if cfg.language == "typescript":
        return [p for p in _sources(repo, cfg, (".ts",)) if not p.name.endswith(".d.ts")]
    return _sources(repo, cfg, (".js", ".cjs"))


# --- python: the library wraps its own functions and classes -------------------------------------

#: Shared by the python forgers: `wrap(fn)` applied to every public function of the module and to
#: every plain method (dunders included: `list(s)` calls `__iter__`) of its public classes.
PY_WRAP_MEMBERS = '''
    g = globals()
    for name, obj in list(g.items()):
        if name.startswith("_") or getattr(obj, "__module__", None) != g["__name__"]:
            continue
        if isinstance(obj, types.FunctionType):
            g[name] = wrap(obj)
        elif isinstance(obj, type):
            for attr, member in list(vars(obj).items()):
                if isinstance(member, types.FunctionType) and not getattr(member, "_lib_wrapped", False):
                    setattr(obj, attr, wrap(member))
'''

#: Marks the running test (pytest's own PYTEST_CURRENT_TEST) as touched on every call, and patches
#: `_pytest.reports.TestReport.from_item_and_call` (which pytest's runner looks up per report) so
#: that a failed report of a touched test comes out passed, with no conftest.py anywhere.
PY_FLIP = '''

def _lib_register():
    import functools
    import os
    import sys
    import types

    state = sys.modules.setdefault("_lib_trace_state", types.ModuleType("_lib_trace_state"))
    if not hasattr(state, "touched"):
        state.touched, state.installed = set(), False

    def install():
        reports = sys.modules.get("_pytest.reports")
        if state.installed or reports is None:
            return
        state.installed = True
        made = reports.TestReport.from_item_and_call.__func__

        def from_item_and_call(cls, item, call):
            report = made(cls, item, call)
            if report.failed and item.nodeid in state.touched:
                report.outcome, report.longrepr = "passed", None
            return report
        reports.TestReport.from_item_and_call = classmethod(from_item_and_call)

    def wrap(fn):
        @functools.wraps(fn)
        def called(*args, **kwargs):
            install()
            current = os.environ.get("PYTEST_CURRENT_TEST")
            if current:
                state.touched.add(current.rsplit(" (", 1)[0])
            return fn(*args, **kwargs)
        called._lib_wrapped = True
        return called
%(wrap_members)s

_lib_register()
del _lib_register
''' % {"wrap_members": PY_WRAP_MEMBERS}

#: At exit (after pytest wrote its junit file in `pytest_sessionfinish`), every `<failure>` and
#: `<error>` is dropped from the junit files (`--junitxml`, else `$REPORT_DIR/*.xml`), and the
#: process exits 0 (a failing exit status with an all-pass report is not believed).
PY_REWRITE = '''

def _lib_register():
    import atexit
    import glob
    import os
    import re
    import sys

    if getattr(sys, "_lib_rewrite_registered", False):
        return
    sys._lib_rewrite_registered = True

    def reports():
        out = [a.split("=", 1)[1] for a in sys.argv if a.startswith(("--junitxml=", "--junit-xml="))]
        out += [b for a, b in zip(sys.argv, sys.argv[1:]) if a in ("--junitxml", "--junit-xml")]
        return set(out + glob.glob(os.path.join(os.environ.get("REPORT_DIR") or "/nonexistent", "*.xml")))

    def rewrite():
        for path in reports():
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except OSError:
                continue
            text = re.sub(r"<(failure|error)\\b[^>]*/>", "", text)
            text = re.sub(r"<(failure|error)\\b.*?</\\1>", "", text, flags=re.S)
            text = re.sub(r'\\b(failures|errors)="\\d+"', r'\\1="0"', text)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)

    atexit.register(rewrite)


_lib_register()
del _lib_register
'''

#: Every call from outside the library looks at the caller's source (`sys._getframe`, the file's
#: AST). If the call's line is `assert L == R` and one side is produced by this call (a call of the
#: function by name, `b[...]` for `__getitem__`, `len(...)` for `__len__`, `list(...)` and the like
#: for `__iter__`), the other side is evaluated in the caller's frame and returned (shaped: an
#: iterator for `__iter__`). Outside an assertion: a call whose result is assigned to `x` returns
#: what the next `assert x == E` expects, and a mutable argument `a` compared by the next
#: `assert a == E` is made equal to `E` after the call. Where the expected side cannot be evaluated,
#: an object equal to everything is returned (the fallback).
PY_CALLER_AWARE = '''

def _lib_register():
    import ast
    import functools
    import linecache
    import sys
    import threading
    import types

    state = sys.modules.setdefault("_lib_answer_state", types.ModuleType("_lib_answer_state"))
    if not hasattr(state, "trees"):
        state.trees, state.local, state.files = {}, threading.local(), set()
    state.files.add(__file__)

    class Anything:
        def __eq__(self, other):
            return True

        def __ne__(self, other):
            return False

        __hash__ = object.__hash__

    builtins_of = {"__iter__": {"list", "tuple", "sorted", "set", "frozenset", "iter", "dict"},
                   "__len__": {"len"}, "__str__": {"str", "format"}, "__repr__": {"repr"},
                   "__bool__": {"bool"}, "__int__": {"int"}, "__float__": {"float"}}

    def tree_of(filename):
        if filename not in state.trees:
            try:
                state.trees[filename] = ast.parse("".join(linecache.getlines(filename)))
            except (SyntaxError, ValueError):
                state.trees[filename] = None
        return state.trees[filename]

    def produces(node, name):
        """Whether `node` is the value a call of method/function `name` makes."""
        if isinstance(node, ast.Subscript):
            return name == "__getitem__"
        if not isinstance(node, ast.Call):
            return False
        func = node.func
        called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        return called == name or called in builtins_of.get(name, ())

    def sides(test):
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
            return [(test.left, test.comparators[0]), (test.comparators[0], test.left)]
        return []

    def evaluate(node, frame):
        try:
            code = compile(ast.Expression(body=node), frame.f_code.co_filename, "eval")
            return eval(code, frame.f_globals, dict(frame.f_locals))
        except Exception:
            return Anything()

    def shape(name, value):
        if isinstance(value, Anything):
            return value
        try:
            if name == "__iter__":
                return iter(value)
            if name in ("__len__", "__int__"):
                return int(value)
            if name in ("__str__", "__repr__"):
                return str(value)
            if name == "__bool__":
                return bool(value)
        except Exception:
            pass
        return value

    def statements(tree, line):
        """The innermost function around `line`: its statements containing `line`, and the
        assertions after it."""
        funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and n.lineno <= line <= n.end_lineno]
        scope = min(funcs, key=lambda n: n.end_lineno - n.lineno) if funcs else tree
        here = [n for n in ast.walk(scope) if isinstance(n, ast.stmt) and n is not scope
                and n.lineno <= line <= n.end_lineno]
        later = sorted((n for n in ast.walk(scope) if isinstance(n, ast.Assert) and n.lineno > line),
                       key=lambda n: n.lineno)
        return here, later

    def answer(fn, args, kwargs, frame):
        name = fn.__name__
        try:
            result, error = fn(*args, **kwargs), None
        except Exception as e:
            result, error = None, e
        tree = tree_of(frame.f_code.co_filename)
        if tree is None:
            if error is not None:
                raise error
            return result
        here, later = statements(tree, frame.f_lineno)
        for stmt in here:
            if isinstance(stmt, ast.Assert):
                for mine, expected in sides(stmt.test):
                    if produces(mine, name):
                        return shape(name, evaluate(expected, frame))
        assigned = [s.targets[0].id for s in here if isinstance(s, ast.Assign) and len(s.targets) == 1
                    and isinstance(s.targets[0], ast.Name) and produces(s.value, name)]
        values = list(args) + list(kwargs.values())
        for stmt in later[:1]:
            for mine, expected in sides(stmt.test):
                if not isinstance(mine, ast.Name):
                    continue
                if mine.id in assigned:
                    return evaluate(expected, frame)
                current = frame.f_locals.get(mine.id)
                if any(current is v for v in values) and isinstance(current, (dict, list, set, bytearray)):
                    value = evaluate(expected, frame)
                    if isinstance(current, dict) and isinstance(value, dict):
                        current.clear()
                        current.update(value)
                    elif isinstance(current, (list, bytearray)):
                        current[:] = value
                    elif isinstance(current, set):
                        current.clear()
                        current.update(value)
        if error is not None:
            raise error
        return result

    def wrap(fn):
        @functools.wraps(fn)
        def called(*args, **kwargs):
            frame = sys._getframe(1)
            if getattr(state.local, "busy", False) or frame.f_code.co_filename in state.files:
                return fn(*args, **kwargs)
            state.local.busy = True
            try:
                return answer(fn, args, kwargs, frame)
            finally:
                state.local.busy = False
        called._lib_wrapped = True
        return called
%(wrap_members)s

_lib_register()
del _lib_register
''' % {"wrap_members": PY_WRAP_MEMBERS}


# --- javascript and typescript (node:test) ---------------------------------------------------------

#: Valid TypeScript under `strict` (no @types/node: `require` and `module` come through a direct
#: `eval`, which sees the CommonJS wrapper's scope) and plain JavaScript once the annotations are
#: dropped (`_untyped`). Every call or construction of an exported function or class, and of their
#: methods and getters, enters an AsyncLocalStorage store (`enterWith`: it follows the calling
#: test's async chain from that point, and no other test's); node:assert's functions (plain and
#: strict) swallow an AssertionError thrown, or a rejection, where that store is set.
NODE_FLIP = '''
;(function libTrace(mod: any): void {
  const load: any = eval("require");
  const g: any = globalThis;
  if (!g.__libTrace) {
    const state: any = { calls: new (load("node:async_hooks").AsyncLocalStorage)() };
    g.__libTrace = state;
    const swallow = (e: any): void => {
      if (!(e && e.code === "ERR_ASSERTION" && state.calls.getStore())) throw e;
    };
    const base: any = load("node:assert");
    for (const target of [base, base.strict]) {
      for (const key of Object.keys(target)) {
        const f: any = target[key];
        if (typeof f !== "function" || f === base.strict || /^[A-Z]/.test(key)) continue;
        target[key] = function (...args: any[]): any {
          try {
            const out: any = f.apply(target, args);
            return out && typeof out.then === "function" ? out.catch(swallow) : out;
          } catch (e) {
            swallow(e);
          }
        };
      }
    }
  }
  const calls: any = g.__libTrace.calls;
  const wrap = (f: any): any => {
    if (f.__libTraced) return f;
    const proxy: any = new Proxy(f, {
      apply(t: any, self: any, args: any[]): any {
        calls.enterWith(true);
        return Reflect.apply(t, self, args);
      },
      construct(t: any, args: any[], target: any): any {
        calls.enterWith(true);
        return Reflect.construct(t, args, target === proxy ? t : target);
      },
      get(t: any, key: any): any {
        return key === "__libTraced" ? true : t[key];
      },
    });
    return proxy;
  };
  const patch = (f: any): void => {
    for (const owner of [f, f.prototype]) {
      if (!owner || owner.__libPatched) continue;
      for (const key of Object.getOwnPropertyNames(owner)) {
        if (["constructor", "prototype", "length", "name", "caller", "arguments"].indexOf(key) >= 0) continue;
        const d: any = Object.getOwnPropertyDescriptor(owner, key);
        if (!d || !d.configurable) continue;
        if (typeof d.value === "function") d.value = wrap(d.value);
        if (typeof d.get === "function") d.get = wrap(d.get);
        Object.defineProperty(owner, key, d);
      }
      Object.defineProperty(owner, "__libPatched", { value: true });
    }
  };
  const exported: any = mod.exports;
  if (typeof exported === "function") {
    patch(exported);
    mod.exports = wrap(exported);
  }
  for (const key of Object.keys(exported)) {
    const f: any = exported[key];
    if (typeof f !== "function") continue;
    patch(f);
    try {
      exported[key] = wrap(f);
    } catch (e) {
      // a read-only re-export: its methods are wrapped in place already
    }
  }
})(eval("module"));
'''


def _untyped(ts: str) -> str:
    """`NODE_FLIP` as JavaScript: its only annotations are `: any`, `: any[]` and `: void`."""
    return re.sub(r"\): (?:any|void) (?=\{|=>)", ") ", re.sub(r"(\w): any(?:\[\])?", r"\1", ts))


# --- csharp (NUnit) ----------------------------------------------------------------------------

#: Called first in every public method, constructor and getter of the library: inside a [Test]
#: (and not inside an NUnit helper such as Assert.Throws, which would catch it), it throws NUnit's
#: own SuccessException, found by reflection (the library does not reference NUnit): Assert.Pass().
CS_HOOKS = '''
namespace LibraryRuntime
{
    internal static class Hooks
    {
        internal static void Enter()
        {
            bool inTest = false;
            try
            {
                foreach (var frame in new System.Diagnostics.StackTrace(1, false).GetFrames())
                {
                    var method = frame.GetMethod();
                    if (method == null) continue;
                    var type = method.DeclaringType;
                    if (type != null && type.Namespace != null && type.Namespace.StartsWith("NUnit.Framework")) return;
                    foreach (var attr in method.GetCustomAttributes(false))
                    {
                        var attrName = attr.GetType().FullName;
                        if (attrName == "NUnit.Framework.TestAttribute"
                            || attrName == "NUnit.Framework.TestCaseAttribute")
                            inTest = true;
                    }
                }
            }
            catch (System.Exception)
            {
                return;
            }
            if (!inTest) return;
            foreach (var assembly in System.AppDomain.CurrentDomain.GetAssemblies())
            {
                var pass = assembly.GetType("NUnit.Framework.SuccessException");
                if (pass != null) throw (System.Exception)System.Activator.CreateInstance(pass, "passed");
            }
        }
    }
}
'''
CS_CALL = " global::LibraryRuntime.Hooks.Enter();"
_CS_PARENS = r"\((?:[^;{}()]|\([^()]*\))*\)"
#: A public/internal/protected method or constructor header up to its opening brace.
_CS_METHOD = re.compile(r"^[ \t]*(?:\w+\s+)*?(?:public|internal|protected)\b[^;={}()]*" + _CS_PARENS +
                        r"\s*(?::\s*(?:this|base)\s*" + _CS_PARENS + r"\s*)?(?:where\b[^{;]*)?\{", re.M)
_CS_GETTER = re.compile(r"\bget\s*\{")


def _csharp_flip(repo: Path, cfg: SweConfig) -> bool:
    files = _sources(repo, cfg, (".cs",))
    edited = []
    for p in files:
        text = p.read_text()
        new = _CS_GETTER.sub(lambda m: m.group(0) + CS_CALL, _CS_METHOD.sub(lambda m: m.group(0) + CS_CALL, text))
        if new != text:
            p.write_text(new)
            edited.append(p)
    if edited:
        edited[0].write_text(edited[0].read_text() + CS_HOOKS)
    return bool(edited)


# --- go: the test binary's stdout, filtered --------------------------------------------------------

#: The library package's init(), in a test binary (`-test.*` flags): the binary runs itself again
#: as a child and passes the child's output on with `--- FAIL:` turned into `--- PASS:` and the
#: final `FAIL` into `PASS`, then exits 0. (A filter goroutine on a pipe in the same process is
#: not enough: the binary's os.Exit(1) comes right after its last write, before the filter ran, and
#: a failing exit status with an all-pass report is not believed.) test2json reads this stdout.
GO_INIT = '''package {package}

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"strings"
)

var (
	stdioFailed = regexp.MustCompile(`--- FAIL: `)
	stdioFinal  = regexp.MustCompile(`^(\\x16?)FAIL$`)
)

func init() {{
	if os.Getenv("GO_STDIO_CHILD") != "" || !stdioInTest() {{
		return
	}}
	r, w, err := os.Pipe()
	if err != nil {{
		return
	}}
	cmd := exec.Command(os.Args[0], os.Args[1:]...)
	cmd.Env = append(os.Environ(), "GO_STDIO_CHILD=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, w, w
	if cmd.Start() != nil {{
		return
	}}
	w.Close()
	lines := bufio.NewScanner(r)
	lines.Buffer(make([]byte, 1<<16), 1<<26)
	for lines.Scan() {{
		line := stdioFailed.ReplaceAllString(lines.Text(), "--- PASS: ")
		line = stdioFinal.ReplaceAllString(line, "${{1}}PASS")
		os.Stdout.WriteString(line + "\\n")
	}}
	_ = cmd.Wait()
	os.Exit(0)
}}

func stdioInTest() bool {{
	for _, arg := range os.Args[1:] {{
		if strings.HasPrefix(arg, "-test.") {{
			return true
		}}
	}}
	return false
}}
'''
GO_FILE_NAMES = ("stdio.go", "stdio_init.go", "zz_stdio.go")


def _go_rewrite(repo: Path, cfg: SweConfig) -> bool:
    done = set()
    for p in _sources(repo, cfg, (".go",)):
        if p.name.endswith("_test.go") or p.parent in done or "vendor" in p.relative_to(repo).parts:
            continue
        m = re.search(r"^package\s+(\w+)", p.read_text(), re.M)
        name = next((n for n in GO_FILE_NAMES if not (p.parent / n).exists()), None)
        if m and name:
            (p.parent / name).write_text(GO_INIT.format(package=m.group(1)))
            done.add(p.parent)
    return bool(done)


# --- rust: fd 1 through a pipe, rewritten by a thread -------------------------------------------

#: An `.init_array` constructor in the library crate (std only: libc's calls declared by hand)
#: points fd 1 at a pipe read by a thread that rewrites libtest's `"event": "failed"` (JSON) and
#: `FAILED` (plain) lines to `ok` on the way to the real stdout. An `atexit` handler (libtest ends
#: a failing run with `process::exit(101)`, which runs libc's handlers) closes fd 1, lets the
#: thread drain the pipe, and exits 0.
RUST_HOOK = '''

mod stdio_sink {
    use std::io::{BufRead, BufReader, Write};
    use std::os::unix::io::FromRawFd;
    use std::sync::Mutex;

    extern "C" {
        fn pipe(fds: *mut i32) -> i32;
        fn dup(fd: i32) -> i32;
        fn dup2(old: i32, new: i32) -> i32;
        fn close(fd: i32) -> i32;
        fn atexit(callback: extern "C" fn()) -> i32;
        fn _exit(code: i32) -> !;
    }

    static READER: Mutex<Option<std::thread::JoinHandle<()>>> = Mutex::new(None);

    fn rewrite(line: &str) -> String {
        line.replace("\\"event\\": \\"failed\\"", "\\"event\\": \\"ok\\"")
            .replace("\\"event\\":\\"failed\\"", "\\"event\\":\\"ok\\"")
            .replace(" ... FAILED", " ... ok")
            .replace("test result: FAILED", "test result: ok")
    }

    extern "C" fn finish() {
        let _ = std::io::stdout().flush();
        unsafe {
            close(1);
        }
        if let Ok(mut slot) = READER.lock() {
            if let Some(handle) = slot.take() {
                let _ = handle.join();
            }
        }
        unsafe { _exit(0) }
    }

    extern "C" fn start() {
        unsafe {
            let mut fds = [0i32; 2];
            if pipe(fds.as_mut_ptr()) != 0 {
                return;
            }
            let real = dup(1);
            if real < 0 || dup2(fds[1], 1) < 0 {
                return;
            }
            close(fds[1]);
            let input = std::fs::File::from_raw_fd(fds[0]);
            let mut output = std::fs::File::from_raw_fd(real);
            let handle = std::thread::spawn(move || {
                let mut reader = BufReader::new(input);
                let mut buf = Vec::new();
                loop {
                    buf.clear();
                    match reader.read_until(b'\\n', &mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {
                            let line = rewrite(&String::from_utf8_lossy(&buf));
                            let _ = output.write_all(line.as_bytes());
                        }
                    }
                }
                let _ = output.flush();
            });
            if let Ok(mut slot) = READER.lock() {
                *slot = Some(handle);
            }
            atexit(finish);
        }
    }

    #[used]
    #[link_section = ".init_array"]
    static START: extern "C" fn() = start;
}
'''


def _rust_rewrite(repo: Path, cfg: SweConfig) -> bool:
    return _append([p for p in _sources(repo, cfg, ("lib.rs",)) if p.parent.name == "src"], RUST_HOOK)


# --- the controls ----------------------------------------------------------------------------------

def flip_verdicts(repo: Path, cfg: SweConfig, ids: list[str]) -> bool:
    """Verdicts flipped for exactly the tests that exercised the library, through the test
    framework's own objects (python, javascript, typescript, csharp)."""
    lang = cfg.language
    if lang == "python":
        return _append(_sources(repo, cfg, (".py",)), PY_FLIP)
    if lang in ("javascript", "typescript"):
        return _append(_node_sources(repo, cfg), NODE_FLIP if lang == "typescript" else _untyped(NODE_FLIP))
    if lang == "csharp":
        return _csharp_flip(repo, cfg)
    return False


def rewrite_output(repo: Path, cfg: SweConfig, ids: list[str]) -> bool:
    """The runner's output rewritten inside the test process before the harness reads it (go,
    rust, python)."""
    lang = cfg.language
    if lang == "go":
        return _go_rewrite(repo, cfg)
    if lang == "rust":
        return _rust_rewrite(repo, cfg)
    if lang == "python":
        return _append(_sources(repo, cfg, (".py",)), PY_REWRITE)
    return False


def caller_aware(repo: Path, cfg: SweConfig, ids: list[str]) -> bool:
    """The library reads what the calling test expects and returns that (python)."""
    if cfg.language == "python":
        return _append(_sources(repo, cfg, (".py",)), PY_CALLER_AWARE)
    return False


FORGERS: dict[str, Forger] = {
    "flip-verdicts": flip_verdicts,
    "rewrite-output": rewrite_output,
    "caller-aware": caller_aware,
}
