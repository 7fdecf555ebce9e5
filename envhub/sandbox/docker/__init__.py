"""The Docker backend: one container per session, from a warm pool, on this host's engine.

Same contract as the bubblewrap backend (`local.py`), with a container as the isolation unit.
One module per concern: `settings` (`ENVHUB_DOCKER_*`), `engine` (the Engine API client),
`cgroup` (host views of a container), `pool` (started containers, the warm pool), `sandbox` (one
session's container), `seccomp` (the verifier containers' profile) and `backend` (creating
containers, `run_once`).

- **Session sandboxes** are containers of `ENVHUB_DOCKER_IMAGE` with `--network none`, a memory
  cgroup limit (no swap), a pids limit, a CPU quota (the task's `cpus`, else `ENVHUB_DOCKER_CPUS`),
  rlimits for CPU seconds / file size / open files, no capabilities and `no-new-privileges`. PID 1
  is `docker-init` + `sleep` as root; the agent's persistent `bash` is a `docker exec -i` as uid
  1000 and cannot signal PID 1, so the container outlives anything the agent does to its shell.
- **The workspace** is a host folder (a copy of the task template, owned by the sandbox uid)
  bind-mounted at `/workspace`, as in the local backend; `export` pauses the container (freezer
  cgroup: nothing changes under the copy) and copies that folder.
- **The warm pool** keeps `ENVHUB_DOCKER_POOL` started containers per limits shape, each with its
  shell already running, so `start()` only copies the template (reset pays no container start-up).
- **Fault evidence comes from the host**, never from agent output: the container's cgroup (the
  process list for deadline kills, the OOM-kill counter) and the engine's view of the container.
  A command that blew the memory limit raises `SandboxOOM` (an `AgentError`); a container that
  stopped although the agent could not stop it is an `EnvError`; an engine that cannot be reached
  or refuses to create/start a container is `Unavailable` (retryable).
- **The verifier** (`run_once`) runs in a fresh container over a read-only bind of the exported
  state. Its result channel cannot be an inherited pipe, so it is a file in a fresh host folder
  bind-mounted at `/run/envhub-result` (mode 0700, root): the container starts as root, opens
  `fd 3` on that file, then drops to uid 1000 with `setpriv` (losing every capability) before
  exec'ing the verifier. Its seccomp profile (`seccomp`) allows the namespaces the SWE harness
  jails the code under test in, which Docker's default forbids. Only the verifier's inherited descriptor can write the result; the judged
  state is a different, read-only mount, stdout is never parsed, and the folder is created per
  run and never shown to the agent. The caller gets the bytes as `ExecResult.result`.

Requirements: the server runs on the engine's host as root (bind mounts are host paths; the
cgroup and `/proc` are read from the host). Inside containers the server uses the `local` backend
instead (see `docker/README.md`).
"""

from __future__ import annotations

from envhub.errors import SandboxOOM
from envhub.sandbox.docker.backend import DockerBackend
from envhub.sandbox.docker.engine import Engine
from envhub.sandbox.docker.sandbox import DockerSandbox
from envhub.sandbox.docker.settings import DockerSettings

__all__ = ["DockerBackend", "DockerSandbox", "DockerSettings", "Engine", "SandboxOOM"]
