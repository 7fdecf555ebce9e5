"""Grades the repository with its own tests (see verifiers/swe.py)."""
from verifiers.swe import test_fail_to_pass, test_pass_to_pass, test_report_integrity  # noqa: F401
