"""File tools' commands (`envhub.sandbox.files`) in a real sandbox: a hostile path is refused with
the OS's reason before anything opens it, a regular file comes back byte for byte, and the
agent's persistent shell is left as it was."""

import pytest

from envhub.config import get_settings
from envhub.errors import AgentError
from envhub.sandbox import files
from envhub.sandbox.base import SandboxLimits, SandboxSpec
from envhub.sandbox.local import LocalBackend
from envhub.sandbox.shell import RUNAWAY_NOTE

LIMIT = 1024


@pytest.fixture
async def sandbox():
    backend = LocalBackend(get_settings().data_dir / "sandboxes")
    sb = await backend.start(SandboxSpec(template=None, limits=SandboxLimits(processes=64, memory_mb=512)))
    res = await sb.run("mkfifo /tmp/fifo && ln -s b /tmp/a && ln -s a /tmp/b && mkdir /tmp/dir && "
                       "truncate -s 5M /tmp/big && echo x > /tmp/locked && chmod 000 /tmp/locked && "
                       "printf 'caf\\xc3\\xa9\\x00\\xff\\n' > bytes.bin", timeout_s=10)
    assert res.exit_code == 0, res.output
    yield sb
    await sb.close()


REFUSED = {
    "/tmp/fifo": "is a FIFO, not a regular file",
    "/dev/zero": "is a character device, not a regular file",
    "/tmp/a": "Too many levels of symbolic links",
    "/tmp/dir": "Is a directory",
    "/tmp/locked": "Permission denied",
    "/proc/self/mem": "is a kernel pseudo-file (proc), not a regular file",
    "/nowhere": "No such file or directory",
    "bytes.bin/x": "Not a directory",
}


@pytest.mark.parametrize("path", sorted(REFUSED))
async def test_a_hostile_path_is_refused_naming_why(sandbox, path):
    for command in (files.read_command(path, limit=LIMIT), files.size_command(path, limit=LIMIT),
                    files.write_command(path, b"x") if path not in ("/nowhere",) else None):
        if command is None:
            continue
        res = await sandbox.run(command, timeout_s=5)
        assert not res.timed_out and res.exit_code == files.REFUSED, (command, res)
        with pytest.raises(AgentError) as e:
            files.found("read", path, res.output, res.exit_code, limit=LIMIT)
        assert e.value.detail == f"cannot read {path}: {REFUSED[path]}", res.output


async def test_a_file_over_the_limit_is_refused_without_being_read_whole(sandbox):
    res = await sandbox.run(files.read_command("/tmp/big", limit=LIMIT), timeout_s=5, max_output=10 * LIMIT)
    assert not res.truncated  # at most limit + 1 bytes were read
    with pytest.raises(AgentError, match="over this tool's limit of 1024 bytes"):
        files.found("read", "/tmp/big", res.output, res.exit_code, limit=LIMIT)


async def test_a_regular_file_comes_back_byte_for_byte_and_the_shell_is_untouched(sandbox):
    await sandbox.run("p=mine; e=also-mine", timeout_s=5)
    res = await sandbox.run(files.read_command("bytes.bin", limit=LIMIT), timeout_s=5)
    assert files.found("read", "bytes.bin", res.output, res.exit_code, limit=LIMIT).data == b"caf\xc3\xa9\x00\xff\n"
    res = await sandbox.run(files.size_command("bytes.bin", limit=LIMIT), timeout_s=5)
    assert files.found("read", "bytes.bin", res.output, res.exit_code, limit=LIMIT).size == 8
    res = await sandbox.run(files.write_command("new/dir/out.bin", b"\x00\x01"), timeout_s=5)
    assert res.exit_code == 0, res.output
    res = await sandbox.run('echo "$p $e"; od -An -tx1 new/dir/out.bin', timeout_s=5)
    assert res.output.split() == ["mine", "also-mine", "00", "01"]


def test_a_note_after_the_payload_is_not_read_as_the_file():
    """A backend may append a note (a runaway cleared while the command ran): the payload is the
    line before it, never a crash decoding both."""
    found = files.found("read", "f", "file\naGk=" + RUNAWAY_NOTE, 0, limit=LIMIT)
    assert found.data == b"hi"
    with pytest.raises(AgentError):
        files.found("read", "f", "file\nnot base64!" + RUNAWAY_NOTE, 0, limit=LIMIT)
