"""Charts as inline SVG, drawn on the server: no chart library, no script, every label escaped.

Colours are SVG presentation attributes (not `style=`), so the page's Content-Security-Policy
can forbid inline styles.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime

from markupsafe import Markup, escape

from envhub.store.stats import fmt_seconds, percentile

OUTCOMES = ("ok", "agent_error", "agent_timeout", "env_error", "verifier_error", "task_invalid", "unverified")
COLOURS = {"ok": "#2e9d5b", "agent_error": "#d9822b", "agent_timeout": "#c9a227", "env_error": "#c23b3b",
           "verifier_error": "#8e44ad", "task_invalid": "#555", "unverified": "#a7b1bc"}
W, H, PAD_L, PAD_R, PAD_T, PAD_B = 480, 170, 36, 10, 14, 28

Outcome = tuple[datetime, float | None, str | None]


def _svg(body: list[str], label: str, height: int = H) -> Markup:
    return Markup(f'<svg class="chart" viewBox="0 0 {W} {height}" role="img" aria-label="{escape(label)}" '
                  f'preserveAspectRatio="xMidYMid meet" xmlns="http://www.w3.org/2000/svg">'
                  f'<title>{escape(label)}</title>{"".join(body)}</svg>')


def _empty(label: str) -> Markup:
    return _svg([f'<text x="{W / 2}" y="{H / 2}" text-anchor="middle" fill="#777" font-size="13">'
                 f'{escape(label)}: no episodes recorded yet</text>'], label)


def _bins(items: Sequence[Outcome], n: int) -> tuple[list[list[Outcome]], datetime, datetime]:
    first, last = items[0][0], items[-1][0]
    span = max((last - first).total_seconds(), 1e-9)
    bins: list[list[Outcome]] = [[] for _ in range(n)]
    for item in items:
        i = min(n - 1, int((item[0] - first).total_seconds() / span * n))
        bins[i].append(item)
    return bins, first, last


def _axis(first: datetime, last: datetime, y_label: str) -> list[str]:
    base = H - PAD_B
    fmt = "%Y-%m-%d %H:%M" if (last - first).days < 2 else "%Y-%m-%d"
    return [f'<line x1="{PAD_L}" y1="{base}" x2="{W - PAD_R}" y2="{base}" stroke="#999"/>',
            f'<line x1="{PAD_L}" y1="{PAD_T}" x2="{PAD_L}" y2="{base}" stroke="#999"/>',
            f'<text x="{PAD_L}" y="{H - 8}" font-size="11" fill="#555">{escape(first.strftime(fmt))}</text>',
            f'<text x="{W - PAD_R}" y="{H - 8}" font-size="11" fill="#555" text-anchor="end">'
            f'{escape(last.strftime(fmt))}</text>',
            f'<text x="4" y="{PAD_T + 10}" font-size="11" fill="#555">{escape(y_label)}</text>']


def reward_over_time(items: Sequence[Outcome], *, label: str = "mean reward over time", n: int = 24) -> Markup:
    """Mean reward of trainable verified episodes per time bin (rewards are in 0..1)."""
    scored = [i for i in items if i[1] is not None and i[2] in ("ok", "agent_error", "agent_timeout")]
    if not scored:
        return _empty(label)
    bins, first, last = _bins(scored, n)
    plot_w, plot_h = W - PAD_L - PAD_R, H - PAD_T - PAD_B
    body = _axis(first, last, "reward")
    for frac in (0.0, 0.5, 1.0):
        y = PAD_T + plot_h * (1 - frac)
        body.append(f'<line x1="{PAD_L}" y1="{y:.1f}" x2="{W - PAD_R}" y2="{y:.1f}" stroke="#eee"/>'
                    f'<text x="{PAD_L - 4}" y="{y + 4:.1f}" font-size="10" fill="#777" text-anchor="end">{frac:g}</text>')
    points = []
    for i, b in enumerate(bins):
        if not b:
            continue
        mean = sum(r for _, r, _ in b) / len(b)  # type: ignore[misc]
        x = PAD_L + plot_w * (i + 0.5) / n
        y = PAD_T + plot_h * (1 - max(0.0, min(1.0, mean)))
        points.append((x, y, mean, len(b), b[0][0]))
    body.append('<polyline fill="none" stroke="#2b6cb0" stroke-width="2" points="'
                + " ".join(f"{x:.1f},{y:.1f}" for x, y, *_ in points) + '"/>')
    for x, y, mean, count, when in points:
        body.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="#2b6cb0"><title>'
                    f'{escape(when.strftime("%Y-%m-%d %H:%M"))}: mean reward {mean:.3f} over {count} episodes'
                    f'</title></circle>')
    return _svg(body, label)


def failure_mix(items: Sequence[Outcome], *, label: str = "outcome mix over time", n: int = 24) -> Markup:
    """Stacked bars: how many episodes ended in each failure class, per time bin."""
    if not items:
        return _empty(label)
    bins, first, last = _bins(items, n)
    plot_w, plot_h = W - PAD_L - PAD_R, H - PAD_T - PAD_B - 16
    top = max(len(b) for b in bins)
    body = _axis(first, last, f"episodes (max {top})")
    bar_w = plot_w / n * 0.8
    for i, b in enumerate(bins):
        x = PAD_L + plot_w * i / n + plot_w / n * 0.1
        y = H - PAD_B
        for outcome in OUTCOMES:
            count = sum(1 for *_, f in b if (f or "unverified") == outcome)
            if not count:
                continue
            h = plot_h * count / top
            y -= h
            body.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar_w:.1f}" height="{h:.1f}" '
                        f'fill="{COLOURS[outcome]}"><title>{escape(outcome)}: {count}</title></rect>')
    present = [o for o in OUTCOMES if any((f or "unverified") == o for *_, f in items)]
    x = PAD_L
    for outcome in present:
        body.append(f'<rect x="{x}" y="{PAD_T - 8}" width="10" height="10" fill="{COLOURS[outcome]}"/>'
                    f'<text x="{x + 13}" y="{PAD_T + 1}" font-size="11" fill="#333">{escape(outcome)}</text>')
        x += 20 + 7 * len(outcome)
    return _svg(body, label)


def latency_histogram(values: Sequence[float], *, label: str) -> Markup:
    """Histogram on a log scale (0.1 ms .. 100 s, three bins a decade) with p50 and p99 marked."""
    if not values:
        return _empty(label)
    lo_exp, hi_exp, per = -4, 2, 3
    n = (hi_exp - lo_exp) * per
    counts = [0] * n
    for v in values:
        pos = (math.log10(max(v, 1e-4)) - lo_exp) * per
        counts[max(0, min(n - 1, int(pos)))] += 1
    plot_w, plot_h = W - PAD_L - PAD_R, H - PAD_T - PAD_B
    base, top = H - PAD_B, max(counts)
    body = [f'<line x1="{PAD_L}" y1="{base}" x2="{W - PAD_R}" y2="{base}" stroke="#999"/>',
            f'<text x="4" y="{PAD_T + 10}" font-size="11" fill="#555">n={len(values)}</text>']
    for i, c in enumerate(counts):
        x = PAD_L + plot_w * i / n
        lo, hi = 10 ** (lo_exp + i / per), 10 ** (lo_exp + (i + 1) / per)
        if c:
            h = plot_h * c / top
            body.append(f'<rect x="{x + 1:.1f}" y="{base - h:.1f}" width="{plot_w / n - 2:.1f}" height="{h:.1f}" '
                        f'fill="#4a90c2"><title>{escape(fmt_seconds(lo))}–{escape(fmt_seconds(hi))}: {c}</title>'
                        f'</rect>')
    for exp in range(lo_exp, hi_exp + 1):
        x = PAD_L + plot_w * (exp - lo_exp) / (hi_exp - lo_exp)
        body.append(f'<text x="{x:.1f}" y="{H - 8}" font-size="10" fill="#555" text-anchor="middle">'
                    f'{escape(fmt_seconds(10 ** exp))}</text>')
    for q, colour in ((50, "#2e9d5b"), (99, "#c23b3b")):
        p = percentile(list(values), q)
        assert p is not None
        x = PAD_L + plot_w * (math.log10(max(p, 1e-4)) - lo_exp) / (hi_exp - lo_exp)
        x = max(PAD_L, min(W - PAD_R, x))
        body.append(f'<line x1="{x:.1f}" y1="{PAD_T}" x2="{x:.1f}" y2="{base}" stroke="{colour}" '
                    f'stroke-dasharray="4 3"/><text x="{x + 3:.1f}" y="{PAD_T + 10 + (q == 99) * 12}" '
                    f'font-size="10" fill="{colour}">p{q} {escape(fmt_seconds(p))}</text>')
    return _svg(body, label)


# -- a training run's charts (`/runs/{id}`) ----------------------------------------------------------

def _y_grid(top: float, plot_h: float, fmt: str = "{:g}") -> list[str]:
    out = []
    for frac in (0.0, 0.5, 1.0):
        y = PAD_T + plot_h * (1 - frac)
        out.append(f'<line x1="{PAD_L}" y1="{y:.1f}" x2="{W - PAD_R}" y2="{y:.1f}" stroke="#eee"/>'
                   f'<text x="{PAD_L - 4}" y="{y + 4:.1f}" font-size="10" fill="#777" text-anchor="end">'
                   f'{escape(fmt.format(top * frac))}</text>')
    return out


def _corner(y_label: str) -> str:
    """The y axis's name at the top right, clear of the tick labels at the left."""
    return (f'<text x="{W - PAD_R}" y="{PAD_T - 3}" font-size="11" fill="#555" text-anchor="end">'
            f'{escape(y_label)}</text>')


