"""What both clients share and that does no I/O: request bodies, answer parsing, retry policy."""

from __future__ import annotations

import os
import secrets
import uuid
from typing import Any

from envhub.errors import ERRORS_BY_CODE, ConnectionFailed, EnvhubError, RequestError, Unauthorized, Unavailable
from envhub.spec import ResetRequest, RunCreate, RunStepReport, StepRequest, ToolCall

RETRY_STATUSES = {502, 503, 504}


def credential(api_key: str | None) -> tuple[str, bool]:
    """The Bearer value a client sends, and whether it is a configured key.

    An API key (the argument, else `ENVHUB_API_KEY`); without one, a random client token of this
    client's own, so that on a server without keys its sessions belong to it alone (envhub.core.auth).
    """
    key = api_key or os.environ.get("ENVHUB_API_KEY") or None
    return (key, True) if key else (secrets.token_urlsafe(24), False)


def auth_headers(api_key: str | None = None) -> dict[str, str]:
    """`Authorization` for other clients of an envhub server, e.g. OpenEnv's:
    `GenericEnvClient(base_url=..., headers=auth_headers())` (the key from `ENVHUB_API_KEY`)."""
    return {"Authorization": f"Bearer {credential(api_key)[0]}"}


def reset_body(env: str, task_id: str | None, seed: int | None, **extra: Any) -> dict[str, Any]:
    return ResetRequest(env=env, task_id=task_id, seed=seed, **extra).model_dump(exclude_none=True)


def step_body(tool: str | ToolCall, arguments: dict[str, Any]) -> dict[str, Any]:
    call = tool if isinstance(tool, ToolCall) else ToolCall(tool=tool, arguments=arguments)
    return StepRequest(action=call, idempotency_key=uuid.uuid4().hex).model_dump()


def run_body(run_id: str | None, config: dict[str, Any] | None) -> dict[str, Any]:
    """A run's create body, its id chosen here when not given: a retried create finds the same run."""
    return RunCreate(id=run_id or uuid.uuid4().hex, config=config or {}).model_dump()


def run_step_body(step: int, figures: dict[str, Any], policy_version: str | None) -> dict[str, Any]:
    return RunStepReport(step=step, figures=figures, policy_version=policy_version).model_dump()


def error_from(status: int, body: Any, retry_after: str | None) -> EnvhubError:
    """The exception the server raised, rebuilt from its problem body by `code` (an explicit table)."""
    problem = body if isinstance(body, dict) else {}
    code = str(problem.get("code", "internal"))
    detail = str(problem.get("detail") or f"HTTP {status}")
    cls = ERRORS_BY_CODE.get(code)
    if cls is None:  # a code this client does not know: fall back by status (a 4xx is a request error)
        if status == 503:
            cls = Unavailable
        elif 400 <= status < 500:
            cls = next((c for c in ERRORS_BY_CODE.values() if c.status == status and issubclass(c, RequestError)),
                       RequestError)
        else:
            cls = next((c for c in ERRORS_BY_CODE.values() if c.status == status), EnvhubError)
    if issubclass(cls, Unavailable):
        err: EnvhubError = cls(detail, code=code, retry_after_s=float(retry_after or 1), status_code=status)
    else:
        err = cls(detail, code=code, status_code=status)
    err.status = status
    return err


def explain(err: BaseException, configured: bool) -> BaseException:
    """A 401 for a client that was given no key says where a key goes."""
    if isinstance(err, Unauthorized) and not configured:
        return Unauthorized(f"{err.detail}: this server requires an API key; pass api_key= or set ENVHUB_API_KEY",
                            status_code=401)
    return err


def connection_failed(exc: BaseException, url: str) -> ConnectionFailed:
    """A transport's fault (httpx's, aiohttp's, a timeout) as the one type both clients raise."""
    err = ConnectionFailed(f"cannot reach {url}: {type(exc).__name__}: {exc}".rstrip(": "))
    err.__cause__ = exc
    return err


def should_retry(exc: BaseException) -> bool:
    """Retry capacity refusals and connection faults; never a judged answer or an agent error."""
    return (isinstance(exc, Unavailable) and exc.retryable) or not isinstance(exc, EnvhubError)


def backoff(attempt: int, exc: BaseException) -> float:
    if isinstance(exc, Unavailable) and not isinstance(exc, ConnectionFailed):  # the server said when
        return min(10.0, exc.retry_after_s)
    return min(5.0, 0.2 * 2**attempt)
