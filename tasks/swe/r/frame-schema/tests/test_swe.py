"""Grade the agent's repository: every FAIL_TO_PASS and PASS_TO_PASS test of tests.json passes."""

from verifiers.swe import test_fail_to_pass, test_pass_to_pass, test_report_integrity  # noqa: F401
