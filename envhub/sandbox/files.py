"""File tools' reads and writes, judged inside the agent's own sandbox.

Every tool that takes a file path from the agent (terminal's `read_file`/`write_file`, swe's
editor, the skins' editors) reaches the file through the sandbox's shell, never from the host:
a path means what it means to the agent (`/etc/shadow` is the sandbox's, unreadable to it; a
symlink cannot lead to the host). What the path names is still the agent's to choose: a FIFO
(a read or a write would block), a device (`/dev/zero` never ends), a symlink loop, a kernel
pseudo-file (`/proc/self/mem` fails with EIO), a folder, a file too big to show. The commands here
look at the type with the shell's own tests before anything opens the path, read at most
`limit + 1` bytes, and answer a refusal with the status `REFUSED` and one last line saying why
(the OS's error text where there is one); `refusal` makes that the agent's error. Never a crash,
never a hang, and the shell is untouched: each command is a subshell of its own.
"""

from __future__ import annotations

import base64
import shlex
from dataclasses import dataclass

from envhub.errors import AgentError

#: The exit status of a refused path; the output's last line is the reason.
REFUSED = 86
#: Filesystems whose files are the kernel's, not data: reading one fails (`/proc/self/mem`: EIO),
#: never ends, or answers about the reader. Names as `stat -f -c %T` prints them.
PSEUDO_FS = ("proc", "sysfs", "debugfs", "tracefs", "securityfs", "cgroupfs", "cgroup2fs", "bpf_fs", "configfs",
             "efivarfs", "pstorefs")

# `${e##*: }` keeps what follows the last ": " of an error line: the OS's error text
# (`bash: line 3: /etc/shadow: Permission denied` -> `Permission denied`).
_TYPES = "".join(f"[ -{test} \"$p\" ] && {{ echo 'is {kind}, not a regular file'; exit {REFUSED}; }}; "
                 for test, kind in (("p", "a FIFO"), ("c", "a character device"), ("b", "a block device"),
                                    ("S", "a socket")))
_PSEUDO = (
    f"fs=$(stat -L -f -c %T -- \"$p\" 2>/dev/null); case $fs in {'|'.join(PSEUDO_FS)}) "
    f"echo \"is a kernel pseudo-file ($fs), not a regular file\"; exit {REFUSED};; esac; "
)
# Opening a path that does not exist cannot block, and the error names why it is not there
# (No such file or directory, Too many levels of symbolic links, Not a directory, Permission denied).
_WHY_MISSING = "e=$( { : <\"$p\"; } 2>&1 ); e=${e##*: }; "


def _existing(path: str, *, folders: bool) -> str:
    """The checks every read starts with: `path` exists, is no kernel file, and is a regular file
    (or, with `folders`, a folder: then `dir` is printed and the command ends there)."""
    on_dir = "echo dir; exit 0" if folders else f"echo 'Is a directory'; exit {REFUSED}"
    return (f"p={shlex.quote(path)}; "
            f"if [ ! -e \"$p\" ]; then {_WHY_MISSING}echo \"${{e:-No such file or directory}}\"; exit {REFUSED}; fi; "
            f"{_PSEUDO}[ -d \"$p\" ] && {{ {on_dir}; }}; {_TYPES}"
            f"[ -f \"$p\" ] || {{ echo 'is not a regular file'; exit {REFUSED}; }}; "
            # A regular file opens at once; this names a permission error before anything is read.
            f"e=$( {{ : <\"$p\"; }} 2>&1 ) || {{ echo \"${{e##*: }}\"; exit {REFUSED}; }}; ")


def _stream(path: str, *, limit: int, folders: bool, head: str, sink: str) -> str:
    """The checks, then `head` on a line of its own and at most `limit + 1` bytes of `path` through
    `sink`; a read error (EIO mid-file) ends it `REFUSED` with the OS's error text."""
    return (f"( {_existing(path, folders=folders)}echo {head}; set -o pipefail; exec 3>&1; "
            f"e=$( {{ head -c {limit + 1} -- \"$p\" | {sink} >&3; }} 2>&1 ) || "
            f"{{ printf '\\n%s\\n' \"${{e##*: }}\"; exit {REFUSED}; }} )")


