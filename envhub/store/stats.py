"""Latency percentiles from recorded episodes: one computation for the page, the CLI and JSON."""

from __future__ import annotations

import math

from envhub.store.schemas import LatencyFigure, LatencySummary

OPS = ("reset", "step", "verify")


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100); None for no data."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def latency_summary(samples: dict[str, list[float]], episodes: int) -> LatencySummary:
    return LatencySummary(episodes=episodes, figures=[
        LatencyFigure(op=op, n=len(samples.get(op, [])), p50_s=percentile(samples.get(op, []), 50),
                      p99_s=percentile(samples.get(op, []), 99), max_s=max(samples.get(op, []), default=None))
        for op in OPS])


def fmt_seconds(value: float | None) -> str:
    """Human latency: 3.2 ms, 41 ms, 1.27 s."""
    if value is None:
        return "–"
    if value < 0.001:
        return f"{value * 1e6:.0f} µs"
    if value < 1:
        ms = value * 1000
        return f"{ms:.1f} ms" if ms < 10 else f"{ms:.0f} ms"
    return f"{value:.2f} s"
