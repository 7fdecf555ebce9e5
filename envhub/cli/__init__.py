"""The `envhub` command line (Typer + rich), one module per command group. The library never
imports this package.

    _shared.py     the app, console, tables, progress, the local server
    server.py      setup, serve, conformance, keys
    tasks.py       list, sets, show
    episodes.py    episodes, run, smoke
    runs.py        runs, runs show
    calibrate.py   calibrate (pass@k of a policy per task)
    validation.py  validate
    new.py         new-family (a family scaffolded in the layout every family follows)
    families.py    each family's own commands (`envhub <family> ...`) and their old names, on first need
    (envhub/ray/cli.py: `envhub ray ...`, the pool on Ray, lives with the Ray code)
"""

from __future__ import annotations

import click
import typer

# Each module registers its commands, in the order `envhub --help` lists them (families follow).
from envhub.cli import server, tasks, episodes, runs, calibrate, validation, new  # noqa: F401, I001
from envhub.cli._shared import app, console
from envhub.ray.cli import app as ray_app

app.add_typer(ray_app, name="ray")  # `envhub ray up|status`: the pool on a Ray cluster (the `ray` extra)

__all__ = ["app", "main"]


def _usage_error(e: Exception) -> int:
    """A mistyped command, option or value: one line naming the fix (Typer would print a
    traceback-sized panel), and the exit code 2 of a usage error."""
    if type(e).__name__ == "NoArgsIsHelpError":  # bare `envhub` or `envhub import` (Typer's or click's class)
        e.show()  # type: ignore[attr-defined]  # the help is the answer
        return getattr(e, "exit_code", 2)
    ctx = getattr(e, "ctx", None)
    hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
    message = e.format_message() if hasattr(e, "format_message") else str(e)
    console.print(f"[red]error:[/red] {' '.join(message.split())}{hint}", highlight=False, soft_wrap=True)
    return getattr(e, "exit_code", 2)


def main() -> None:
    """The console script: envhub's own errors print as one clear line, not a traceback."""
    import httpx

    from envhub.errors import EnvhubError

    try:
        code = app(standalone_mode=False)  # click hands back an Exit's code instead of raising it
    except EnvhubError as e:
        console.print(f"[red]error:[/red] {e.detail}", markup=True, soft_wrap=True)
        raise SystemExit(2) from None
    except httpx.TransportError as e:  # --url / ENVHUB_URL names a server that does not answer
        try:
            where = str(e.request.url)
        except RuntimeError:  # raised before a request existed
            where = "the server"
        console.print(f"[red]error:[/red] cannot reach {where}: {e}", highlight=False, soft_wrap=True)
        raise SystemExit(2) from None
    except (typer.Exit, click.exceptions.Exit) as e:
        raise SystemExit(e.exit_code) from None
    except (typer.TyperException, click.exceptions.ClickException) as e:  # Typer vendors its own click
        raise SystemExit(_usage_error(e)) from None
    except (typer.Abort, click.exceptions.Abort):
        raise SystemExit(1) from None
    if isinstance(code, int):
        raise SystemExit(code)
