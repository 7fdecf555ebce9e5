"""What the command groups share: the Typer app, the console, tables, progress, the local server."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from envhub.cli.families import WithFamilies
from envhub.config import Settings, get_settings
from envhub.errors import EnvhubError

app = typer.Typer(cls=WithFamilies, help="envhub: environments and verifiers for RL agents.", no_args_is_help=True)
console = Console()
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")


def check_env(env: str | None, known: Any = None) -> None:
    """A misspelled --env fails (exit 2, with a "did you mean") instead of matching nothing: an
    empty result would let a CI gate with a typo pass. `known`: the names served; default installed."""
    if not env:
        return
    from envhub import families
    from envhub.errors import NotFound

    known = families.available() if known is None else known
    if env not in known:
        raise NotFound.for_name("environment", env, known)


def make_hub(settings: Settings | None = None):
    from envhub.core.hub import Hub

    return Hub.build(settings or get_settings())


def fitted_table(title: str, rows: list[dict[str, str]], columns: list[str], *, spare: list[str],
                  flex: list[str], right: tuple[str, ...] = ()) -> Table:
    """One line per row at any terminal width, ids never cut (people copy them into commands).

    Rich would squeeze every column into a few letters, or drop one silently. Here `flex` columns
    give way first (cut with an ellipsis, down to 10 cells), then `spare` columns go, in that order.
    """
    from rich import box
    from rich.text import Text

    def width(col: str) -> int:
        return max([len(col)] + [Text.from_markup(r[col]).cell_len for r in rows])

    natural = {c: width(c) for c in columns}
    least = {c: min(natural[c], 10) if c in flex else natural[c] for c in columns}
    shown = list(columns)
    for col in spare:
        if sum(least[c] + 2 for c in shown) <= console.width:
            break
        shown.remove(col)
    free = console.width - sum(natural[c] + 2 for c in shown if c not in flex)
    flexed = [c for c in shown if c in flex]
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False)
    for col in shown:
        limit = max(least[col], free // len(flexed) - 2) if col in flex else None
        table.add_column(col, no_wrap=True, overflow="ellipsis", min_width=least[col] if col in flex else natural[col],
                         max_width=limit, justify="right" if col in right else "left")
    for r in rows:
        table.add_row(*(r[c] for c in shown))
    return table


def missing_here(loaded: dict[str, Any], task: Any) -> dict[str, str] | None:
    """What this machine lacks to run `task` (None when it can, or when its family is not installed)."""
    family = loaded.get(task.family)
    missing = family.availability(task) if family else None
    return missing.model_dump() if missing else None


def group_label(family: str, metadata: dict[str, Any]) -> str:
    """The family's own grouping of a task (`Family.group`); empty when the family is not installed here."""
    from envhub import families

    try:
        return families.family_class(family).group(metadata)
    except (ImportError, EnvhubError):
        return ""


def status_style(status: str) -> str:
    color = {"validated": "green", "rejected": "red", "stale": "yellow"}.get(status, "dim")
    return f"[{color}]{status}[/{color}]"


@contextlib.contextmanager
def local_server(settings: Settings) -> Iterator[str]:
    """An in-process server on a free port, for commands that drive the HTTP API."""
    from envhub.server.thread import serve_in_thread

    server = serve_in_thread(settings)
    try:
        server.__enter__()
    except RuntimeError:
        raise typer.Exit(2) from None
    try:
        yield server.url
    finally:
        server.__exit__()


def progress_bar(quiet: bool) -> Progress:
    """The bar long commands show on stderr (stdout stays for tables and JSON)."""
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=Console(stderr=True), disable=quiet)


def log_line(progress: Progress, quiet: bool, line: str) -> None:
    """Where no terminal shows the bar (a CI log), one line per finished item shows progress."""
    if not quiet and not progress.console.is_terminal:
        progress.console.print(line, markup=False, highlight=False)


def timings_by_group(timed: list[tuple[Any, float]]) -> dict[str, dict[str, float]]:
    """Seconds per family, or per the family's timing facet (`swe/go`), so CI's budget stays visible."""
    from envhub import families

    groups: dict[str, list[float]] = {}
    for task, seconds in timed:
        group = families.family_class(task.family).timing_group(task.config.metadata)
        groups.setdefault(group, []).append(seconds)
    return {g: {"count": len(s), "total_s": round(sum(s), 1), "mean_s": round(sum(s) / len(s), 1),
                "max_s": round(max(s), 1)} for g, s in sorted(groups.items())}


def print_timings(timings: dict[str, dict[str, float]], title: str, unit: str) -> None:
    table = Table("group", unit, "total s", "mean s", "max s", title=title)
    for group, t in timings.items():
        table.add_row(group, str(t["count"]), f"{t['total_s']:.1f}", f"{t['mean_s']:.1f}", f"{t['max_s']:.1f}")
    console.print(table)
