from envhub.client._base import error_from
from envhub.errors import ERRORS_BY_CODE, EnvError, FailureClass, NotFound, RequestError, Unavailable


def test_failure_class_flags_follow_the_design_table():
    assert [fc.value for fc in FailureClass if fc.trainable] == ["ok", "agent_error", "agent_timeout"]
    assert {fc.value for fc in FailureClass if fc.retryable} == {"env_error", "verifier_error", "unavailable"}
    assert not FailureClass.task_invalid.trainable and not FailureClass.task_invalid.retryable


#: The wire contract, written out independently of the classes: each problem `code` a server may
#: send, the HTTP status it comes with and the exception a client raises for it. Changing a row
#: breaks clients in the field, so this table changes only on purpose.
WIRE_CODES = {
    "internal": ("EnvhubError", 500),
    "agent_error": ("AgentError", 400),
    "agent_timeout": ("AgentTimeout", 408),
    "sandbox_gone": ("SandboxGone", 400),
    "sandbox_oom": ("SandboxOOM", 400),
    "shell_wedged": ("ShellWedged", 408),
    "env_error": ("EnvError", 502),
    "sandbox_unavailable": ("SandboxUnavailable", 502),
    "verifier_error": ("VerifierError", 502),
    "task_invalid": ("TaskInvalid", 422),
    "task_format": ("TaskFormatError", 422),
    "unavailable": ("Unavailable", 503),
    "quota_exceeded": ("QuotaExceeded", 429),
    "requirement_missing": ("RequirementMissing", 503),
    "bad_request": ("RequestError", 400),
    "invalid_request": ("InvalidRequest", 422),
    "unauthorized": ("Unauthorized", 401),
    "forbidden": ("Forbidden", 403),
    "not_found": ("NotFound", 404),
    "conflict": ("Conflict", 409),
    "episode_over": ("EpisodeOver", 409),
    "idempotency_conflict": ("IdempotencyConflict", 409),
    "payload_too_large": ("PayloadTooLarge", 413),
    "not_supported": ("NotSupported", 501),
}


def test_errors_map_back_by_code_as_the_wire_contract_says():
    assert {code: (cls.__name__, cls.status) for code, cls in ERRORS_BY_CODE.items()} == WIRE_CODES
    for code, (name, status) in WIRE_CODES.items():  # what a client rebuilds from a problem body
        err = error_from(status, {"code": code, "detail": "x"}, None)
        assert type(err).__name__ == name and err.code == code and err.status == status
    override = RequestError("x", code="episode_over")  # an instance override brings its class's status
    assert override.code == "episode_over" and override.status == 409
    assert EnvError("x").failure_class is FailureClass.env_error
    assert Unavailable("x", retry_after_s=3).retry_after_s == 3


def test_not_found_suggests_a_close_name():
    err = NotFound.for_name("environment", "termnal", ["terminal", "echo"])
    assert "did you mean 'terminal'" in err.detail


def test_failure_class_prints_as_its_value() -> None:
    from envhub.errors import FailureClass

    assert str(FailureClass.ok) == "ok" and f"{FailureClass.env_error}" == "env_error"
