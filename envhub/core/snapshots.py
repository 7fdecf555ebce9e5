"""Kept copies of live episodes (`POST /v1/sessions/{id}/snapshot`), on disk so they outlive the server.

A snapshot is a folder under `data_dir/snapshots/<id>/`: `meta.json` (whose it is, which session,
task and step, what the copy left out, when it expires), `log.jsonl` (the step log so far) and
`state/` (what the family's `Environment.snapshot` wrote). It is written under a temporary name and
renamed into place, so a half-written one is never read. Only its owner reaches it: anyone else is
told it does not exist. Expired ones are removed by the session reaper and never read.
"""

from __future__ import annotations

import json
import re
import secrets
import shutil
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from envhub.episode import StepEntry
from envhub.errors import FailureClass, NotFound, QuotaExceeded
from envhub.spec import SNAPSHOT_ID_PATTERN, Observation, SnapshotInfo, ToolCall

#: How old a temporary folder must be before the reaper takes it for one a crash left.
TMP_GRACE_S = 3600


@dataclass(frozen=True)
class Snapshot:
    info: SnapshotInfo
    owner: str | None
    harness: str
    policy_version: str | None
    run_id: str | None
    notes: dict[str, Any]
    state: Path
    log: list[StepEntry]


def _entry_json(e: StepEntry) -> str:
    return json.dumps({"step": e.step, "action": e.action.model_dump(mode="json"),
                       "observation": e.observation.model_dump(mode="json"), "failure": e.failure.value,
                       "elapsed_s": e.elapsed_s, "observation_cut": e.observation_cut,
                       "arguments_json": e.arguments_json})


def _entry(raw: dict[str, Any]) -> StepEntry:
    return StepEntry(step=raw["step"], action=ToolCall.model_validate(raw["action"]),
                     observation=Observation.model_validate(raw["observation"]), failure=FailureClass(raw["failure"]),
                     elapsed_s=raw["elapsed_s"], observation_cut=raw["observation_cut"],
                     arguments_json=raw["arguments_json"])


class SnapshotStore:
    def __init__(self, root: Path, ttl_s: float, quota: int) -> None:
        self.root, self.ttl_s, self.quota = root, ttl_s, quota

    def new_folder(self, owner: str | None) -> tuple[str, Path]:
        """A fresh id and the temporary folder its family writes into (`save` puts it in place);
        refused past the owner's quota."""
        if self.quota and len(self.list(owner)) >= self.quota:
            raise QuotaExceeded(f"{self.quota} snapshots are kept already: delete one first", retry_after_s=None)
        sid = "snap-" + secrets.token_urlsafe(16)
        tmp = self.root / f".{sid}.tmp"
        tmp.mkdir(parents=True)
        return sid, tmp

    def save(self, snapshot_id: str, tmp: Path, *, owner: str | None, session_id: str, env: str, task_id: str,
             step: int, harness: str, policy_version: str | None, run_id: str | None, notes: dict[str, Any],
             log: list[StepEntry]) -> SnapshotInfo:
        now = datetime.now(UTC)
        info = SnapshotInfo(snapshot_id=snapshot_id, session_id=session_id, env=env, task_id=task_id, step=step,
                            created_at=now, expires_at=now + timedelta(seconds=self.ttl_s))
        meta = {"info": info.model_dump(mode="json"), "owner": owner, "harness": harness,
                "policy_version": policy_version, "run_id": run_id, "notes": notes}
        (tmp / "meta.json").write_text(json.dumps(meta))
        (tmp / "log.jsonl").write_text("".join(_entry_json(e) + "\n" for e in log))
        tmp.rename(self.root / snapshot_id)
        return info

    def discard(self, tmp: Path) -> None:
        shutil.rmtree(tmp, ignore_errors=True)

    def get(self, snapshot_id: str, owner: str | None, *, check_owner: bool = True) -> Snapshot:
        folder = self.root / snapshot_id
        meta = None
        if re.fullmatch(SNAPSHOT_ID_PATTERN, snapshot_id) and (folder / "meta.json").is_file():  # no path in an id
            meta = json.loads((folder / "meta.json").read_text())
        info = SnapshotInfo.model_validate(meta["info"]) if meta else None
        if (meta is None or info is None or info.expires_at <= datetime.now(UTC)
                or (check_owner and meta["owner"] != owner)):
            raise NotFound(f"unknown snapshot {snapshot_id!r} (expired, deleted, never taken, or not yours)",
                           kind="snapshot", name=snapshot_id)
        log = [_entry(json.loads(line)) for line in (folder / "log.jsonl").read_text().splitlines() if line]
        return Snapshot(info=info, owner=meta["owner"], harness=meta["harness"], policy_version=meta["policy_version"],
                        run_id=meta["run_id"], notes=meta["notes"], state=folder / "state", log=log)

    def list(self, owner: str | None) -> list[SnapshotInfo]:
        """The owner's live snapshots, newest first."""
        out = []
        for folder in self.root.glob("snap-*") if self.root.is_dir() else ():
            try:
                out.append(self.get(folder.name, owner).info)
            except (NotFound, OSError, ValueError, KeyError):
                continue
        return sorted(out, key=lambda i: i.created_at, reverse=True)

    def delete(self, snapshot_id: str, owner: str | None) -> None:
        """Remove the owner's snapshot (anyone else's, or an unknown id: nothing, as for a session)."""
        try:
            self.get(snapshot_id, owner)
        except NotFound:
            return
        shutil.rmtree(self.root / snapshot_id, ignore_errors=True)

    def expire(self) -> int:
        """Remove the snapshots whose time is up, and temporary folders left by a crash; how many."""
        gone = 0
        for folder in self.root.glob("*") if self.root.is_dir() else ():
            try:
                meta = json.loads((folder / "meta.json").read_text())
                expired = SnapshotInfo.model_validate(meta["info"]).expires_at <= datetime.now(UTC)
            except (OSError, ValueError, KeyError):  # a temporary folder: one a crash left, not one being written
                expired = folder.name.startswith(".") and time.time() - folder.stat().st_mtime > TMP_GRACE_S
            if expired:
                shutil.rmtree(folder, ignore_errors=True)
                gone += 1
        return gone
