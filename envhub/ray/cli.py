"""`envhub ray`: serve the pool on a Ray cluster (`up`) and show its replicas (`status`)."""

from __future__ import annotations

import json
import logging
import os
import sys
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(help="The environment pool on a Ray cluster (the `ray` extra: scripts/install-ray.sh).",
                  no_args_is_help=True)
console = Console()

#: Faster than Ray's defaults (a check every 5 s, 10 s timeout, 5 misses), so a lost node's sessions
#: answer `unavailable` within seconds.
HEALTH_CHECK = {"health_check_period_ms": 1000, "health_check_timeout_ms": 1000, "health_check_failure_threshold": 3}


def init_ray(address: str, num_cpus: float | None, object_store_mb: int, resources: dict | None = None) -> None:
    """Join the cluster at `address` ("auto": the one this node belongs to), or with "local" start a
    one-node cluster in this process (small object store: the pool passes no large objects)."""
    import ray

    if address == "local":
        ray.init(num_cpus=num_cpus or os.cpu_count(), resources=resources or None,
                 object_store_memory=object_store_mb * 1024 * 1024, include_dashboard=False,
                 _system_config=HEALTH_CHECK, logging_level=logging.WARNING, log_to_driver=False)
    else:
        ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)


@app.command()
def up(env: Annotated[list[str], typer.Option("--env", help="Families to serve (repeat); default echo, terminal.")]
       = None,  # type: ignore
       address: str = typer.Option("auto", help='Ray cluster address; "local" starts a one-node cluster here.'),
       host: str = typer.Option("127.0.0.1", help="The entry point's bind address."),
       port: int = typer.Option(8080, help="The entry point's port."),
       min_replicas: int = typer.Option(1, "--min", min=0, help="Replicas per family, at least."),
       max_replicas: int = typer.Option(3, "--max", min=1, help="Replicas per family, at most."),
       max_sessions: int = typer.Option(32, min=1, help="A replica's session capacity."),
       resources: str = typer.Option(None, help='Per-family resource overrides, JSON: {"office": {"num_cpus": 2}}.'),
       num_cpus: float = typer.Option(None, help='CPUs of a "local" cluster (default: all).'),
       node_resources: str = typer.Option(None, help='Custom resources of a "local" cluster, JSON: '
                                                     '{"libreoffice": 2, "swe_toolchains": 1} (see FAMILY_RESOURCES).'),
       object_store_mb: int = typer.Option(100, help='Object store of a "local" cluster, MiB.')) -> None:
    """Start hub replicas as Ray actors and serve one HTTP entry point in front of them (until Ctrl-C)."""
    from aiohttp import web

    from envhub.ray.entry import build_app
    from envhub.ray.pool import PoolConfig, RayPool

    if max_replicas < min_replicas:
        raise typer.BadParameter("--max must be at least --min")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    init_ray(address, num_cpus, object_store_mb, json.loads(node_resources) if node_resources else None)
    settings = {}  # what this shell sets for the replicas (PoolConfig's default: auth off)
    for name in ("auth", "api_keys", "public_reads", "sandbox", "db_family_url", "database_url"):
        if f"ENVHUB_{name.upper()}" in os.environ:
            settings[name] = os.environ[f"ENVHUB_{name.upper()}"]
    config = PoolConfig(families=env or ["echo", "terminal"], min_replicas=min_replicas,
                        max_replicas=max_replicas, max_sessions=max_sessions,
                        resources=json.loads(resources) if resources else {},
                        docker_sandbox=settings.get("sandbox") == "docker")
    config.settings.update(settings)
    console.print(f"envhub on Ray: {', '.join(config.families)} → http://{host}:{port}", highlight=False)
    web.run_app(build_app(RayPool(config)), host=host, port=port, access_log=None, print=None)


@app.command()
def status(url: str = typer.Option("http://127.0.0.1:8080", envvar="ENVHUB_URL", help="The entry point."),
           as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False) -> None:
    """The pool's replicas: family, address, state, sessions."""
    import httpx

    rows = httpx.get(f"{url}/ray/replicas", timeout=10).raise_for_status().json()
    if as_json:
        sys.stdout.write(json.dumps(rows) + "\n")
        return
    table = Table("id", "family", "url", "state", "sessions")
    for r in rows:
        table.add_row(r["id"], r["family"], str(r["url"]), r["state"], f"{r['active']}/{r['capacity']}")
    console.print(table)
