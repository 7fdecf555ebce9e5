"""Jinja2 rendering: autoescaped templates, safe headers, the HTML 404 page."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from envhub.store.stats import fmt_seconds

HERE = Path(__file__).parent
HEADERS = {
    # Everything is same-origin and static; inline scripts and styles are refused outright.
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; "
                               "form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def _when(value: datetime | None) -> str:
    if value is None:
        return "–"
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _reward(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str, sort_keys=True)


def _qs(params: dict[str, Any], **override: Any) -> str:
    merged = {**params, **override}
    return "?" + urlencode({k: v for k, v in merged.items() if v not in (None, "")})


env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=True, undefined=StrictUndefined,
                  trim_blocks=True, lstrip_blocks=True)
env.filters.update(secs=fmt_seconds, when=_when, reward=_reward, pretty=_pretty,
                   compact=lambda v: json.dumps(v, ensure_ascii=False, default=str, sort_keys=True),
                   path=lambda v: quote(str(v), safe="/"))
env.globals.update(qs=_qs)


def page(name: str, status: int = 200, **context: Any) -> HTMLResponse:
    html = env.get_template(name).render(**context)
    return HTMLResponse(html, status_code=status, headers=HEADERS)


def not_found(what: str, detail: str) -> HTMLResponse:
    return page("404.html", status=404, title=f"{what} not found", what=what, detail=detail)
