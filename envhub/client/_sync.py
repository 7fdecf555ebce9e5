"""The blocking client (httpx)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

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


class EnvClient:
    """A blocking client for one envhub server.

    `api_key` (else `ENVHUB_API_KEY`) goes as `Authorization: Bearer` on every call; without one
    the client sends a random token of its own, which owns its sessions on a server without keys.
    """

    def __init__(self, base_url: str = "http://127.0.0.1:8000", *, timeout: float = 300.0, retries: int = 3,
                 transport: httpx.BaseTransport | None = None, api_key: str | None = None) -> None:
        bearer, self._keyed = credential(api_key)
        self._http = httpx.Client(base_url=base_url, timeout=timeout, transport=transport,
                                  headers={"Authorization": f"Bearer {bearer}"})
        self.retries = retries

    def _call(self, method: str, path: str, json: Any = None) -> Any:
        attempt = 0
        while True:
            try:
                r = self._http.request(method, path, json=json)
            except httpx.TransportError as exc:
                err: BaseException = connection_failed(exc, str(self._http.base_url).rstrip("/") + path)
            else:
                if r.status_code < 400:
                    return None if r.status_code == 204 else r.json()
                err = error_from(r.status_code, _json(r), r.headers.get("retry-after"))
            if attempt >= self.retries or not should_retry(err):
                raise explain(err, self._keyed)
            time.sleep(backoff(attempt, err))
            attempt += 1

    # -- registry ---------------------------------------------------------------------------------
    def envs(self) -> list[dict[str, Any]]:
        return self._call("GET", "/v1/envs")["envs"]

    def tasks(self, **filters: Any) -> list[dict[str, Any]]:
        query = httpx.QueryParams({k: v for k, v in filters.items() if v is not None})
        return self._call("GET", f"/v1/tasks?{query}")["tasks"]

    def episodes(self, **filters: Any) -> dict[str, Any]:
        """Recorded episodes, newest first: `{episodes, total}`; filters env, task_id, policy_version,
        harness, failure_class, limit, offset."""
        query = httpx.QueryParams({k: v for k, v in filters.items() if v is not None})
        return self._call("GET", f"/v1/episodes?{query}")

    def episode(self, episode_id: str, **params: Any) -> dict[str, Any]:
        """One episode with its checks and trajectory (`step_offset`, `step_limit`)."""
        query = httpx.QueryParams({k: v for k, v in params.items() if v is not None})
        return self._call("GET", f"/v1/episodes/{episode_id}?{query}")

    def health(self) -> dict[str, Any]:
        return self._call("GET", "/health")

    # -- training runs ----------------------------------------------------------------------------
    def create_run(self, run_id: str | None = None, config: dict[str, Any] | None = None) -> dict[str, Any]:
        """A run of this client's credential (`{id, created_at, config, steps}`); its id is `run_id`, or
        one chosen here. Pass the id to resets (`run_id=`) to count their episodes in the run."""
        return self._call("POST", "/v1/runs", run_body(run_id, config))

    def report_step(self, run_id: str, step: int, figures: dict[str, Any],
                    policy_version: str | None = None) -> dict[str, Any]:
        """One trainer step's figures (numbers by name; a histogram as a map); again replaces them."""
        return self._call("POST", f"/v1/runs/{run_id}/steps", run_step_body(step, figures, policy_version))

    def get_run(self, run_id: str) -> dict[str, Any]:
        """The run with its step reports and the figures the hub computes from its episodes."""
        return self._call("GET", f"/v1/runs/{run_id}")

    def list_runs(self, limit: int | None = None, offset: int | None = None) -> dict[str, Any]:
        """This credential's runs, newest first: `{runs, total}` (every run for an admin key)."""
        query = httpx.QueryParams({k: v for k, v in {"limit": limit, "offset": offset}.items() if v is not None})
        return self._call("GET", f"/v1/runs?{query}")

    # -- sessions ---------------------------------------------------------------------------------
    def reset(self, env: str, task_id: str | None = None, seed: int | None = None, **extra: Any) -> SessionCreated:
        body = reset_body(env, task_id, seed, **extra)
        return SessionCreated.model_validate(self._call("POST", "/v1/sessions", body))

    def step(self, session_id: str, tool: str | ToolCall, **arguments: Any) -> StepResult:
        return StepResult.model_validate(
            self._call("POST", f"/v1/sessions/{session_id}/step", step_body(tool, arguments)))

    def verify(self, session_id: str, keep_state: bool = False) -> VerifyResult:
        """The episode's verdict; `keep_state` keeps the judged state on the hub for `reverify`."""
        query = "?keep_state=true" if keep_state else ""
        return VerifyResult.model_validate(self._call("POST", f"/v1/sessions/{session_id}/verify{query}", {}))

    def fork(self, session_id: str, n: int = 1) -> list[SessionCreated]:
        """`n` new sessions, each a copy of this one at its current step (close each when done)."""
        return Forked.model_validate(self._call("POST", f"/v1/sessions/{session_id}/fork", {"n": n})).sessions

    def snapshot(self, session_id: str) -> SnapshotInfo:
        """Keep a copy of this live episode at its current step; `reset(env, from_snapshot=id)` starts from it."""
        return SnapshotInfo.model_validate(self._call("POST", f"/v1/sessions/{session_id}/snapshot", {}))

    def snapshots(self) -> list[SnapshotInfo]:
        """This credential's live snapshots, newest first."""
        return SnapshotList.model_validate(self._call("GET", "/v1/snapshots")).snapshots

    def delete_snapshot(self, snapshot_id: str) -> None:
        self._call("DELETE", f"/v1/snapshots/{snapshot_id}")

    def reverify(self, session_id: str) -> Reverified:
        """Judge a verified episode's final state again: both verdicts and whether they differ (the
        hub counts it in the episode's run as `verifier_disagreement`; the episode keeps its verdict)."""
        return Reverified.model_validate(self._call("POST", f"/v1/sessions/{session_id}/reverify", {}))

    def state(self, session_id: str) -> SessionState:
        return SessionState.model_validate(self._call("GET", f"/v1/sessions/{session_id}"))

    def close_session(self, session_id: str) -> None:
        self._call("DELETE", f"/v1/sessions/{session_id}")

    @contextmanager
    def session(self, env: str, task_id: str | None = None, seed: int | None = None, **extra: Any) -> Iterator[Session]:
        """An episode that is always closed, whatever happens inside the block."""
        created = self.reset(env, task_id, seed, **extra)
        try:
            yield Session(self, created)
        finally:
            self.close_session(created.session_id)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> EnvClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Session:
    """One episode bound to its client."""

    def __init__(self, client: EnvClient, created: SessionCreated) -> None:
        self.client = client
        self.created = created
        self.id = created.session_id

    def step(self, tool: str | ToolCall, **arguments: Any) -> StepResult:
        return self.client.step(self.id, tool, **arguments)

    def verify(self, keep_state: bool = False) -> VerifyResult:
        return self.client.verify(self.id, keep_state)

    def reverify(self) -> Reverified:
        return self.client.reverify(self.id)

    def snapshot(self) -> SnapshotInfo:
        return self.client.snapshot(self.id)

    def fork(self, n: int = 1) -> list[Session]:
        """`n` sessions that go on from this one's current state (the caller closes them)."""
        return [Session(self.client, created) for created in self.client.fork(self.id, n)]

    def state(self) -> SessionState:
        return self.client.state(self.id)


def _json(r: httpx.Response) -> Any:
    try:
        return r.json()
    except ValueError:
        return {"detail": r.text[:500]}
