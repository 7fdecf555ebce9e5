"""The async client, on aiohttp: httpx's async connection pool collapsed at high concurrency.

Given a `transport` (e.g. `envhub.client.asgi.InProcess(app).async_transport()`), it speaks
through httpx instead, as the blocking client does: the way to run it in-process."""

from __future__ import annotations

import asyncio
import json as jsonlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import httpx

from envhub.client._base import (
    backoff,
    connection_failed,
    credential,
    error_from,
    explain,
    reset_body,
    run_body,
    run_step_body,
    should_retry,
    step_body,
)
from envhub.spec import (
    Forked,
    Reverified,
    SessionCreated,
    SessionState,
    SnapshotInfo,
    SnapshotList,
    StepResult,
    ToolCall,
    VerifyResult,
)


class AsyncEnvClient:
    """The async twin of `EnvClient`: same methods, awaited; `aclose` instead of `close`."""

    def __init__(self, base_url: str = "http://127.0.0.1:8000", *, timeout: float = 300.0, retries: int = 3,
                 max_connections: int = 256, api_key: str | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        bearer, self._keyed = credential(api_key)
        self._headers = {"Authorization": f"Bearer {bearer}"}
        self.retries = retries
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._limit = max_connections
        self._http: aiohttp.ClientSession | None = None
        self._transport = transport
        self._via_transport: httpx.AsyncClient | None = None

    def _session(self) -> aiohttp.ClientSession:
        if self._http is None:
            self._http = aiohttp.ClientSession(timeout=self._timeout, headers=self._headers,
                                               connector=aiohttp.TCPConnector(limit=self._limit))
        return self._http

    async def _send(self, method: str, path: str, json: Any, query: dict[str, str]) -> tuple[int, str | None, bytes]:
        """(status, Retry-After, body) of one request."""
        if self._transport is not None:
            if self._via_transport is None:
                self._via_transport = httpx.AsyncClient(base_url=self.base_url, transport=self._transport,
                                                        headers=self._headers, timeout=self._timeout.total)
            r = await self._via_transport.request(method, path, json=json, params=query)
            return r.status_code, r.headers.get("retry-after"), r.content
        async with self._session().request(method, self.base_url + path, json=json, params=query) as resp:
            return resp.status, resp.headers.get("retry-after"), await resp.read()

    async def _call(self, method: str, path: str, json: Any = None, params: dict[str, Any] | None = None) -> Any:
        attempt = 0
        query = {k: str(v) for k, v in (params or {}).items() if v is not None}
        while True:
            try:
                status, retry_after, raw = await self._send(method, path, json, query)
                if status < 400:
                    return None if status == 204 or not raw else jsonlib.loads(raw)
                try:
                    body = jsonlib.loads(raw)
                except ValueError:
                    body = {"detail": raw.decode("utf-8", "replace")[:500]}
                err: BaseException = error_from(status, body, retry_after)
            except (TimeoutError, aiohttp.ClientError, httpx.TransportError) as exc:
                err = connection_failed(exc, self.base_url + path)
            if attempt >= self.retries or not should_retry(err):
                raise explain(err, self._keyed)
            await asyncio.sleep(backoff(attempt, err))
            attempt += 1

    async def envs(self) -> list[dict[str, Any]]:
        return (await self._call("GET", "/v1/envs"))["envs"]

    async def tasks(self, **filters: Any) -> list[dict[str, Any]]:
        """Tasks, filtered as `/v1/tasks` is: env, tag, difficulty, validation, q, limit, offset."""
        return (await self._call("GET", "/v1/tasks", params=filters))["tasks"]

    async def episodes(self, **filters: Any) -> dict[str, Any]:
        """Recorded episodes, newest first: `{episodes, total}`; filters env, task_id, policy_version,
        harness, failure_class, limit, offset."""
        return await self._call("GET", "/v1/episodes", params=filters)

    async def episode(self, episode_id: str, **params: Any) -> dict[str, Any]:
        """One episode with its checks and trajectory (`step_offset`, `step_limit`)."""
        return await self._call("GET", f"/v1/episodes/{episode_id}", params=params)

    async def health(self) -> dict[str, Any]:
        return await self._call("GET", "/health")

    async def create_run(self, run_id: str | None = None, config: dict[str, Any] | None = None) -> dict[str, Any]:
        """A run of this client's credential (`{id, created_at, config, steps}`); its id is `run_id`, or
        one chosen here. Pass the id to resets (`run_id=`) to count their episodes in the run."""
        return await self._call("POST", "/v1/runs", run_body(run_id, config))

    async def report_step(self, run_id: str, step: int, figures: dict[str, Any],
                          policy_version: str | None = None) -> dict[str, Any]:
        """One trainer step's figures (numbers by name; a histogram as a map); again replaces them."""
        return await self._call("POST", f"/v1/runs/{run_id}/steps", run_step_body(step, figures, policy_version))

    async def get_run(self, run_id: str) -> dict[str, Any]:
        """The run with its step reports and the figures the hub computes from its episodes."""
        return await self._call("GET", f"/v1/runs/{run_id}")

    async def list_runs(self, limit: int | None = None, offset: int | None = None) -> dict[str, Any]:
        """This credential's runs, newest first: `{runs, total}` (every run for an admin key)."""
        return await self._call("GET", "/v1/runs", params={"limit": limit, "offset": offset})

    async def reset(self, env: str, task_id: str | None = None, seed: int | None = None,
                    **extra: Any) -> SessionCreated:
        return SessionCreated.model_validate(
            await self._call("POST", "/v1/sessions", reset_body(env, task_id, seed, **extra)))

    async def step(self, session_id: str, tool: str | ToolCall, **arguments: Any) -> StepResult:
        return StepResult.model_validate(
            await self._call("POST", f"/v1/sessions/{session_id}/step", step_body(tool, arguments)))

    async def verify(self, session_id: str, keep_state: bool = False) -> VerifyResult:
        """The episode's verdict; `keep_state` keeps the judged state on the hub for `reverify`."""
        return VerifyResult.model_validate(await self._call("POST", f"/v1/sessions/{session_id}/verify", {},
                                                            params={"keep_state": "true"} if keep_state else None))

    async def fork(self, session_id: str, n: int = 1) -> list[SessionCreated]:
        """`n` new sessions, each a copy of this one at its current step (close each when done)."""
        return Forked.model_validate(await self._call("POST", f"/v1/sessions/{session_id}/fork", {"n": n})).sessions

    async def snapshot(self, session_id: str) -> SnapshotInfo:
        """Keep a copy of this live episode at its current step; `reset(env, from_snapshot=id)` starts from it."""
        return SnapshotInfo.model_validate(await self._call("POST", f"/v1/sessions/{session_id}/snapshot", {}))

    async def snapshots(self) -> list[SnapshotInfo]:
        """This credential's live snapshots, newest first."""
        return SnapshotList.model_validate(await self._call("GET", "/v1/snapshots")).snapshots

    async def delete_snapshot(self, snapshot_id: str) -> None:
        await self._call("DELETE", f"/v1/snapshots/{snapshot_id}")

    async def reverify(self, session_id: str) -> Reverified:
        """Judge a verified episode's final state again: both verdicts and whether they differ (the
        hub counts it in the episode's run as `verifier_disagreement`; the episode keeps its verdict)."""
        return Reverified.model_validate(await self._call("POST", f"/v1/sessions/{session_id}/reverify", {}))

    async def state(self, session_id: str) -> SessionState:
        return SessionState.model_validate(await self._call("GET", f"/v1/sessions/{session_id}"))

    async def close_session(self, session_id: str) -> None:
        await self._call("DELETE", f"/v1/sessions/{session_id}")

    @asynccontextmanager
    async def session(self, env: str, task_id: str | None = None, seed: int | None = None,
                      **extra: Any) -> AsyncIterator[AsyncSession]:
        created = await self.reset(env, task_id, seed, **extra)
        try:
            yield AsyncSession(self, created)
        finally:
            await self.close_session(created.session_id)

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.close()
            self._http = None
        if self._via_transport is not None:
            await self._via_transport.aclose()
            self._via_transport = None

    async def __aenter__(self) -> AsyncEnvClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class AsyncSession:
    def __init__(self, client: AsyncEnvClient, created: SessionCreated) -> None:
        self.client = client
        self.created = created
        self.id = created.session_id

    async def step(self, tool: str | ToolCall, **arguments: Any) -> StepResult:
        return await self.client.step(self.id, tool, **arguments)

    async def verify(self, keep_state: bool = False) -> VerifyResult:
        return await self.client.verify(self.id, keep_state)

    async def reverify(self) -> Reverified:
        return await self.client.reverify(self.id)

    async def snapshot(self) -> SnapshotInfo:
        return await self.client.snapshot(self.id)

    async def fork(self, n: int = 1) -> list[AsyncSession]:
        """`n` sessions that go on from this one's current state (the caller closes them)."""
        return [AsyncSession(self.client, created) for created in await self.client.fork(self.id, n)]

    async def state(self) -> SessionState:
        return await self.client.state(self.id)
