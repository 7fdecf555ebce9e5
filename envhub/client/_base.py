"""What both clients share and that does no I/O: request bodies, answer parsing, retry policy."""

from __future__ import annotations

import uuid
from typing import Any

from envhub.errors import ERRORS_BY_CODE, EnvhubError, Unavailable
from envhub.spec import ResetRequest, StepRequest, ToolCall

RETRY_STATUSES = {502, 503, 504}


def reset_body(env: str, task_id: str | None, seed: int | None, **extra: Any) -> dict[str, Any]:
    return ResetRequest(env=env, task_id=task_id, seed=seed, **extra).model_dump(exclude_none=True)


def step_body(tool: str | ToolCall, arguments: dict[str, Any]) -> dict[str, Any]:
    call = tool if isinstance(tool, ToolCall) else ToolCall(tool=tool, arguments=arguments)
    return StepRequest(action=call, idempotency_key=uuid.uuid4().hex).model_dump()


def error_from(status: int, body: Any, retry_after: str | None) -> EnvhubError:
    """The exception the server raised, rebuilt from its problem body by `code` (an explicit table)."""
    problem = body if isinstance(body, dict) else {}
    code = str(problem.get("code", "internal"))
    detail = str(problem.get("detail") or f"HTTP {status}")
    cls = ERRORS_BY_CODE.get(code)
    if cls is None:  # a code this client does not know: fall back by status
        cls = Unavailable if status == 503 else next(
            (c for c in ERRORS_BY_CODE.values() if c.status == status), EnvhubError)
    if issubclass(cls, Unavailable):
        return cls(detail, retry_after_s=float(retry_after or 1), status_code=status)
    return cls(detail, status_code=status)


def should_retry(exc: BaseException) -> bool:
    """Retry capacity refusals and connection faults; never a judged answer or an agent error."""
    return (isinstance(exc, Unavailable) and exc.retryable) or not isinstance(exc, EnvhubError)


def backoff(attempt: int, exc: BaseException) -> float:
    if isinstance(exc, Unavailable):
        return min(10.0, exc.retry_after_s)
    return min(5.0, 0.2 * 2**attempt)
