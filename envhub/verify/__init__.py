"""The verifier runner: judge a frozen final state with the task's hidden pytest verifier."""

from envhub.verify.runner import VerifierRunner
from envhub.verify.verdict import score_checks

__all__ = ["VerifierRunner", "score_checks"]
