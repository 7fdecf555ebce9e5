"""One hub replica inside a Ray actor: `envhub serve` for some families on a free port of its node."""

from __future__ import annotations

from typing import Any

#: What a replica of each family asks Ray for. Custom resources name what only some nodes have:
#: start such a node with e.g. `ray start --resources '{"libreoffice": 4}'`. Families not listed ask
#: for `DEFAULT_RESOURCES`. With the Docker sandbox backend every family also asks for `docker`.
FAMILY_RESOURCES: dict[str, dict[str, Any]] = {
    "echo": {"num_cpus": 0.1, "memory_mb": 256},
    "terminal": {"num_cpus": 0.5, "memory_mb": 1024},
    "db": {"num_cpus": 0.5, "memory_mb": 1024},
    "office": {"num_cpus": 1, "memory_mb": 2048, "resources": {"libreoffice": 1}},
    "swe": {"num_cpus": 1, "memory_mb": 4096, "resources": {"swe_toolchains": 1}},
}
DEFAULT_RESOURCES: dict[str, Any] = {"num_cpus": 0.5, "memory_mb": 1024}


def actor_options(family: str, docker_sandbox: bool = False,
                  overrides: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """`ray.remote(...).options()` for a replica of `family`."""
    spec = {**DEFAULT_RESOURCES, **FAMILY_RESOURCES.get(family, {}), **(overrides or {}).get(family, {})}
    resources = dict(spec.get("resources") or {})
    if docker_sandbox:
        resources["docker"] = resources.get("docker", 0) + 0.01
    # SPREAD: a family's replicas go to different nodes where they can, so one lost node costs the
    # fewest sessions and more nodes mean more CPUs per replica.
    opts: dict[str, Any] = {"num_cpus": spec["num_cpus"], "memory": int(spec["memory_mb"]) * 1024 * 1024,
                            "max_restarts": 0, "max_concurrency": 4, "scheduling_strategy": "SPREAD"}
    if resources:
        opts["resources"] = resources
    return opts


class HubReplica:
    """A Ray actor class (made remote by the pool). The server runs in a thread of the actor's process,
    so killing the actor (or losing its node) ends the replica and every session it holds."""

    def __init__(self, families: list[str], max_sessions: int, settings: dict[str, Any] | None = None) -> None:
        import ray
        from envhub.config import Settings
        from envhub.server.thread import free_port, serve_in_thread

        port = free_port("0.0.0.0")
        self.settings = Settings(**{**(settings or {}), "families": families, "max_sessions": max_sessions,
                                    "host": "0.0.0.0", "port": port})
        self.server = serve_in_thread(self.settings, host="0.0.0.0", port=port, start_timeout_s=120)
        self.server.__enter__()  # held for the actor's life: killing the actor ends it
        self.url = f"http://{ray.util.get_node_ip_address()}:{port}"

    def address(self) -> str:
        return self.url

    def ping(self) -> bool:
        return self.server.thread.is_alive()
