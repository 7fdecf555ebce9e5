"""Host views of a container's cgroup: its processes, its task count, its OOM kills."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from envhub.errors import EnvError


@dataclass
class Cgroup:
    """The container's memory cgroup folder on the host (v1 or v2)."""

    path: Path
    v2: bool

    @classmethod
    def of(cls, pid: int) -> Cgroup:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
        for line in lines:
            _, controllers, rel = line.split(":", 2)
            if "memory" in controllers.split(","):
                return cls(Path("/sys/fs/cgroup/memory") / rel.lstrip("/"), v2=False)
        for line in lines:
            if line.startswith("0::"):
                return cls(Path("/sys/fs/cgroup") / line[3:].lstrip("/"), v2=True)
        raise EnvError(f"cannot find the memory cgroup of pid {pid}")

    def pids(self) -> set[int]:
        try:
            return {int(p) for p in (self.path / "cgroup.procs").read_text().split()}
        except FileNotFoundError:
            return set()

    def task_count(self) -> int:
        """Threads included: what the pids limit counts."""
        try:
            return len((self.path / ("cgroup.threads" if self.v2 else "tasks")).read_text().split())
        except FileNotFoundError:
            return 0

    def oom_kills(self) -> int:
        name = "memory.events" if self.v2 else "memory.oom_control"
        try:
            for line in (self.path / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except FileNotFoundError:
            pass
        return 0


def ns_pid(host_pid: int) -> int | None:
    """The pid a host process has inside its own pid namespace."""
    try:
        for line in Path(f"/proc/{host_pid}/status").read_text().splitlines():
            if line.startswith("NSpid:"):
                return int(line.split()[-1])
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None

