"""`/v1/snapshots`: a caller's kept copies of live episodes (taken by `POST /v1/sessions/{id}/snapshot`,
started from by `POST /v1/sessions {"from_snapshot": id}`). Another caller's snapshot is unknown."""

from __future__ import annotations

from fastapi import APIRouter, Response, status

from envhub.server.deps import CallerDep, ManagerDep
from envhub.spec import SnapshotList

router = APIRouter(prefix="/v1/snapshots", tags=["sessions"])


@router.get("", response_model=SnapshotList)
async def list_snapshots(manager: ManagerDep, caller: CallerDep) -> SnapshotList:
    """The caller's live snapshots, newest first."""
    return manager.list_snapshots(caller)


@router.delete("/{snapshot_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_snapshot(snapshot_id: str, manager: ManagerDep, caller: CallerDep) -> Response:
    """Delete (idempotent: an unknown id, or another caller's, is a no-op 204)."""
    manager.delete_snapshot(snapshot_id, caller)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
