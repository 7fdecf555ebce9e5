"""`WS /v1/sessions/ws`: the session calls as frames, for low-latency loops.

A frame is `{"op": "reset"|"step"|"verify"|"state"|"close"|"fork"|"snapshot", "id": <echoed>, ...}` (see
`envhub.spec.WsFrame`); an answer is `{"id", "op", "ok": true, "data": <the REST body>}` or
`{"id", "op", "ok": false, "error": <problem>}`. Sessions opened on a connection are closed
when it drops. `step`, `verify`, `state` and `close` act on `session_id`, or on the session the
connection opened last. The connection is one caller (its handshake's `Authorization`, or a client
token minted for it and returned in each reset answer): it reaches only sessions that caller owns.
"""

from __future__ import annotations

from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from pydantic import TypeAdapter, ValidationError

from envhub.core.auth import Caller
from envhub.core.sessions import SessionManager
from envhub.errors import RequestError
from envhub.server import frames
from envhub.server.encoding import dumps_text, ok_frame
from envhub.server.problems import problem_for
from envhub.spec import Forked, WsClose, WsFork, WsFrame, WsReset, WsSnapshot, WsState, WsStep, WsVerify

router = APIRouter(tags=["sessions"])
FRAME = TypeAdapter(WsFrame)


class SessionFrames:
    """One connection's session calls, whatever carries its frames: this route (ASGI) or the
    native socket that `envhub serve` puts in front of it (`envhub.server.native_ws`). Both answer
    every frame through `answer`, so the rules live here once."""

    __slots__ = ("manager", "caller", "limit", "opened")

    def __init__(self, manager: SessionManager, caller: Caller, limit: int) -> None:
        self.manager, self.caller, self.limit = manager, caller, limit
        self.opened: list[str] = []  # sessions this connection opened, closed when it drops

    async def answer(self, text: str) -> str:
        """The answer frame to one text frame; every fault becomes an error frame."""
        frame_id, op = None, None
        try:
            body = frames.parse_text(text, self.limit)
            if isinstance(body, dict):
                frame_id, op = body.get("id"), body.get("op")
                if not isinstance(frame_id, (str, int)) or isinstance(frame_id, bool):
                    frame_id = None  # echo only what a frame id may be
                op = op if isinstance(op, str) else None
            try:
                frame = FRAME.validate_python(body)
            except ValidationError as e:
                first = e.errors()[0]
                raise RequestError(f"invalid frame at {'.'.join(map(str, first['loc']))}: {first['msg']}") from e
            return ok_frame(frame_id, op, await self._dispatch(frame))
        except Exception as exc:
            return self.refuse(exc, frame_id, op)

    @staticmethod
    def refuse(exc: BaseException, frame_id: object = None, op: str | None = None) -> str:
        problem = problem_for(exc).model_dump(mode="json", exclude_none=True)
        return dumps_text({"id": frame_id, "op": op, "ok": False, "error": problem})

    async def _dispatch(self, frame: WsFrame) -> object:
        manager, caller, opened = self.manager, self.caller, self.opened
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
        if isinstance(frame, WsFork):  # the forks are the caller's, not this connection's to close
            return Forked(sessions=[a.model() for a in await manager.fork(sid, frame.data, caller)])
        if isinstance(frame, WsSnapshot):
            return await manager.snapshot(sid, caller)
        assert isinstance(frame, WsClose)
        await manager.close(sid, caller)
        if sid in opened:
            opened.remove(sid)
        return {"closed": sid}

    async def close_all(self) -> None:
        while self.opened:
            await self.manager.close(self.opened.pop(), self.caller)


@router.websocket("/v1/sessions/ws")
async def sessions_ws(ws: WebSocket) -> None:
    caller = await frames.accept(ws)
    if caller is None:
        return
    hub = ws.app.state.hub
    session = SessionFrames(hub.manager, caller, hub.settings.max_body_bytes)
    try:
        while True:
            try:
                answer = await session.answer(await frames.receive_text(ws))
            except RequestError as exc:  # a binary frame
                answer = session.refuse(exc)
            await ws.send_text(answer)
    except WebSocketDisconnect:
        pass
    finally:
        await session.close_all()
