"""`WS /v1/sessions/ws`: the session calls as frames, for low-latency loops.

A frame is `{"op": "reset"|"step"|"verify"|"state"|"close", "id": <echoed>, ...}` (see
`envhub.spec.WsFrame`); an answer is `{"id", "op", "ok": true, "data": <the REST body>}` or
`{"id", "op", "ok": false, "error": <problem>}`. Sessions opened on a connection are closed
when it drops. `step`, `verify`, `state` and `close` act on `session_id`, or on the session the
connection opened last. The connection is one caller (its handshake's `Authorization`, or a client
token minted for it and returned in each reset answer): it reaches only sessions that caller owns.
"""

from __future__ import annotations

from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from pydantic import TypeAdapter, ValidationError

from envhub.errors import RequestError
from envhub.server import frames
from envhub.server.auth import Caller
from envhub.server.encoding import dumps_text, ok_frame
from envhub.server.problems import problem_for
from envhub.server.sessions import SessionManager
from envhub.spec import WsClose, WsFrame, WsReset, WsState, WsStep, WsVerify

router = APIRouter(tags=["sessions"])
FRAME = TypeAdapter(WsFrame)


async def _dispatch(manager: SessionManager, frame: WsFrame, opened: list[str], caller: Caller) -> object:
    if isinstance(frame, WsReset):
        if frame.replace and opened:
            await manager.close(opened.pop(), caller)
        created = await manager.create(frame.data, caller)
        opened.append(created.session_id)
        return created
    sid = frame.session_id or (opened[-1] if opened else None)
    if sid is None:
        raise RequestError("no session: send a reset frame first or give session_id")
    if isinstance(frame, WsStep):
        return await manager.step(sid, frame.data, caller)
    if isinstance(frame, WsVerify):
        return await manager.verify(sid, caller)
    if isinstance(frame, WsState):
        return manager.state(sid, caller)
    assert isinstance(frame, WsClose)
    await manager.close(sid, caller)
    if sid in opened:
        opened.remove(sid)
    return {"closed": sid}


@router.websocket("/v1/sessions/ws")
async def sessions_ws(ws: WebSocket) -> None:
    manager: SessionManager = ws.app.state.hub.manager
    limit = ws.app.state.hub.settings.max_body_bytes
    caller = await frames.accept(ws)
    if caller is None:
        return
    opened: list[str] = []
    try:
        while True:
            frame_id, op = None, None
            try:
                body = await frames.receive_json(ws, limit)
                if isinstance(body, dict):
                    frame_id, op = body.get("id"), body.get("op")
                    if not isinstance(frame_id, str | int) or isinstance(frame_id, bool):
                        frame_id = None  # echo only what a frame id may be
                    op = op if isinstance(op, str) else None
                try:
                    frame = FRAME.validate_python(body)
                except ValidationError as e:
                    first = e.errors()[0]
                    raise RequestError(f"invalid frame at {'.'.join(map(str, first['loc']))}: {first['msg']}") from e
                result = await _dispatch(manager, frame, opened, caller)
                await ws.send_text(ok_frame(frame_id, op, result))
            except WebSocketDisconnect:
                raise
            except Exception as exc:  # every fault becomes an error frame; the connection stays
                problem = problem_for(exc).model_dump(mode="json", exclude_none=True)
                await ws.send_text(dumps_text({"id": frame_id, "op": op, "ok": False, "error": problem}))
    except WebSocketDisconnect:
        pass
    finally:
        for sid in opened:
            await manager.close(sid, caller)
