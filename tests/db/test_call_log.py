"""The call log the process checks judge (`calls.json`): what each call showed and wrote."""

from __future__ import annotations

import json

import pytest

from envhub.spec import ResetRequest, StepRequest, ToolCall

pytestmark = pytest.mark.slow


async def logged(db_hub, tmp_path, calls: list[tuple[str, dict]]) -> list[dict]:
    m = db_hub.manager
    c = await m.create(ResetRequest(env="db", task_id="db/bank/refuse-overdraw-001"))
    for tool, args in calls:
        await m.step(c.session_id, StepRequest(action=ToolCall(tool=tool, arguments=args)))
    await m.get(c.session_id).env.export_state(tmp_path / "state")
    await m.close(c.session_id)
    return json.loads((tmp_path / "state" / "calls.json").read_text())


async def test_reads_record_the_rows_they_showed(db_hub, tmp_path):
    log = await logged(db_hub, tmp_path, [("get_account", {"account_id": 59}), ("search_accounts", {"limit": 100})])
    assert "accounts|59" in log[0]["seen"] and log[0]["ok"] and not log[0]["writes"]
    listed = sum(k.startswith("accounts|") for k in log[1]["seen"])
    assert listed > 50 and "accounts|59" in log[1]["seen"]  # every account (the bank has fewer than 100)


async def test_rows_loaded_but_not_shown_are_not_seen(db_hub, tmp_path):
    # list_appointments filters by date in Python: the rows it dropped were loaded, never shown.
    m = db_hub.manager
    c = await m.create(ResetRequest(env="db", task_id="db/clinic/refuse-double-book-001"))
    r = await m.step(c.session_id, StepRequest(action=ToolCall(tool="list_appointments",
                                                               arguments={"doctor_id": 1, "date": "2025-03-20"})))
    await m.get(c.session_id).env.export_state(tmp_path / "s")
    await m.close(c.session_id)
    seen = json.loads((tmp_path / "s" / "calls.json").read_text())[0]["seen"]
    assert sorted(seen) == sorted(f"appointments|{a['id']}" for a in r.observation.data["appointments"])


async def test_rejected_calls_are_logged_with_what_the_rule_looked_at(db_hub, tmp_path):
    log = await logged(db_hub, tmp_path, [("transfer", {"from_account_id": 59, "to_account_id": 60,
                                                        "amount": 999999.0, "memo": "x"})])
    assert log[0]["ok"] is False and "insufficient" in log[0]["error"]
    assert "accounts|59" in log[0]["seen"] and "wrote" not in log[0]


async def test_writes_record_rows_and_columns(db_hub, tmp_path):
    log = await logged(db_hub, tmp_path, [("update_customer", {"customer_id": 3, "phone": "555-000-0000"}),
                                          ("deposit", {"account_id": 60, "amount": 1.0, "memo": "x"})])
    assert log[0]["wrote"] == [{"row": "customers|3", "op": "update", "cols": ["phone"]}]
    ops = {(w["row"].split("|")[0], w["op"]) for w in log[1]["wrote"]}
    assert ops == {("accounts", "update"), ("transactions", "insert")}
