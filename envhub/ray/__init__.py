"""The environment pool on Ray (issue 18): hub replicas as Ray actors behind one HTTP entry point.

- `replica.py`: `HubReplica`, one `envhub serve` inside a Ray actor (the actor's death is the
  replica's), placed with its family's resource request (`FAMILY_RESOURCES`).
- `pool.py`: `RayPool`, the controller: starts min replicas per family, watches them (Ray's actor
  state and the replica's own port), replaces dead ones and autoscales between min and max by load.
- `entry.py`: the HTTP entry point, the compose pool's router (docker/router.py) with the pool as
  its discovery: placement on the ready replica with most free slots, session affinity by table,
  503 + Retry-After only when every replica of a family is full, and `unavailable` for the sessions
  of a replica that died (within seconds, racing any call in flight).
- `cli.py`: `envhub ray up`.

Install with `scripts/install-ray.sh` (the `ray` extra). See README "On Ray".
"""