def _category_axis(names: Sequence[str], y_label: str) -> tuple[list[str], list[float], float]:
    """Axes for one slot per name: the body so far, each slot's centre x, and a slot's width."""
    base, plot_w = H - PAD_B, W - PAD_L - PAD_R
    slot = plot_w / len(names)
    centres = [PAD_L + slot * (i + 0.5) for i in range(len(names))]
    every = max(1, math.ceil(len(names) / 12))  # at most a dozen labels under the axis
    body = [f'<line x1="{PAD_L}" y1="{base}" x2="{W - PAD_R}" y2="{base}" stroke="#999"/>',
            f'<line x1="{PAD_L}" y1="{PAD_T}" x2="{PAD_L}" y2="{base}" stroke="#999"/>',
            _corner(y_label)]
    for i, (name, x) in enumerate(zip(names, centres, strict=True)):
        if i % every == 0:
            body.append(f'<text x="{x:.1f}" y="{H - 12}" font-size="10" fill="#555" text-anchor="middle">'
                        f'{escape(name[:12])}</text>')
    return body, centres, slot


def reward_by_version(rows: Sequence[tuple[str, int, float | None, tuple[float, float] | None]], *,
                      label: str = "mean reward by policy version") -> Markup:
    """Per policy version (in order), the mean reward as a point and its 95 % interval as an error
    bar, on a 0..1 scale (an interval reaching past it is drawn to the edge; its title says where)."""
    rows = [r for r in rows if r[2] is not None]
    if not rows:
        return _empty(label)
    plot_h = H - PAD_T - PAD_B
    body, centres, slot = _category_axis([r[0] for r in rows], "reward")
    body = _y_grid(1.0, plot_h) + body

    def y_of(v: float) -> float:
        return PAD_T + plot_h * (1 - max(0.0, min(1.0, v)))

    half = min(10.0, slot * 0.25)
    for (version, n, mean, ci), x in zip(rows, centres, strict=True):
        assert mean is not None
        if ci is not None:
            lo, hi = y_of(ci[0]), y_of(ci[1])
            body.append(f'<g class="ci" stroke="#2b6cb0" stroke-width="1.5"><title>{escape(version)}: 95 % CI '
                        f'[{ci[0]:.3f}, {ci[1]:.3f}]</title>'
                        f'<line x1="{x:.1f}" y1="{lo:.1f}" x2="{x:.1f}" y2="{hi:.1f}"/>'
                        f'<line x1="{x - half:.1f}" y1="{lo:.1f}" x2="{x + half:.1f}" y2="{lo:.1f}"/>'
                        f'<line x1="{x - half:.1f}" y1="{hi:.1f}" x2="{x + half:.1f}" y2="{hi:.1f}"/></g>')
        body.append(f'<circle class="mean" cx="{x:.1f}" cy="{y_of(mean):.1f}" r="4.5" fill="#2b6cb0"><title>'
                    f'{escape(version)}: mean reward {mean:.3f} over {n} episode{"" if n == 1 else "s"}'
                    f'{"" if ci else " (no interval below two)"}</title></circle>')
    return _svg(body, label)


