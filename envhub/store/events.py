"""Episode events: what the session manager tells the store, as plain data.

An observer call must return at once. Every event is made at once as one flat dict: the header's
fields and the event's own side by side (a step's entry, a verify's result, a close's time).
Events wait in the writer's buffer for a fraction of a second, thousands at a time; typed models or
nested dicts kept alive that long cost the serving thread more than making the dict does: the cyclic
collector walks every container, and a dict that holds only strings, numbers and datetimes is never
tracked (`benchmarks/protocol.py`, 64 sessions). The writer's thread stores them flat too
(`storable`): re-nesting each event there took about 15 of its 50 µs of CPU per pair, on the core
and under the GIL the event loop needs. `plain` is the nested, JSON-ready form spill files keep.
Every event carries its episode's header, so the store can place it even when an earlier event of the
same episode was lost.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from envhub.episode import StepEntry
from envhub.spec import HEADER_FIELDS as EPISODE_HEADER

if TYPE_CHECKING:
    from envhub.spec import Reverified, VerifyResult


class Session(Protocol):
    """What the store reads of a session (the server's `Session` has it; the store imports no server)."""

    header_fields: dict[str, Any]  # an `envhub.spec.EpisodeHeader`'s fields
    owner: str | None  # who ran it (`envhub.store.viewer`); None: in-process, no caller
    step_count: int
    timings: dict[str, float]


MAX_DETAIL_CHARS = 8000
MAX_MESSAGE_CHARS = 2000

Event = dict[str, Any]


def _now() -> datetime:
    return datetime.now(UTC)


#: The header's fields, at the top of a flat event beside the event's own; with the episode's owner,
#: which every event carries too, so that an episode whose `created` event was lost keeps its owner.
HEADER_FIELDS = (*EPISODE_HEADER, "owner")


def created(session: Session) -> Event:
    return {**session.header_fields, "owner": session.owner, "kind": "created",
            "reset_s": session.timings.get("reset_s")}


def step(session: Session, entry: StepEntry) -> Event:
    return {**session.header_fields, "owner": session.owner, "kind": "step", **entry.stored()}


def verified(session: Session, result: VerifyResult) -> Event:
    return {**session.header_fields, "owner": session.owner, "kind": "verified", "result": result, "at": _now(),
            "step_count": session.step_count}


def reverified(session: Session, answer: Reverified) -> Event:
    """A second judging of the episode's final state: the second verdict and whether it flipped."""
    second = answer.second
    return {**session.header_fields, "owner": session.owner, "kind": "reverified",
            "reverify": {"reward": second.reward, "passed": second.passed,
                         "failure_class": second.failure_class.value, "flipped": answer.flipped}}


def closed(session: Session) -> Event:
    return {**session.header_fields, "owner": session.owner, "kind": "closed", "at": _now(),
            "step_count": session.step_count}


def episode_id(event: Event) -> str:
    if "episode" not in event:
        return event["id"]
    header = event["episode"]
    return header["id"] if isinstance(header, dict) else header.id


def _nested(event: Event) -> Event:
    """A flat event in the nested form: {kind, episode: header, entry (a step's) or its own fields}."""
    own = {k: v for k, v in event.items() if k != "kind" and k not in HEADER_FIELDS}
    out: Event = {"kind": event["kind"], "episode": {k: event.get(k) for k in HEADER_FIELDS}}
    if event["kind"] == "step":
        out["entry"] = own
    else:
        out.update(own)
    return out


def _flattened(event: Event) -> Event:
    """A nested event (a spill file's, or made by hand) in the flat form."""
    header = event["episode"]
    out: Event = {"kind": event["kind"], **(header if isinstance(header, dict) else dict(header))}
    if event["kind"] == "step":
        entry = event["entry"]
        out.update(entry if isinstance(entry, dict) else entry.stored())
    else:
        out.update((k, v) for k, v in event.items() if k not in ("kind", "episode"))
    return out


def _bounded_result(result: Any) -> dict[str, Any]:
    result = dict(result) if isinstance(result, dict) else result.model_dump(mode="json")
    result["detail"] = str(result.get("detail", ""))[:MAX_DETAIL_CHARS]
    result["checks"] = [{**c, "message": str(c.get("message", ""))[:MAX_MESSAGE_CHARS]}
                        for c in result.get("checks", [])]
    return result


def storable(batch: list[Event]) -> list[Event]:
    """`batch` as the store writes it (runs in the writer's thread): flat, every text bounded and
    safe for any database. A step's texts were bounded when its event was made; only a verify's
    result (one per episode) is dumped here. One orjson pass decides the whole batch's escaping."""
    out = []
    for event in batch:
        if "episode" in event:
            event = _flattened(event)
        if event["kind"] == "verified":
            event = {**event, "result": _bounded_result(event["result"])}
        out.append(event)
    return out if _safe(out) else [e if _safe(e) else escaped(e) for e in out]


def plain(event: Event) -> Event:
    """The event in the nested, JSON-ready form a spill file keeps, every text bounded and safe."""
    [flat] = storable([event])
    return _nested(flat)


def _no_text(value: Any) -> None:
    """orjson's `default` in `_safe`: a date or a time holds no text to check (formatting each one was
    most of that pass's time)."""
    if isinstance(value, (date, time)):  # a datetime is a date
        return None
    raise TypeError


def _safe(value: Any) -> bool:
    """Whether no string in `value` needs escaping: orjson refuses a lone surrogate and writes NUL as
    `\\u0000`, in one pass in C (walking every string in Python was half the writer's time)."""
    try:
        return b"\\u0000" not in orjson.dumps(value, default=_no_text, option=orjson.OPT_PASSTHROUGH_DATETIME)
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
