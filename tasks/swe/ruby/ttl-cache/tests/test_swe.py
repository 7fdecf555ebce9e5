"""Grade the agent's repository: FAIL_TO_PASS and PASS_TO_PASS from tests.json must all pass."""

from verifiers import swe

test_resolved = swe.grade_test()