def bars(items: Sequence[tuple[str, float]], *, label: str, y_label: str, unit: str = "",
         empty: str = "nothing reported yet") -> Markup:
    """One bar per (name, value), in the order given: a histogram over named buckets."""
    if not items:
        return _svg([f'<text x="{W / 2}" y="{H / 2}" text-anchor="middle" fill="#777" font-size="13">'
                     f'{escape(label)}: {escape(empty)}</text>'], label)
    plot_h = H - PAD_T - PAD_B
    top = max(v for _, v in items) or 1.0
    body, centres, slot = _category_axis([n for n, _ in items], y_label)
    body = _y_grid(top, plot_h) + body
    base = H - PAD_B
    for (name, value), x in zip(items, centres, strict=True):
        h = plot_h * max(0.0, value) / top
        body.append(f'<rect class="bar" x="{x - slot * 0.35:.1f}" y="{base - h:.1f}" width="{slot * 0.7:.1f}" '
                    f'height="{h:.1f}" fill="#4a90c2"><title>{escape(name)}: {value:g}{escape(unit)}</title></rect>')
    return _svg(body, label)


def rate_over_time(ends: Sequence[datetime], *, label: str = "trajectories/s over time", n: int = 24) -> Markup:
    """Ended episodes per second, per time bin of their end (one point per bin with any)."""
    if len(ends) < 2:
        return _svg([f'<text x="{W / 2}" y="{H / 2}" text-anchor="middle" fill="#777" font-size="13">'
                     f'{escape(label)}: fewer than two ended episodes</text>'], label)
    ordered = sorted(ends)
    bins, first, last = _bins([(t, None, None) for t in ordered], n)
    width = max((last - first).total_seconds(), 1e-9) / n
    rates = [(i, len(b) / width, len(b)) for i, b in enumerate(bins) if b]
    top = max(r for _, r, _ in rates)
    plot_w, plot_h = W - PAD_L - PAD_R, H - PAD_T - PAD_B
    body = _y_grid(top, plot_h, "{:.3g}") + _axis(first, last, "")[:-1] + [_corner("trajectories/s")]
    points = [(PAD_L + plot_w * (i + 0.5) / n, PAD_T + plot_h * (1 - r / top), r, c) for i, r, c in rates]
    body.append('<polyline fill="none" stroke="#2e9d5b" stroke-width="2" points="'
                + " ".join(f"{x:.1f},{y:.1f}" for x, y, *_ in points) + '"/>')
    for x, y, rate, count in points:
        body.append(f'<circle class="rate" cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="#2e9d5b"><title>{rate:.3g}/s: '
                    f'{count} episode{"" if count == 1 else "s"} ended in {escape(fmt_seconds(width))}'
                    '</title></circle>')
    return _svg(body, label)
