"""The persistent-shell protocol both sandbox backends speak to a `bash` over its stdin and stdout.

A command is framed as a here-document (see `frame`), the shell runs it and prints a random
marker with the exit status, and `converse` reads until that line comes back. The backends differ
only in how they find and kill processes and classify a dead shell, so those parts come in as
small callables; everything about framing, clipping, deadlines and floods lives here once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from envhub.errors import AgentError, ShellWedged
from envhub.sandbox.base import ExecResult
from envhub.sandbox.spawn import Process

#: How often a backend with an `on_idle` hook is asked to look around while a command is silent.
POLL_S = 0.5
#: How long a shell gets, after its timed-out command's processes were killed, to report back
#: (slow under load). One that does not is wedged by what the agent ran in it (a builtin loop,
#: a blocked read): `ShellWedged`. The session manager waits longer than this (its STEP_GRACE_S).
SHELL_GRACE_S = 10.0
#: What a command's output ends with when a runaway was cleared around the shell while it ran.
RUNAWAY_NOTE = "\n[the sandbox hit its process limit; every process but the shell was killed]"


class Clip:
    """Keeps the head and the tail of a stream within `limit` bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.limit // 2 - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            del self.tail[: max(0, len(self.tail) - self.limit // 2)]

    @property
    def truncated(self) -> bool:
        return self.total > len(self.head) + len(self.tail)

    def text(self) -> str:
        if self.truncated:
            skipped = self.total - len(self.head) - len(self.tail)
            body = bytes(self.head) + f"\n[... {skipped} bytes of output omitted ...]\n".encode() + bytes(self.tail)
        else:
            body = bytes(self.head) + bytes(self.tail)
        return body.decode("utf-8", errors="replace")


def frame(command: str, marker: str) -> bytes:
    """The bytes that make the shell run `command` and then print `\\n<marker>:<status>\\n`.

    The command travels as a here-document read by a builtin: no fork and no decoding process, so
    it runs (or fails visibly) even when the sandbox is at its process limit. The random marker
    ends the document and frames the exit status; no output can fake it. A NUL byte cannot
    travel through `read -d ''` (it would cut the command short), so it is refused instead.
    """
    if "\0" in command:
        raise AgentError("a command cannot contain NUL bytes")
    script = (f"IFS= read -r -d '' __envhub_cmd <<'{marker}'\n{command}\n{marker}\n"
              f'{{ eval "$__envhub_cmd"; }} </dev/null 2>&1; printf "\\n{marker}:%s\\n" "$?"\n')
    return script.encode()


@dataclass
class Reply:
    """What the shell sent back for one command."""

    #: The status the shell printed; kept after a timeout too (a backend may quote it in an error).
    status: int
    output: str
    timed_out: bool
    truncated: bool
    #: `on_idle` cleared a runaway while the command ran.
    cleared: bool

    def result(self, started: float, note: str = "") -> ExecResult:
        """The caller's `ExecResult`: no exit code for a command killed at its deadline."""
        return ExecResult(exit_code=None if self.timed_out else self.status, output=self.output + note,
                          timed_out=self.timed_out, truncated=self.truncated, elapsed_s=time.monotonic() - started)


async def converse(proc: asyncio.subprocess.Process | Process, script: bytes, marker: str, *, deadline: float,
                   max_output: int, grace_s: float, kill_new: Callable[[], None],
                   died: Callable[[], Awaitable[Exception]], hard_kill: Callable[[], Awaitable[None]],
                   on_idle: Callable[[], Awaitable[bool]] | None = None) -> Reply:
    """Send a framed command to the shell `proc` and read its output up to the marker line.

    At `deadline` the command's own processes go (`kill_new`) and the shell gets `grace_s` more
    seconds to report back; one that does not is wedged, so the sandbox goes (`hard_kill`) and
    `ShellWedged` is raised. Output past 16x `max_output` is a flood: the command is killed and
    what it said so far is kept. A shell that exits raises what `died` classifies. With `on_idle`
    the wait wakes every `POLL_S` seconds of silence to call it (it may raise the backend's own
    error, and answers whether it cleared a runaway); without it the wait lasts to the deadline.
    """
    assert proc.stdin and proc.stdout
    try:
        proc.stdin.write(script)
        await proc.stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        await proc.wait()
        raise await died() from None
    clip = Clip(max_output)
    flood_cap = 16 * max_output
    timed_out = cleared = False
    sentinel = b"\n" + marker.encode() + b":"
    pending = bytearray()
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0 and not timed_out:
            timed_out = True
            kill_new()
            deadline = time.monotonic() + grace_s  # for the shell to report back (slow under load)
            continue
        if remaining <= 0:
            # The shell did not come back even after its children died: it is wedged.
            await hard_kill()
            raise ShellWedged("the command timed out and its shell stopped responding (a builtin that never "
                              "returns?); the shell was ended, and later commands fail")
        wait = remaining if on_idle is None else min(remaining, POLL_S)
        try:
            chunk = await asyncio.wait_for(proc.stdout.read(65536), timeout=wait)
        except TimeoutError:
            chunk = None
        if chunk is None:  # silence; outside the `except` so an error from the hook has no timeout context
            if on_idle is not None:
                cleared = await on_idle() or cleared
            continue
        if not chunk:
            await proc.wait()
            raise await died()
        pending += chunk
        idx = pending.find(sentinel)
        if idx >= 0:
            end = pending.find(b"\n", idx + len(sentinel))
            if end < 0:
                continue  # the status line is still arriving
            clip.add(bytes(pending[:idx]))
            status = int(pending[idx + len(sentinel):end] or b"-1")
            return Reply(status=status, output=clip.text(), timed_out=timed_out, truncated=clip.truncated,
                         cleared=cleared)
        # Keep enough bytes to find a sentinel split across reads.
        keep = len(sentinel) + 16
        if len(pending) > keep:
            clip.add(bytes(pending[:-keep]))
            del pending[:-keep]
        if clip.total > flood_cap and not timed_out:
            kill_new()  # output flood: stop it, keep what was said
