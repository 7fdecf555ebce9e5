"""`envhub setup`, `serve`, `conformance` and `keys`: running and checking a server."""

from __future__ import annotations

import gc
import json
import resource
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from envhub.cli._shared import JsonOpt, app, check_env, console, print_json
from envhub.config import get_settings


@app.command()
def setup() -> None:
    """Install the verifier runtime (needs the package index once)."""
    from envhub.verify import runtime

    settings = get_settings()
    runtime.install(settings.data_dir, quiet=False)
    console.print(f"verifier runtime ready in {runtime.site_dir(settings.data_dir)}")


@app.command()
def serve(host: str = typer.Option(None, help="Bind address."), port: int = typer.Option(None),
          env: Annotated[list[str], typer.Option("--env", help="Serve only these families.")] = None,  # type: ignore
          log_level: str = "info") -> None:
    """Serve every registered environment (or --env ones) over HTTP."""
    import uvicorn

    from envhub.server.app import create_app
    from envhub.server.thread import uvicorn_config

    settings = get_settings()
    updates: dict[str, Any] = {}
    if host:
        updates["host"] = host
    if port:
        updates["port"] = port
    if env:
        for name in env:
            check_env(name)
        updates["families"] = env
    settings = settings.model_copy(update=updates)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # a live terminal session holds a few fds
    console.print(f"episode store: {settings.store_label() if settings.store_enabled else 'off'}", highlight=False,
                  soft_wrap=True)
    try:
        served = create_app(settings)
    except ValueError as e:  # e.g. a public interface without API keys
        console.print(f"[red]{e}[/red]")
        raise typer.Exit(2) from None
    _ = served.state.hub.catalog.tasks  # loaded now, so that the freeze below covers it
    # Modules and the catalog live as long as the server: keep them out of the cyclic collector's
    # full scans (benchmarks/protocol.py, 64 sessions: p99 81 -> 45 ms and ~6% less CPU per pair).
    gc.collect()
    gc.freeze()
    # Each reset+step pair leaves a few hundred young objects, nearly all freed by reference counting:
    # a young collection every 7,000 allocations, not 700, runs the collector a tenth as often
    # (benchmarks/protocol.py, 64 sessions: about 10% less CPU per pair and a lower p99).
    gc.set_threshold(7000, 10, 10)
    uvicorn.Server(uvicorn_config(served, settings, host=settings.host, port=settings.port, log_level=log_level)).run()



@app.command()
def conformance(url: str, env: str = typer.Option("echo", help="Environment to run episodes on."),
                task: str = typer.Option(None, help="Task id (default: the environment picks)."),
                action: str = typer.Option(None, help="JSON tool call for the step checks."),
                api_key: str = typer.Option(None, envvar="ENVHUB_API_KEY", show_default=False,
                                            help="API key, for a server with keys on."),
                as_json: JsonOpt = False) -> None:
    """Black-box protocol conformance against a running server; exits non-zero on any failure."""
    from envhub.conformance import ConformanceSuite

    suite = ConformanceSuite(url, env=env, task_id=task, action=json.loads(action) if action else None,
                             api_key=api_key)
    outcomes = suite.run()
    failed = [o for o in outcomes if not o.ok]
    skipped = [o for o in outcomes if not o.applicable]
    passed = len(outcomes) - len(failed) - len(skipped)
    if as_json:
        print_json({"passed": passed, "failed": len(failed), "not_applicable": len(skipped),
                     "checks": [o.__dict__ for o in outcomes]})
    else:
        table = Table(title=f"conformance of {url}")
        table.add_column("check")
        table.add_column("result")
        table.add_column("detail")
        for o in outcomes:
            result = "[green]pass[/green]" if o.ok else "[red]FAIL[/red]"
            table.add_row(o.name, result if o.applicable else "[yellow]n/a[/yellow]", o.detail)
        console.print(table)
        print(f"{passed} passed, {len(failed)} failed, {len(skipped)} not applicable")  # noqa: T201 - the plain closing line
    if failed:
        raise typer.Exit(1)


keys_app = typer.Typer(help="API keys (envhub.core.auth): the server stores only their hashes.")
app.add_typer(keys_app, name="keys")


@keys_app.command("new")
def keys_new(name: str, families: str = typer.Option(None, help="Comma-separated families the key may use."),
             max_sessions: int = typer.Option(None, min=1, help="Live sessions the key may hold at once."),
             file: Path = typer.Option(None, help="Append the hashed entry to this keys file "
                                                  "(ENVHUB_API_KEYS_FILE)."),
             as_json: JsonOpt = False) -> None:
    """Make an API key: prints the secret once (for the client's ENVHUB_API_KEY) and its hashed entry."""
    from envhub.core.auth import new_key

    secret, key = new_key(name, families.split(",") if families else None, max_sessions)
    if file is not None:
        with file.open("a", encoding="utf-8") as f:
            f.write(key.entry() + "\n")
        file.chmod(0o600)
    if as_json:
        print_json({"name": name, "key": secret, "entry": key.entry(), "file": str(file) if file else None})
        return
    console.print(f"key (give it to the client as ENVHUB_API_KEY; it is not stored): [bold]{secret}[/bold]")
    console.print(f"entry ({'appended to ' + str(file) if file else 'for ENVHUB_API_KEYS or a keys file'}): "
                  f"{key.entry()}", soft_wrap=True)
