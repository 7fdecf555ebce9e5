"""The shell protocol both sandbox backends share, against a plain bash (no sandbox needed)."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import time

import pytest

from envhub.errors import AgentError, ShellWedged
from envhub.sandbox.process import SHELL
from envhub.sandbox.shell import Clip, Reply, converse, frame

#: Looks like a framing marker; the framing itself always uses a fresh random one, as the backends do.
LOOKALIKE = "0123456789abcdef01234567"


@pytest.fixture
async def bash():
    proc = await asyncio.create_subprocess_exec(*SHELL, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.STDOUT, start_new_session=True)
    yield proc
    _kill_group(proc)
    await proc.wait()


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the shell and whatever it left running
    except ProcessLookupError:
        pass


async def _run(proc: asyncio.subprocess.Process, command: str, *, timeout_s: float = 10, max_output: int = 64_000,
               grace_s: float = 5) -> tuple[Reply, list[str]]:
    """One command through the shared protocol; the hooks only record that they were called."""
    called: list[str] = []

    async def died() -> Exception:
        return RuntimeError(f"shell died (status {proc.returncode})")

    async def hard_kill() -> None:
        called.append("hard_kill")
        _kill_group(proc)
        await proc.wait()

    marker = secrets.token_hex(12)
    reply = await converse(proc, frame(command, marker), marker, deadline=time.monotonic() + timeout_s,
                           max_output=max_output, grace_s=grace_s, kill_new=lambda: called.append("kill_new"),
                           died=died, hard_kill=hard_kill)
    return reply, called


# Each text must come back byte for byte: a framing that ends its here-document early, expands,
# unquotes or strips the command, or takes output for its status line, changes it.
TEXTS = {
    "marker-looking lines": f"\n{LOOKALIKE}:0\n{LOOKALIKE}\n{LOOKALIKE}:\n:0",
    "here-document terminators": "EOF\n'EOF'\n__envhub_cmd\n__TEXT_\n)\n}",
    "quotes": "single ' double \" back ` dollar $HOME $(echo no) ${x:-no} $'\\n'",
    "backslashes": "a\\b\\\\c \\n \\t \\\\\\' \\$HOME end\\",
    "surrounding blanks": "  \t leading and trailing \t  ",
    "no trailing newline": "first line\nlast line",
}


@pytest.mark.parametrize("name", list(TEXTS))
async def test_text_in_a_command_round_trips_with_its_status(bash, name):
    text = TEXTS[name]
    # The text travels inside the command as a quoted here-document of its own and comes back
    # through cat; the last line is output without a newline, right before the status line.
    command = f"cat <<'__TEXT__'\n{text}\n__TEXT__\nprintf %s 'no newline'; (exit 7)"
    reply, called = await _run(bash, command)
    assert reply.output == f"{text}\nno newline"
    assert reply.status == 7 and not reply.timed_out and called == []


async def test_eval_gets_the_command_unaltered(bash):
    command = "printf '%s|' 'a b' \"c\\\"d\" a\\\\b $'e\\tf' \"$((6 * 7))\"\n# a last line without newline"
    reply, _ = await _run(bash, command)
    assert reply.output == 'a b|c"d|a\\b|e\tf|42|'
    assert reply.status == 0


async def test_status_and_shell_state_persist(bash):
    await _run(bash, "cd /tmp && export KEPT=yes")
    reply, _ = await _run(bash, 'echo "$PWD $KEPT"; false')
    assert reply.output == "/tmp yes\n"
    assert reply.result(time.monotonic()).exit_code == 1


def test_a_nul_byte_is_refused():
    with pytest.raises(AgentError, match="NUL"):
        frame("echo a\0b", secrets.token_hex(12))


async def test_at_the_deadline_new_processes_are_killed_and_no_exit_code_is_kept(bash):
    reply, called = await _run(bash, "sleep 0.8; (exit 3)", timeout_s=0.3)
    assert called == ["kill_new"] and reply.timed_out
    assert reply.status == 3  # (the hook killed nothing, so the shell finished within its grace)
    assert reply.result(time.monotonic()).exit_code is None


async def test_a_wedged_shell_is_hard_killed_after_the_grace(bash):
    started = time.monotonic()
    with pytest.raises(ShellWedged):
        await _run(bash, "sleep 30", timeout_s=0.3, grace_s=0.3)
    assert time.monotonic() - started < 10
    assert bash.returncode is not None


async def test_a_dead_shell_raises_what_died_says(bash):
    with pytest.raises(RuntimeError, match="shell died"):
        await _run(bash, "exit 9")


async def test_a_flood_is_stopped_and_clipped(bash):
    reply, called = await _run(bash, "head -c 200000 /dev/zero | tr '\\0' x", max_output=1000)
    assert "kill_new" in called  # past 16x the limit
    assert reply.truncated and reply.output.startswith("x" * 500) and len(reply.output) < 1100


def test_clip_keeps_head_and_tail():
    clip = Clip(10)
    for chunk in (b"abc", b"defgh", b"ijklmnop", b"qrstuvwxyz"):
        clip.add(chunk)
    assert clip.truncated
    assert clip.text() == "abcde\n[... 16 bytes of output omitted ...]\nvwxyz"
