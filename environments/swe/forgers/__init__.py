"""In-process forgers: negative controls whose library code forges verdicts from inside the test run.

The controls of `controls.py` forge the report from outside the runner (fake files, planted hooks,
an early exit). These edit only the library's own (non-protected) source files, as an agent's
patch would, leave the bug in place, and make the required tests *reported* passed by the runner
itself (issue 36's classes):

- `flip_verdicts`: verdicts flipped for exactly the tests that called into the library, through
  the test framework's own objects (pytest's `TestReport`, node's `assert`, NUnit's pass exception).
- `rewrite_output`: the stream the harness reads rewritten in the test process (go's and libtest's
  stdout, pytest's, gtest's and tasty's junit file), the exit status forced to 0 (all CTest reads).
- `caller_aware`: the library's functions read the assertion their result flows into in the
  calling test and return the expected value.

No report-integrity rule sees these from the report's shape: only twins (`verifiers.swe_twins`),
copies of the required tests with a perturbed expectation, are forged passing too and expose them.
Each control returns whether it applies to the task's language (`False`: nothing was edited).

One module per language (or runtime) holds that language's forgers, `FORGES`: kind -> forger.
A task's validation record is keyed by its own language's module only (`judge_files`), so a
forger added for one language re-validates that language's tasks, not the catalogue.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from pathlib import Path

from verifiers.swe import SweConfig

Forger = Callable[[Path, SweConfig, list[str]], bool]
LanguageForger = Callable[[Path, SweConfig], bool]

KINDS = ("flip-verdicts", "rewrite-output", "caller-aware")
#: Language -> the module of this package that forges in it.
MODULES = {"python": "python", "javascript": "node", "typescript": "node", "csharp": "csharp", "go": "go",
           "rust": "rust", "c": "native", "cpp": "native", "haskell": "haskell", "ruby": "ruby", "php": "php",
           "perl": "perl", "java": "java", "ocaml": "ocaml", "erlang": "erlang", "lua": "lua", "r": "r",
           "elixir": "elixir"}
HERE = Path(__file__).resolve().parent
#: What every language's forgers run on (judging every SWE task).
SHARED = ("__init__.py", "edit.py")


def forges(language: str) -> dict[str, LanguageForger]:
    """The forgers written for `language`, by kind (none: an empty dict)."""
    module = MODULES.get(language)
    return importlib.import_module(f"{__name__}.{module}").FORGES if module else {}


def judge_files(language: str | None = None) -> list[Path]:
    """The files that judge a task in `language` (None: every language's): the shared ones, its
    module and the modules of this package that one imports (haskell's carries native's C)."""
    todo = sorted(set(MODULES.values())) if language is None else [MODULES[language]] if language in MODULES else []
    modules: set[str] = set()
    while todo:
        module = todo.pop()
        if module not in modules:
            modules.add(module)
            todo += re.findall(rf"^from {re.escape(__name__)}\.(\w+) import", (HERE / f"{module}.py").read_text(),
                               re.M)
    return [HERE / name for name in SHARED] + [HERE / f"{m}.py" for m in sorted(modules - {"edit"})]


def _kind(kind: str) -> Forger:
    def forger(repo: Path, cfg: SweConfig, ids: list[str]) -> bool:
        forge = forges(cfg.language).get(kind)
        return forge(repo, cfg) if forge else False

    forger.__name__ = kind.replace("-", "_")
    return forger


#: Verdicts flipped for exactly the tests that exercised the library, through the test
#: framework's own objects.
flip_verdicts = _kind("flip-verdicts")
#: The runner's output rewritten inside the test process before the harness reads it.
rewrite_output = _kind("rewrite-output")
#: The library reads what the calling test expects and returns that.
caller_aware = _kind("caller-aware")

FORGERS: dict[str, Forger] = {"flip-verdicts": flip_verdicts, "rewrite-output": rewrite_output,
                              "caller-aware": caller_aware}
