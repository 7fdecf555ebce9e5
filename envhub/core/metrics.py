"""Prometheus metrics (served as text at /metrics).

The serving path counts every reset and step (live sessions, steps by outcome, latency): those are
plain numbers kept in `Tally` and `Timing` objects and turned into Prometheus samples only when
/metrics is read. prometheus_client's own metrics take a lock and, for a histogram, walk its buckets in
Python on every call: five calls per reset+step pair cost about 4 % of a pair's instructions. These numbers are
changed only on the server's event loop, so they need no lock. Rarer events (refusals, verdicts,
crashes) keep prometheus_client's metrics.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from prometheus_client import REGISTRY, Counter
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.utils import floatToGoString

BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
_BOUNDS = (*map(floatToGoString, BUCKETS), "+Inf")  # as prometheus_client writes them: "1.0", "60.0"


class Tally:
    """A counter's or a gauge's value for one set of labels."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0.0

    def inc(self, amount: float = 1.0) -> None:
        self.value += amount

    def dec(self, amount: float = 1.0) -> None:
        self.value -= amount


class Timing:
    """A histogram's counts per bucket (the last one: above every bound) and sum, for one set of labels."""

    __slots__ = ("counts", "sum")

    def __init__(self) -> None:
        self.counts = [0] * (len(BUCKETS) + 1)
        self.sum = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect_left(BUCKETS, seconds)] += 1  # the first bound >= seconds: Prometheus's `le`
        self.sum += seconds


C = TypeVar("C", Tally, Timing)


class _Family(Generic[C]):
    """One metric name: a child per set of label values, made on first use."""

    def __init__(self, kind: str, name: str, doc: str, labels: tuple[str, ...], make: Callable[[], C]) -> None:
        self.kind, self.name, self.doc, self.label_names, self.make = kind, name, doc, labels, make
        self.children: dict[tuple[str, ...], C] = {}

    def labels(self, *values: str) -> C:
        child = self.children.get(values)
        if child is None:
            child = self.children[values] = self.make()
        return child

    def metric(self) -> Metric:
        labels = list(self.label_names)
        if self.kind == "histogram":
            out = HistogramMetricFamily(self.name, self.doc, labels=labels)
            for values, t in list(self.children.items()):
                cumulative, buckets = 0, []
                for bound, n in zip(_BOUNDS, t.counts, strict=True):
                    cumulative += n
                    buckets.append((bound, cumulative))
                out.add_metric(list(values), buckets, t.sum)
            return out
        out = (CounterMetricFamily if self.kind == "counter" else GaugeMetricFamily)(self.name, self.doc, labels=labels)
        for values, tally in list(self.children.items()):
            out.add_metric(list(values), tally.value)
        return out


class _Collector:
    def __init__(self, *families: _Family) -> None:  # type: ignore[type-arg]
        self.families = families

    def collect(self) -> Iterator[Metric]:
        for family in self.families:
            yield family.metric()


SESSIONS: _Family[Tally] = _Family("gauge", "envhub_sessions_active", "Live sessions", ("env",), Tally)
STEPS: _Family[Tally] = _Family("counter", "envhub_steps_total", "Steps by outcome", ("env", "failure"), Tally)
LATENCY: _Family[Timing] = _Family("histogram", "envhub_latency_seconds", "Operation latency", ("op", "env"), Timing)
REGISTRY.register(_Collector(SESSIONS, STEPS, LATENCY))

VERIFIES = Counter("envhub_verify_total", "Verify outcomes by failure class", ["env", "failure_class"])
REFUSED = Counter("envhub_sessions_refused_total", "Session creations refused at capacity")
REJECTED = Counter("envhub_requests_rejected_total", "Requests answered with a 4xx problem (HTTP or WebSocket), "
                   "by code: a rise in unauthorized or invalid_unicode is worth a look", ["code"])
#: A tool that raised on arguments its declaration accepted: a family bug, graded env_error. The goal is zero.
TOOL_CRASHES = Counter("envhub_tool_crashes_total", "Tool exceptions on declared-valid arguments", ["env", "tool"])
