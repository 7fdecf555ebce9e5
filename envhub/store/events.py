"""Episode events: what the session manager tells the store, as plain data.

An observer call must return at once. A created, step or closed event is made at once as one flat
dict of strings, numbers and datetimes (the header's fields and the step entry's side by side).
Events wait in the writer's buffer for a fraction of a second, thousands at a time; typed models or
nested dicts kept alive that long cost the serving thread more than making the dict does: the cyclic
collector walks every container, and a dict that holds only such values is never tracked
(`benchmarks/protocol.py`, 64 sessions). `plain`, in the writer's thread, nests it again (the form
the store writes and spill files keep). A verify result, one per episode, is kept as it is. Every
event carries its episode's header, so the store can place it even when an earlier event of the same
episode was lost.
"""

from __future__ import annotations

from dataclasses import fields
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from envhub.episode import EpisodeHeader, StepEntry

if TYPE_CHECKING:
    from envhub.spec import VerifyResult


class Session(Protocol):
    """What the store reads of a session (the server's `Session` has it; the store imports no server)."""

    header: EpisodeHeader
    step_count: int
    timings: dict[str, float]


MAX_DETAIL_CHARS = 8000
MAX_MESSAGE_CHARS = 2000

Event = dict[str, Any]


def _now() -> datetime:
    return datetime.now(UTC)


#: The header's fields, at the top of a flat event beside the event's own.
HEADER_FIELDS = tuple(f.name for f in fields(EpisodeHeader))


def _flat(session: Session, event: Event) -> Event:
    for name in HEADER_FIELDS:
        event[name] = getattr(session.header, name)
    return event


def created(session: Session) -> Event:
    return _flat(session, {"kind": "created", "reset_s": session.timings.get("reset_s")})


def step(session: Session, entry: StepEntry) -> Event:
    event = entry.stored()  # a fresh dict: the header's fields go in beside the entry's
    event["kind"] = "step"
    return _flat(session, event)


def verified(session: Session, result: VerifyResult) -> Event:
    return {"kind": "verified", "episode": session.header, "result": result, "at": _now(),
            "step_count": session.step_count}


def closed(session: Session) -> Event:
    return _flat(session, {"kind": "closed", "at": _now(), "step_count": session.step_count})


def episode_id(event: Event) -> str:
    if "episode" not in event:
        return event["id"]
    header = event["episode"]
    return header["id"] if isinstance(header, dict) else header.id


def _nested(event: Event) -> Event:
    """A flat event in the nested form: {kind, episode: header, entry (a step's) or its own fields}."""
    own = {k: v for k, v in event.items() if k != "kind" and k not in HEADER_FIELDS}
    out: Event = {"kind": event["kind"], "episode": {k: event[k] for k in HEADER_FIELDS}}
    if event["kind"] == "step":
        out["entry"] = own
    else:
        out.update(own)
    return out


def plain(event: Event) -> Event:
    """The event as JSON-ready data with every text bounded (runs in the writer's thread)."""
    out = _nested(event) if "episode" not in event else dict(event)
    if not isinstance(out["episode"], dict):  # not yet plain (a spilled event is)
        out["episode"] = out["episode"].plain()
    if out["kind"] == "step" and isinstance(out["entry"], StepEntry):
        out["entry"] = out["entry"].stored()
    elif out["kind"] == "verified" and not isinstance(out["result"], dict):
        out["result"] = out["result"].model_dump(mode="json")
    if out.get("result"):
        result = dict(out["result"])
        result["detail"] = str(result.get("detail", ""))[:MAX_DETAIL_CHARS]
        result["checks"] = [{**c, "message": str(c.get("message", ""))[:MAX_MESSAGE_CHARS]}
                            for c in result.get("checks", [])]
        out["result"] = result
    return out if _safe(out) else escaped(out)


def _safe(value: Any) -> bool:
    """Whether no string in `value` needs escaping: orjson refuses a lone surrogate and writes NUL as
    `\\u0000`, in one pass in C (walking every string in Python was half the writer's time)."""
    try:
        return b"\\u0000" not in orjson.dumps(value)
    except TypeError:  # a lone surrogate, or anything orjson does not take: the careful path decides
        return False


def _escape_text(text: str) -> str:
    if text.isascii() and "\x00" not in text:
        return text
    # A lone surrogate cannot be encoded as UTF-8 and PostgreSQL refuses NUL in text: store them
    # escaped (`\ud800`, `\x00`) so the event is kept, never dropped as unwritable.
    return text.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")


def escaped(value: Any) -> Any:
    """`value` with every string safe for any database (see `_escape_text`)."""
    if isinstance(value, str):
        return _escape_text(value)
    if isinstance(value, dict):
        return {(_escape_text(k) if isinstance(k, str) else k): escaped(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [escaped(v) for v in value]
    return value
