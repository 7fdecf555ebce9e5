"""Prometheus metrics (served as text at /metrics)."""

from functools import cache

from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.metrics import MetricWrapperBase

SESSIONS = Gauge("envhub_sessions_active", "Live sessions", ["env"])
STEPS = Counter("envhub_steps_total", "Steps by outcome", ["env", "failure"])
VERIFIES = Counter("envhub_verify_total", "Verify outcomes by failure class", ["env", "failure_class"])
REFUSED = Counter("envhub_sessions_refused_total", "Session creations refused at capacity")
REJECTED = Counter("envhub_requests_rejected_total", "Requests answered with a 4xx problem (HTTP or WebSocket), "
                   "by code: a rise in unauthorized or invalid_unicode is worth a look", ["code"])
LATENCY = Histogram("envhub_latency_seconds", "Operation latency", ["op", "env"],
                    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120))
#: A tool that raised on arguments its declaration accepted: a family bug, graded env_error. The goal is zero.
TOOL_CRASHES = Counter("envhub_tool_crashes_total", "Tool exceptions on declared-valid arguments", ["env", "tool"])


@cache
def child(metric: MetricWrapperBase, *labels: str) -> MetricWrapperBase:
    """`metric.labels(*labels)`, looked up once: the serving path counts every step (few label sets:
    families × operations or failure classes)."""
    return metric.labels(*labels)
