"""The security suite: one test per attack, one module per family (`test_db.py` is family db).

Each attack is played as a policy would play it, through the real session manager (tool calls,
then verify), and asserts what the agent deserves: reward 0, and a trainable failure class
(`ok`, `agent_error` or `agent_timeout`) wherever the agent caused the fault, so that a policy
can never escape a penalty by cheating or crashing. Every test has a one-line docstring: it is
the attack's row in `docs/security.md` (`make security-table`, `scripts/security_table.py`).

Sampling: the whole suite runs by default; `ENVHUB_SECURITY_SAMPLE=N` keeps a sample of N
attacks drawn with the day of the year as seed (CI), and `ENVHUB_SECURITY_REPORT=path` writes
each attack's outcome as JSON (the table's source).

The protocol and access attacks (`test_protocol.py`, `test_access.py`) use real servers with keys
off and on, a raw WebSocket client that can send what no well-behaved library would (binary,
invalid UTF-8, bad fragments), and a log trap that records every error or traceback logged.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import logging
import os
import random
import shutil
import socket
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from envhub.config import REPO_ROOT, Settings
from envhub.core.auth import new_key
from envhub.core.hub import Hub
from envhub.errors import FailureClass
from envhub.server.thread import ThreadedServer, serve_in_thread
from envhub.spec import ResetRequest, StepRequest, StepResult, ToolCall, VerifyResult
from envhub.verify import runtime
from tests.conftest import make_settings, running_hub
from tests.store.conftest import data_dir, run_episode, verifier_site  # noqa: F401 - the store's fixtures, reused

#: The classes a fault the agent caused may carry: judged, with its reward, in the batch.
TRAINABLE = {FailureClass.ok, FailureClass.agent_error, FailureClass.agent_timeout}

_outcomes: list[dict[str, str]] = []


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    size = int(os.environ.get("ENVHUB_SECURITY_SAMPLE") or 0)
    mine = [i for i in items if _is_attack(i)]
    if not size or size >= len(mine):
        return
    keep = set(random.Random(dt.date.today().timetuple().tm_yday).sample(range(len(mine)), size))
    dropped = {id(i) for n, i in enumerate(mine) if n not in keep}
    config.hook.pytest_deselected(items=[i for i in items if id(i) in dropped])
    items[:] = [i for i in items if id(i) not in dropped]


def _is_attack(item: pytest.Item) -> bool:
    return Path(str(item.fspath)).parent == Path(__file__).parent


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        failed_setup = report.when == "setup" and report.outcome == "failed"
        _outcomes.append({"nodeid": report.nodeid, "outcome": "error" if failed_setup else report.outcome})


def pytest_sessionfinish(session: pytest.Session) -> None:
    dest = os.environ.get("ENVHUB_SECURITY_REPORT")
    if not dest:
        return
    docs = {}
    for item in session.items:
        if _is_attack(item):
            doc = (getattr(item, "obj", None).__doc__ or "").strip().splitlines()
            docs[item.nodeid] = {"family": Path(str(item.fspath)).stem.removeprefix("test_"),
                                 "attack": doc[0] if doc else item.name}
    rows = [{**docs[o["nodeid"]], **o} for o in _outcomes if o["nodeid"] in docs]
    Path(dest).write_text(json.dumps(rows, indent=1, ensure_ascii=False))


# --- fixtures ----------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def security_data_dir() -> Iterator[Path]:
    """A private, world-traversable data folder (sandbox uids reach it) that borrows the
    installed verifier site, so the suite never races other servers over the shared copy."""
    from envhub.config import get_settings

    root = Path(tempfile.mkdtemp(prefix="envhub-security-", dir="/var/tmp"))
    root.chmod(0o755)
    shared = get_settings().data_dir
    runtime.install(shared)  # no-op when installed and current
    (root / "verifier").mkdir()
    (root / "verifier").chmod(0o755)
    os.symlink(runtime.site_dir(shared), runtime.site_dir(root))
    yield root
    shutil.rmtree(root, ignore_errors=True)


def family_hub(family: str) -> Callable[..., Any]:
    """A module-scoped fixture: an in-process hub serving `family` over the repo's tasks."""

    @pytest_asyncio.fixture(loop_scope="module", scope="module")
    async def fixture(security_data_dir: Path) -> AsyncIterator[Hub]:
        async with running_hub(Settings(data_dir=security_data_dir, tasks_dir=REPO_ROOT / "tasks",
                                        families=[family], store_enabled=False)) as hub:
            yield hub

    return fixture


Action = dict[str, Any] | Callable[[list[StepResult]], dict[str, Any]]


