"""The house's rules, read from the source: the core imports no family, imports point down, no
two modules import each other (by any path), and what drives a hub in-process (`validate`, `cli`,
`ray`) reaches the server only through its composition root.

Every module under `envhub/` is parsed with `ast` (imports under `TYPE_CHECKING` and inside
functions count too: an arrow is an arrow), and each import is checked against `LAYERS`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

#: Lowest first. A module may import its own layer or a lower one, never a higher one; a layer is
#: a folder or a module, so the table maps onto the tree (the most specific prefix names a module's
#: layer, should a module ever sit in another layer than its folder).
LAYERS: list[tuple[str, ...]] = [
    ("envhub.errors", "envhub.spec", "envhub.episode", "envhub.tools", "envhub.config", "envhub.harness",
     "envhub.client"),
    ("envhub.sandbox", "envhub.tasks"),
    ("envhub.verify",),
    ("envhub.env", "envhub.families", "envhub.shell_env", "envhub.scaffold"),
    ("envhub.store", "envhub.records"),
    ("envhub.registry",),
    ("envhub.web",),  # pages over the registry: they import no server
    ("envhub.core",),  # the hub, sessions, deadlines, access: what every transport calls
    ("envhub.validate", "envhub.conformance", "envhub.rl"),  # drive a hub or a server
    ("envhub.server",),  # the transports (adapters over the core), the composition root and its launcher
    ("envhub.cli", "envhub.ray"),  # the command line, and the pool on Ray (replicas serve in a thread)
]
#: Packages the core must never import: families are found through entry points.
FORBIDDEN = ("environments", "harnesses")
#: The only server modules the layers above it may import: the composition root and its launcher.
COMPOSITION_ROOT = ("envhub.server.app", "envhub.server.thread")


def layer_of(module: str) -> int | None:
    best: tuple[int, int] | None = None  # (prefix length, layer)
    for level, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), level)
    return None if best is None else best[1]


def imports(module: str, source: str, is_package: bool = False) -> list[str]:
    """The absolute module names `source` imports (`from envhub import x` names envhub.x)."""
    package = module if is_package else module.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            out.extend(f"{base}.{alias.name}" for alias in node.names)
    return out


def violations(modules: dict[str, tuple[str, bool]]) -> list[str]:
    """Every broken rule in `modules` (name -> (source, is_package))."""
    found = []
    for module, (source, is_package) in sorted(modules.items()):
        own = layer_of(module)
        if own is None:
            found.append(f"{module} is in no layer: add it to LAYERS")
            continue
        for target in imports(module, source, is_package):
            if target.split(".")[0] in FORBIDDEN:
                found.append(f"{module} imports the family-side package {target}")
                continue
            if not target.startswith("envhub."):
                continue
            # `from envhub.x import name` names envhub.x.name: judge the longest known module.
            while target not in modules and target.count(".") > 1:
                target = target.rpartition(".")[0]
            theirs = layer_of(target)
            if theirs is not None and theirs > own:
                found.append(f"{module} (layer {own}) imports {target} (layer {theirs}): an arrow pointing up")
            elif (target.startswith("envhub.server.") and not module.startswith("envhub.server")
                  and target not in COMPOSITION_ROOT):
                found.append(f"{module} imports {target}: outside the server, only its composition root "
                             f"({', '.join(COMPOSITION_ROOT)}); what it needs belongs in envhub.core")
    return found + circles(modules)


def arrows(modules: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """module -> the modules of `modules` it imports (a name imported from a module is the module)."""
    out: dict[str, set[str]] = {}
    for module, (source, is_package) in modules.items():
        targets = set()
        for target in imports(module, source, is_package):
            while target not in modules and target.count(".") > 1:
                target = target.rpartition(".")[0]
            if target in modules and target != module:
                targets.add(target)
        out[module] = targets
    return out


def circles(modules: dict[str, tuple[str, bool]]) -> list[str]:
    """One line per set of modules that import each other, by any path (Tarjan's strongly connected
    components). A package's `__init__` re-exporting its own modules is no circle: the arrows from a
    package to the modules inside it are left out."""
    graph = {m: {t for t in ts if not (modules[m][1] and t.startswith(m + "."))}
             for m, ts in arrows(modules).items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[str] = []

    def visit(m: str) -> None:
        index[m] = low[m] = len(index)
        stack.append(m)
        on_stack.add(m)
        for t in sorted(graph[m]):
            if t not in index:
                visit(t)
                low[m] = min(low[m], low[t])
            elif t in on_stack:
                low[m] = min(low[m], index[t])
        if low[m] == index[m]:
            members = []
            while True:
                t = stack.pop()
                on_stack.discard(t)
                members.append(t)
                if t == m:
                    break
            if len(members) > 1:
                found.append("a circle of imports: " + " <-> ".join(sorted(members)))

    for m in sorted(graph):
        if m not in index:
            visit(m)
    return found


def core_modules() -> dict[str, tuple[str, bool]]:
    out = {}
    for path in sorted((REPO_ROOT / "envhub").rglob("*.py")):
        parts = path.relative_to(REPO_ROOT).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        out[name] = (path.read_text(encoding="utf-8"), is_package)
    return out


def test_the_core_imports_no_family_and_every_arrow_points_down() -> None:
    assert violations(core_modules()) == []


@pytest.mark.parametrize(("module", "source", "broken"), [
    ("envhub.cli.tasks", "from environments.db.synth import synthesize", "family-side package environments.db.synth"),
    ("envhub.env", "import harnesses.codex", "family-side package harnesses.codex"),
    ("envhub.store.events", "if TYPE_CHECKING:\n    from envhub.core.sessions import Session",
     "imports envhub.core.sessions"),
    ("envhub.tasks.catalog", "def f():\n    from envhub.records import validation_status",
     "imports envhub.records"),
    ("envhub.web.views", "from envhub.core import hub", "imports envhub.core.hub"),
    ("envhub.core.sessions", "from ..validate import core", "imports envhub.validate.core"),
    ("envhub.newthing", "import json", "in no layer"),
])
def test_a_bad_import_is_caught(module: str, source: str, broken: str) -> None:
    modules = core_modules()
    modules[module] = (modules.get(module, ("", False))[0] + "\n" + source + "\n", False)
    found = violations(modules)
    assert any(broken in v for v in found), found


def test_a_good_import_passes() -> None:
    modules = core_modules()
    modules["envhub.web.views"] = (modules["envhub.web.views"][0] + "\nfrom envhub.registry import Registry\n", False)
    assert violations(modules) == []


def backend_checks(modules: dict[str, tuple[str, bool]]) -> list[str]:
    """`isinstance` on a sandbox backend outside `envhub.sandbox`: what a backend offers is asked
    through the interface (`SandboxBackend.no_services`), so a new backend is never silently served
    less."""
    found = []
    for name, (source, _) in modules.items():
        if name.startswith("envhub.sandbox"):
            continue
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance" \
                    and len(node.args) == 2 and "Backend" in ast.unparse(node.args[1]):
                found.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_isinstance_on_a_sandbox_backend_outside_the_sandbox_package() -> None:
    assert backend_checks(core_modules()) == []
    modules = core_modules()
    source, is_package = modules["envhub.verify.runner"]
    check = "isinstance(backend, (LocalBackend, DockerBackend))"
    modules["envhub.verify.runner"] = (source + f"\nx = {check}\n", is_package)
    assert [f.split(": ", 1)[1] for f in backend_checks(modules)] == [check]


# --- a family's folder --------------------------------------------------------------------------

def _layout_problems(name: str, entry_point: str, folder: Path) -> list[str]:
    """How the family `name` strays from the layout every family follows (docs/architecture.md,
    "A family's folder"; `envhub new-family` writes it): the entry point registers `family.py`'s
    class, which subclasses the judged family of `env.py`; `judged_by` starts with `env.py` and lists
    neither `__init__.py`, `family.py` nor `cli.py`, which say nothing about a verdict."""
    from envhub.env import Family

    problems = []
    module, _, cls_name = entry_point.partition(":")
    if module != f"environments.{name}.family":
        problems.append(f"entry point {entry_point} is not environments.{name}.family:<Class>")
    for file in ("__init__.py", "env.py", "family.py"):
        if not (folder / file).is_file():
            problems.append(f"no {file}")
    if problems:
        return problems
    import importlib

    registered = getattr(importlib.import_module(module), cls_name)
    judged = [c for c in registered.__mro__[1:] if isinstance(c, type) and issubclass(c, Family)
              and c.__module__ == f"environments.{name}.env"]
    if not judged:
        problems.append(f"{cls_name} does not subclass a family of environments/{name}/env.py")
    if not registered.judged_by or registered.judged_by[0] != "env.py":
        problems.append(f"judged_by {registered.judged_by} does not start with env.py")
    problems += [f"judged_by lists {f}" for f in ("__init__.py", "family.py", "cli.py") if f in registered.judged_by]
    return problems


def test_every_family_follows_one_layout() -> None:
    from envhub import families

    found = {name: _layout_problems(name, ep, REPO_ROOT / "environments" / name)
             for name, ep in families.available().items()}
    assert {name: p for name, p in found.items() if p} == {}


def test_a_family_that_strays_from_the_layout_is_caught(tmp_path: Path) -> None:
    assert _layout_problems("echo", "environments.echo:EchoFamily", tmp_path) == [
        "entry point environments.echo:EchoFamily is not environments.echo.family:<Class>",
        "no __init__.py", "no env.py", "no family.py"]
