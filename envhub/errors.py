"""The envhub exception tree and the failure-class vocabulary.

Every fault in envhub is one of these classes. Each carries the failure class it maps to on the
wire, so the server translates exceptions to answers in exactly one place
(`envhub.server.problems`) and the client maps them back from the same table.

    EnvhubError
    ├── AgentError (ValueError)            agent_error: malformed action, unknown tool, bad arguments
    │   ├── SandboxGone                    the agent's own command ended its sandbox's shell
    │   └── SandboxOOM                     a command blew the sandbox's memory limit
    ├── AgentTimeout (TimeoutError)        agent_timeout: a step or the episode ran past its deadline
    │   └── ShellWedged                    a timed-out command left its shell unresponsive; it was ended
    ├── EnvError (RuntimeError)            env_error: sandbox/DB/filesystem fault the policy did not cause
    │   └── SandboxUnavailable             bubblewrap (or the engine) is missing
    ├── VerifierError (RuntimeError)       verifier_error: verifier crashed, timed out, wrote nonsense
    ├── TaskInvalid (ValueError)           task_invalid: the task itself is broken
    │   └── TaskFormatError                a task folder does not match the schema
    ├── Unavailable (RuntimeError)         unavailable: at capacity, retry later
    │   └── QuotaExceeded                  429: the API key's session quota is in use
    │   └── RequirementMissing             this machine lacks what the task needs (a toolchain)
    └── RequestError (ValueError)          a malformed request: no failure class, a 4xx
        ├── InvalidRequest                 422: a field of the request has the wrong type or value
        ├── Unauthorized (PermissionError) 401: no API key, or an unknown one
        ├── Forbidden (PermissionError)    403: the key may not do this (e.g. another family)
        ├── NotFound (LookupError)         unknown session (or one another caller owns), task or environment
        ├── Conflict                       409: the request contradicts the session's state
        │   ├── EpisodeOver                the episode was verified or closed
        │   └── IdempotencyConflict        a reused idempotency key with a different action
        └── PayloadTooLarge

A raise may override the class's `code` (`RequestError("...", code="episode_over")`): the problem
body carries that code (and the status of the subclass it names, here 409), and the client maps
it back through `ERRORS_BY_CODE`.
"""

from __future__ import annotations

import difflib
import enum
from collections.abc import Iterable


class FailureClass(str, enum.Enum):
    """Why an episode step or verdict is what it is; decides what a trainer does with it."""

    ok = "ok"
    agent_error = "agent_error"
    agent_timeout = "agent_timeout"
    env_error = "env_error"
    verifier_error = "verifier_error"
    task_invalid = "task_invalid"
    unavailable = "unavailable"

    def __str__(self) -> str:  # "ok", not "FailureClass.ok", in messages and f-strings
        return self.value

    @property
    def trainable(self) -> bool:
        """Whether the sample belongs in a training batch with its reward (never for infra faults)."""
        return self in (FailureClass.ok, FailureClass.agent_error, FailureClass.agent_timeout)

    @property
    def retryable(self) -> bool:
        """Whether running the same thing again may give a different, valid answer."""
        return self in (FailureClass.env_error, FailureClass.verifier_error, FailureClass.unavailable)


class EnvhubError(Exception):
    """Root of every envhub error."""

    failure_class: FailureClass | None = None
    status: int = 500
    code: str = "internal"

    def __init__(self, detail: str, *, code: str | None = None, **extra: object) -> None:
        super().__init__(detail)
        self.detail = detail
        if code is not None and code != self.code:  # an instance override of the class's stable code...
            self.code = code
            known = ERRORS_BY_CODE.get(code)
            if known is not None and issubclass(known, type(self)):
                self.status = known.status  # ...which brings the status of the class it names
        self.extra = extra

    @property
    def retryable(self) -> bool:
        """Whether the same call may succeed later on its own (by default, as its failure class says)."""
        return bool(self.failure_class and self.failure_class.retryable)


class AgentError(EnvhubError, ValueError):
    failure_class = FailureClass.agent_error
    status = 400
    code = "agent_error"


class SandboxGone(AgentError):
    """The agent's own command ended its shell (e.g. `exit`, `kill -9 $$`)."""

    code = "sandbox_gone"