def read_command(path: str, *, limit: int, folders: bool = False) -> str:
    """Prints `file` and then at most `limit + 1` bytes of `path` as base64 (or `dir` for a folder
    where `folders`); or exits `REFUSED` with the reason."""
    return _stream(path, limit=limit, folders=folders, head="file", sink="base64 -w0")


def size_command(path: str, *, limit: int, folders: bool = False) -> str:
    """Prints `size` and then the size of `path`, counted up to `limit + 1` bytes (or `dir` for a
    folder where `folders`); or exits `REFUSED` with the reason."""
    return _stream(path, limit=limit, folders=folders, head="size", sink="wc -c")


def check_command(path: str, *, folders: bool = True) -> str:
    """Prints `regular` for a readable regular file of any size, or `dir` for a folder where
    `folders` (what a search may go through); or exits `REFUSED` with the reason."""
    return f"( {_existing(path, folders=folders)}echo regular )"


def write_command(path: str, data: bytes) -> str:
    """Writes `data` to `path` (its folders made as needed) where `path` is a regular file or
    nothing yet; else exits `REFUSED` with the reason."""
    encoded = base64.b64encode(data).decode()
    return (f"( p={shlex.quote(path)}; "
            f"if [ -e \"$p\" ]; then {_PSEUDO}[ -d \"$p\" ] && {{ echo 'Is a directory'; exit {REFUSED}; }}; {_TYPES}"
            f"[ -f \"$p\" ] || {{ echo 'is not a regular file'; exit {REFUSED}; }}; "
            f"else {_WHY_MISSING}case $e in 'No such file or directory'|'') ;; "
            f"*) echo \"$e\"; exit {REFUSED};; esac; fi; "
            f"e=$(mkdir -p -- \"$(dirname -- \"$p\")\" 2>&1) || {{ echo \"${{e##*: }}\"; exit {REFUSED}; }}; "
            f"e=$( {{ printf %s {encoded} | base64 -d >\"$p\"; }} 2>&1 ) || "
            f"{{ echo \"${{e##*: }}\"; exit {REFUSED}; }} )")


@dataclass(frozen=True)
class Found:
    """What a read, size or check command found: a `file` (its `size`, and its bytes for a read) or
    a `dir`."""

    kind: str
    size: int = 0
    data: bytes | None = None


def refusal(verb: str, path: str, output: str, *, timed_out: bool = False) -> AgentError:
    """The agent's error for a refused (or timed-out) file command, naming the reason."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    reason = "timed out (is something holding it?)" if timed_out else (lines[-1][-300:] if lines else "failed")
    return AgentError(f"cannot {verb} {path}: {reason}", path=path, reason=reason)


def found(verb: str, path: str, output: str, exit_code: int | None, *, limit: int, timed_out: bool = False) -> Found:
    """What a read, size or check command answered; the agent's error for a refusal, or for a file over
    `limit` bytes (never read past `limit + 1`)."""
    if timed_out or exit_code != 0:
        raise refusal(verb, path, output, timed_out=timed_out)
    head, _, rest = output.strip().partition("\n")
    if head in ("dir", "regular"):
        return Found("dir" if head == "dir" else "file")
    if head not in ("file", "size"):
        raise refusal(verb, path, output)
    # The payload is one line; the backend may add a note after it (a runaway cleared meanwhile).
    payload = rest.strip().split("\n", 1)[0].strip()
    try:
        data = base64.b64decode(payload, validate=True) if head == "file" else None
        size = len(data) if data is not None else int(payload or 0)
    except ValueError:  # binascii.Error too: the shell said something else (a command of the agent's?)
        raise refusal(verb, path, output) from None
    if size > limit:
        raise AgentError(f"cannot {verb} {path}: it is over this tool's limit of {limit} bytes; read parts of it "
                         "with the shell (head, tail, sed -n)", path=path, reason="too large")
    return Found("file", size, data)
