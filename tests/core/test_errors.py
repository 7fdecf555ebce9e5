from envhub.errors import ERRORS_BY_CODE, EnvError, FailureClass, NotFound, Unavailable


def test_failure_class_flags_follow_the_design_table():
    assert [fc.value for fc in FailureClass if fc.trainable] == ["ok", "agent_error", "agent_timeout"]
    assert {fc.value for fc in FailureClass if fc.retryable} == {"env_error", "verifier_error", "unavailable"}
    assert not FailureClass.task_invalid.trainable and not FailureClass.task_invalid.retryable


def test_errors_map_back_by_code():
    for code, cls in ERRORS_BY_CODE.items():
        assert cls.code == code
    assert EnvError("x").failure_class is FailureClass.env_error
    assert Unavailable("x", retry_after_s=3).retry_after_s == 3


def test_not_found_suggests_a_close_name():
    err = NotFound.for_name("environment", "termnal", ["terminal", "echo"])
    assert "did you mean 'terminal'" in err.detail


def test_failure_class_prints_as_its_value() -> None:
    from envhub.errors import FailureClass

    assert str(FailureClass.ok) == "ok" and f"{FailureClass.env_error}" == "env_error"