class SandboxOOM(AgentError):
    """A process in the sandbox exceeded the memory limit and the kernel killed it."""

    code = "sandbox_oom"


class AgentTimeout(EnvhubError, TimeoutError):
    failure_class = FailureClass.agent_timeout
    status = 408
    code = "agent_timeout"


class ShellWedged(AgentTimeout):
    """The shell did not come back after the agent's timed-out command was killed; it was ended."""

    code = "shell_wedged"


class EnvError(EnvhubError, RuntimeError):
    failure_class = FailureClass.env_error
    status = 502
    code = "env_error"


class SandboxUnavailable(EnvError):
    code = "sandbox_unavailable"


class VerifierError(EnvhubError, RuntimeError):
    failure_class = FailureClass.verifier_error
    status = 502
    code = "verifier_error"


class TaskInvalid(EnvhubError, ValueError):
    failure_class = FailureClass.task_invalid
    status = 422
    code = "task_invalid"


class TaskFormatError(TaskInvalid):
    code = "task_format"


class Unavailable(EnvhubError, RuntimeError):
    failure_class = FailureClass.unavailable
    status = 503
    code = "unavailable"

    def __init__(self, detail: str, retry_after_s: float = 1.0, **extra: object) -> None:
        super().__init__(detail, **extra)
        self.retry_after_s = retry_after_s


class ConnectionFailed(Unavailable):
    """The server could not be reached, or the connection broke before its answer came. Both
    clients raise it for their transport's faults (httpx's, aiohttp's, a timeout), the transport's
    own exception as its cause, so a caller catches one type whichever client it holds. Raised on
    the client's side only: no server answers with it, so it is no wire code (`ERRORS_BY_CODE`)."""

    code = "connection_failed"


class QuotaExceeded(Unavailable):
    status = 429
    code = "quota_exceeded"
class RequirementMissing(Unavailable):
    """The task needs something this machine lacks; `fix` is the command that installs it. Not
    retryable: the same call fails until someone runs the fix."""

    code = "requirement_missing"

    @property
    def retryable(self) -> bool:
        return False


class RequestError(EnvhubError, ValueError):
    status = 400
    code = "bad_request"


class InvalidRequest(RequestError):
    status = 422
    code = "invalid_request"


class Unauthorized(RequestError, PermissionError):
    status = 401
    code = "unauthorized"


class Forbidden(RequestError, PermissionError):
    status = 403
    code = "forbidden"


class Conflict(RequestError):
    status = 409
    code = "conflict"


class EpisodeOver(Conflict):
    code = "episode_over"


class IdempotencyConflict(Conflict):
    code = "idempotency_conflict"


class NotFound(RequestError, LookupError):
    status = 404
    code = "not_found"

    @classmethod
    def for_name(cls, kind: str, name: str, known: Iterable[str]) -> NotFound:
        """A not-found error with a "did you mean" hint, as Gymnasium's registry gives."""
        known = sorted(known)
        close = difflib.get_close_matches(name, known, n=1)
        hint = (f"; did you mean {close[0]!r}?" if close
                else f" (known: {', '.join(known)})" if 0 < len(known) <= 12 else "")
        return cls(f"unknown {kind} {name!r}{hint}", kind=kind, name=name)


class PayloadTooLarge(RequestError):
    status = 413
    code = "payload_too_large"


class NotSupported(RequestError):
    """What this server understood but cannot do for this environment (a fork of a family that
    cannot copy its live state yet)."""

    status = 501
    code = "not_supported"


#: code → class, for the client to raise the same type the server raised.
ERRORS_BY_CODE: dict[str, type[EnvhubError]] = {
    cls.code: cls
    for cls in (
        EnvhubError, AgentError, SandboxGone, SandboxOOM, AgentTimeout, ShellWedged, EnvError, SandboxUnavailable,
        VerifierError, TaskInvalid, TaskFormatError, Unavailable, QuotaExceeded, RequirementMissing, RequestError,
        InvalidRequest, Unauthorized, Forbidden, NotFound, Conflict, EpisodeOver, IdempotencyConflict, PayloadTooLarge,
        NotSupported,
    )
}
