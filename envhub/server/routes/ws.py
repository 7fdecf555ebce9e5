"""`WS /v1/sessions/ws`: the session calls as frames, for low-latency loops.

A frame is `{"op": "reset"|"step"|"verify"|"state"|"close", "id": <echoed>, ...}` (see
`envhub.spec.WsFrame`); an answer is `{"id", "op", "ok": true, "data": <the REST body>}` or
`{"id", "op", "ok": false, "error": <problem>}`. Sessions opened on a connection are closed
when it drops. `step`, `verify`, `state` and `close` act on `session_id`, or on the session the
connection opened last.
"""

from __future__ import annotations

import orjson
from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from pydantic import TypeAdapter, ValidationError

from envhub.errors import RequestError
from envhub.server.problems import problem_for
from envhub.server.sessions import SessionManager
from envhub.spec import WsClose, WsFrame, WsReset, WsState, WsStep, WsVerify

router = APIRouter(tags=["sessions"])
FRAME = TypeAdapter(WsFrame)


async def _dispatch(manager: SessionManager, frame: WsFrame, opened: list[str]) -> object:
    if isinstance(frame, WsReset):
        if frame.replace and opened:
            await manager.close(opened.pop())
        created = await manager.create(frame.data)
        opened.append(created.session_id)
        return created
    sid = frame.session_id or (opened[-1] if opened else None)
    if sid is None:
        raise RequestError("no session: send a reset frame first or give session_id")
    if isinstance(frame, WsStep):
        return await manager.step(sid, frame.data)
    if isinstance(frame, WsVerify):
        return await manager.verify(sid)
    if isinstance(frame, WsState):
        return manager.state(sid)
    assert isinstance(frame, WsClose)
    await manager.close(sid)
    if sid in opened:
        opened.remove(sid)
    return {"closed": sid}


@router.websocket("/v1/sessions/ws")
async def sessions_ws(ws: WebSocket) -> None:
    manager: SessionManager = ws.app.state.hub.manager
    limit = ws.app.state.hub.settings.max_body_bytes
    await ws.accept()
    opened: list[str] = []
    try:
        while True:
            raw = await ws.receive_text()
            frame_id, op = None, None
            try:
                if len(raw) > limit:
                    raise RequestError(f"frame of {len(raw)} bytes is over the {limit}-byte limit")
                try:
                    body = orjson.loads(raw)
                except orjson.JSONDecodeError as e:
                    raise RequestError(f"malformed JSON: {e}") from e
                if isinstance(body, dict):
                    frame_id, op = body.get("id"), body.get("op")
                try:
                    frame = FRAME.validate_python(body)
                except ValidationError as e:
                    first = e.errors()[0]
                    raise RequestError(f"invalid frame at {'.'.join(map(str, first['loc']))}: {first['msg']}") from e
                result = await _dispatch(manager, frame, opened)
                data = result.model_dump(mode="json", by_alias=True) if hasattr(result, "model_dump") else result
                await ws.send_text(orjson.dumps({"id": frame_id, "op": op, "ok": True, "data": data}).decode())
            except WebSocketDisconnect:
                raise
            except Exception as exc:  # every fault becomes an error frame; the connection stays
                problem = problem_for(exc).model_dump(mode="json", exclude_none=True)
                await ws.send_text(orjson.dumps({"id": frame_id, "op": op, "ok": False, "error": problem}).decode())
    except WebSocketDisconnect:
        pass
    finally:
        for sid in opened:
            await manager.close(sid)
