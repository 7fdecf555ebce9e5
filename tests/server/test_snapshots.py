"""Snapshots of a live episode (`POST /v1/sessions/{id}/snapshot`, `POST /v1/sessions {"from_snapshot"}`):
a session started from one has the state and the step log of its moment, whatever the source did
after; snapshots outlive the server, expire, count against a quota and are their owner's alone."""

from __future__ import annotations

import time

import pytest

from envhub.client import EnvClient
from envhub.core.hub import Hub
from envhub.errors import EpisodeOver, NotFound, NotSupported, QuotaExceeded
from envhub.spec import ResetRequest
from tests.conftest import make_settings, running_hub
from tests.server.test_fork import office_read, office_write, run

TERMINAL = "terminal/count-error-lines"


async def test_a_session_from_a_snapshot_has_its_moments_state_and_log_even_after_a_restart() -> None:
    settings = make_settings(families=["terminal"], snapshot_ttl_s=600)
    async with running_hub(settings) as hub:
        source = (await hub.manager.create(ResetRequest(env="terminal", task_id=TERMINAL))).session_id
        await run(hub, source, "mkdir -p w && cd w && export MARK=kept && echo then > note.txt")
        info = await hub.manager.snapshot(source)
        assert (info.session_id, info.env, info.task_id, info.step) == (source, "terminal", TERMINAL, 1)
        await run(hub, source, "echo later > note.txt && touch after.txt")  # the source goes on
        assert [s.snapshot_id for s in hub.manager.list_snapshots().snapshots][0] == info.snapshot_id
        await hub.manager.close(source)
    async with running_hub(settings) as hub:  # a new server over the same data folder
        started = await hub.manager.create(ResetRequest(env="terminal", from_snapshot=info.snapshot_id))
        try:
            session = hub.manager.get(started.session_id)
            assert (session.step_count, session.header.parent_id, session.header.forked_at_step) == (1, source, 1)
            assert [e.action.arguments["command"][:8] for e in session.log] == ["mkdir -p"]
            assert await run(hub, started.session_id, 'pwd; echo "$MARK"; cat note.txt; ls') == (
                "/workspace/w\nkept\nthen\nnote.txt")
        finally:
            await hub.manager.close(started.session_id)
            hub.manager.delete_snapshot(info.snapshot_id)
        with pytest.raises(NotFound):
            await hub.manager.create(ResetRequest(env="terminal", from_snapshot=info.snapshot_id))


async def test_an_office_session_from_a_snapshot_has_its_moments_documents() -> None:
    settings = make_settings(families=["office"], snapshot_ttl_s=600)
    task = "office/banking/t09-update"
    async with running_hub(settings) as hub:
        source = (await hub.manager.create(ResetRequest(env="office", task_id=task))).session_id
        await office_write(hub, source, 0, "then")
        info = await hub.manager.snapshot(source)
        await office_write(hub, source, 0, "later")  # the source goes on
        await hub.manager.close(source)
    async with running_hub(settings) as hub:  # a new server over the same data folder
        started = await hub.manager.create(ResetRequest(env="office", from_snapshot=info.snapshot_id))
        try:
            assert started.observation.data["files"] == ["deck.pptx", "update.xlsx"]
            assert hub.manager.get(started.session_id).step_count == 1
            assert await office_read(hub, started.session_id, 0) == "then"
        finally:
            await hub.manager.close(started.session_id)
            hub.manager.delete_snapshot(info.snapshot_id)


async def test_a_snapshot_expires_and_the_reaper_removes_it() -> None:
    async with running_hub(make_settings(families=["echo"], snapshot_ttl_s=0.5)) as hub:
        source = (await hub.manager.create(ResetRequest(env="echo", task_id="echo/say-done"))).session_id
        info = await hub.manager.snapshot(source)
        folder = hub.manager.snapshots.root / info.snapshot_id
        assert folder.is_dir()
        time.sleep(0.6)
        with pytest.raises(NotFound):
            await hub.manager.create(ResetRequest(env="echo", from_snapshot=info.snapshot_id))
        await hub.manager.reap_once()
        assert not folder.exists()
        await hub.manager.close(source)


async def test_snapshots_count_against_a_quota_and_a_finished_episode_has_none(hub: Hub) -> None:
    hub.manager.snapshots.quota = 1
    source = (await hub.manager.create(ResetRequest(env="echo", task_id="echo/say-done"))).session_id
    try:
        first = await hub.manager.snapshot(source)
        with pytest.raises(QuotaExceeded):
            await hub.manager.snapshot(source)
        hub.manager.delete_snapshot(first.snapshot_id)
        await hub.manager.verify(source)
        with pytest.raises(EpisodeOver):
            await hub.manager.snapshot(source)
        assert hub.manager.list_snapshots().snapshots == []  # nothing half-made was left
    finally:
        await hub.manager.close(source)


def test_a_snapshot_is_its_owners_alone(in_process) -> None:
    with EnvClient(transport=in_process.transport()) as mine, EnvClient(transport=in_process.transport()) as other:
        with mine.session("echo", "echo/say-done") as session:
            session.step("echo", message="done")
            info = session.snapshot()
        assert [s.snapshot_id for s in mine.snapshots()] == [info.snapshot_id]
        assert other.snapshots() == []
        with pytest.raises(NotFound):
            other.reset("echo", from_snapshot=info.snapshot_id)
        other.delete_snapshot(info.snapshot_id)  # a no-op for anyone else
        started = mine.reset("echo", from_snapshot=info.snapshot_id)
        try:
            assert mine.verify(started.session_id).passed  # "done" was said before the snapshot
        finally:
            mine.close_session(started.session_id)
            mine.delete_snapshot(info.snapshot_id)
        assert mine.snapshots() == []


@pytest.mark.usefixtures("echo_cannot_copy")
async def test_a_family_that_cannot_copy_its_live_state_has_no_snapshot(hub: Hub) -> None:
    source = (await hub.manager.create(ResetRequest(env="echo", task_id="echo/say-done"))).session_id
    with pytest.raises(NotSupported, match="cannot copy a live episode"):
        await hub.manager.snapshot(source)
    assert hub.manager.list_snapshots().snapshots == []
    await hub.manager.close(source)
