"""Episode events: what the session manager tells the store, as plain data.

An observer call must return at once, so an event only keeps references (the step log entry,
the verify result) and is turned into JSON-ready data later, in the writer's thread. Every
event carries its episode's header, so the store can place it even when an earlier event of the
same episode was lost.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from envhub.server.sessions import Session
    from envhub.spec import VerifyResult

MAX_OBSERVATION_CHARS = 4000  # what the session's own step log keeps, too
MAX_ARGUMENTS_CHARS = 8000
MAX_DETAIL_CHARS = 8000
MAX_MESSAGE_CHARS = 2000

Event = dict[str, Any]


def _now() -> str:
    return datetime.now(UTC).isoformat()


def header(session: Session) -> dict[str, Any]:
    return {"id": session.id, "env": session.family.name, "task_id": session.task.id, "harness": session.harness,
            "policy_version": session.policy_version, "created_at": session.created_at.isoformat()}


def created(session: Session) -> Event:
    return {"kind": "created", "episode": header(session), "reset_s": session.timings.get("reset_s")}


def step(session: Session, entry: dict[str, Any]) -> Event:
    return {"kind": "step", "episode": header(session), "entry": entry}


def verified(session: Session, result: VerifyResult) -> Event:
    return {"kind": "verified", "episode": header(session), "result": result, "at": _now(),
            "step_count": session.step_count}


def closed(session: Session) -> Event:
    return {"kind": "closed", "episode": header(session), "at": _now(), "step_count": session.step_count}


def _cut(text: str, limit: int) -> tuple[str, bool]:
    return (text, False) if len(text) <= limit else (text[:limit], True)


def plain(event: Event) -> Event:
    """The event as JSON-ready data with every text bounded (runs in the writer's thread)."""
    out = dict(event)
    if event["kind"] == "step" and "action" in event["entry"]:  # not yet plain
        entry = event["entry"]
        action = entry.get("action") or {}
        obs = entry.get("observation") or {}
        args, args_cut = _cut(json.dumps(action.get("arguments", {}), ensure_ascii=False, default=str),
                              MAX_ARGUMENTS_CHARS)
        text, text_cut = _cut(str(obs.get("text", "")), MAX_OBSERVATION_CHARS)
        text_cut = text_cut or len(text) >= MAX_OBSERVATION_CHARS  # the session log cut it already, unmarked
        out["entry"] = {"step": int(entry["step"]), "tool": str(action.get("tool", ""))[:128], "arguments": args,
                        "arguments_cut": args_cut, "observation": text, "observation_cut": text_cut,
                        "is_error": bool(obs.get("is_error")), "failure": str(entry.get("failure", "ok")),
                        "elapsed_s": entry.get("elapsed_s")}
    elif event["kind"] == "verified" and not isinstance(event["result"], dict):
        out["result"] = event["result"].model_dump(mode="json")
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