async def play(hub: Hub, task_id: str, actions: list[Action]) -> tuple[VerifyResult, list[StepResult]]:
    """Run the attack's tool calls on a fresh session of `task_id`, then verify. An action may be
    a function of the steps so far (to use what an earlier call returned)."""
    m = hub.manager
    created = await m.create(ResetRequest(env=task_id.split("/", 1)[0], task_id=task_id))
    steps: list[StepResult] = []
    try:
        for a in actions:
            a = a(steps) if callable(a) else a
            steps.append(await m.step(created.session_id, StepRequest(action=ToolCall.model_validate(a))))
        return await m.verify(created.session_id), steps
    finally:
        await m.close(created.session_id)


def oracle(hub: Hub, task_id: str) -> list[dict[str, Any]]:
    family = task_id.split("/", 1)[0]
    return [a.model_dump() for a in hub.families[family].oracle_actions(hub.catalog.get(task_id))]


def assert_penalised(result: VerifyResult) -> None:
    """The attack earned nothing, and the verdict stays in the training batch."""
    failed = [f"{c.id}: {c.message[:120]}" for c in result.checks if not c.passed]
    assert result.failure_class in TRAINABLE, f"masked as {result.failure_class.value}: {result.detail[:300]}"
    assert result.reward == 0.0 and not result.passed, f"the attack earned {result.reward} (failed: {failed})"


# -- protocol and access: servers, a raw WebSocket client, a log trap ----------------------------

SECRET, KEY = new_key("trainer", max_sessions=3)
ECHO_ONLY_SECRET, ECHO_ONLY = new_key("echo-only", families=["echo"])


class LogTrap(logging.Handler):
    """Every record at ERROR or with a traceback, from the server's loggers."""

    LOGGERS = ("uvicorn", "uvicorn.error", "envhub", "fastapi", "starlette")

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.bad: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR or record.exc_info:
            self.bad.append(f"{record.name}: {record.getMessage()[:300]}")

    def __enter__(self) -> LogTrap:
        for name in self.LOGGERS:
            logging.getLogger(name).addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        for name in self.LOGGERS:
            logging.getLogger(name).removeHandler(self)


@pytest.fixture
def log_trap() -> Iterator[LogTrap]:
    with LogTrap() as trap:
        yield trap


@pytest.fixture(scope="session")
def open_server() -> Iterator[ThreadedServer]:
    """Keys off (loopback): sessions belong to client tokens."""
    with serve_in_thread(make_settings(families=["echo"], max_sessions=100_000, auth="off")) as server:
        yield server


@pytest.fixture(scope="session")
def keyed_server() -> Iterator[ThreadedServer]:
    """Keys on: a key with a quota of 3 sessions, and one limited to the echo family."""
    entries = ";".join([KEY.entry(), ECHO_ONLY.entry()])
    with serve_in_thread(make_settings(families=["echo", "terminal"], auth="on", api_keys=entries)) as server:
        yield server


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


class RawWs:
    """A minimal RFC 6455 client over a plain socket: frames exactly as given."""

    def __init__(self, port: int, path: str, headers: dict[str, str] | None = None, timeout: float = 30) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        self.sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                          f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                          f"{extra}\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                break
            head += chunk
        self.status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.1 ") else 0
        self.handshake = head
        self._buf = head.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in head else b""

    def send(self, opcode: int, payload: bytes, fin: bool = True) -> None:
        mask = os.urandom(4)
        n = len(payload)
        head = bytes([(0x80 if fin else 0) | opcode])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + n.to_bytes(2, "big")
        else:
            head += bytes([0x80 | 127]) + n.to_bytes(8, "big")
        key = (mask * (n // 4 + 1))[:n]
        masked = (int.from_bytes(payload, "big") ^ int.from_bytes(key, "big")).to_bytes(n, "big")
        try:
            self.sock.sendall(head + mask + masked)
        except OSError:
            pass  # the server closed already; recv() reports it

    def text(self, data: str | bytes) -> None:
        self.send(0x1, data.encode() if isinstance(data, str) else data)

    def _read(self, n: int) -> bytes | None:
        while len(self._buf) < n:
            try:
                chunk = self.sock.recv(65536)
            except OSError:
                return None
            if not chunk:
                return None
            self._buf += chunk
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def recv(self) -> tuple[int, bytes] | None:
        """The next frame (opcode, payload), or None when the connection ended."""
        head = self._read(2)
        if head is None:
            return None
        n = head[1] & 0x7F
        if n == 126:
            n = int.from_bytes(self._read(2) or b"\0\0", "big")
        elif n == 127:
            n = int.from_bytes(self._read(8) or b"\0" * 8, "big")
        payload = self._read(n)
        return None if payload is None else (head[0] & 0x0F, payload)

    def close(self) -> None:
        self.sock.close()
