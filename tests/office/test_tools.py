"""The office tools, driven through the environment as an agent would."""

from __future__ import annotations

import os

import pytest

from environments.office import OfficeFamily
from envhub.config import Settings
from envhub.env import EnvContext
from envhub.errors import AgentError
from envhub.sandbox.local import LocalBackend
from envhub.spec import ToolCall
from envhub.tasks.model import Task


@pytest.fixture
async def env(tmp_path):
    family = OfficeFamily()
    settings = Settings(data_dir=tmp_path / "data")
    family.setup(settings)
    ctx = EnvContext(settings=settings, sandbox=LocalBackend(tmp_path / "sb"), sessions_dir=tmp_path, session_id="w")
    (tmp_path / "w").mkdir()
    task_dir = tmp_path / "task"
    (task_dir / "state").mkdir(parents=True)
    (task_dir / "tests").mkdir()
    (task_dir / "tests" / "test_x.py").write_text("def test_x():\n    pass\n")
    (task_dir / "prompt.md").write_text("do office work")
    (task_dir / "task.yaml").write_text("id: office/task\nfamily: office\ntitle: t\n")
    e = family.make(ctx)
    await e.reset(task=Task.load(task_dir))
    yield e
    await e.close()
    await family.shutdown()


async def call(env, tool, **args):
    return await env.step(ToolCall(tool=tool, arguments=args))


async def test_xlsx_formulas_and_recalculation(env):
    await call(env, "xlsx_write", path="m.xlsx", sheet="S", cells={"A1": 2, "A2": 3, "A3": "=A1*A2+1"}, create=True)
    obs = await call(env, "xlsx_recalculate", path="m.xlsx")
    cells = {c["cell"]: c for row in obs.data["sheets"]["S"]["cells"] for c in row}
    assert cells["A3"]["value"] == 7 and cells["A3"]["formula"] == "=A1*A2+1"


async def test_docx_write_edit_read(env):
    await call(env, "docx_write", path="r.docx", blocks=[
        {"type": "heading", "text": "Report", "level": 0}, {"type": "paragraph", "text": "Intro"},
        {"type": "paragraph", "text": "a\tb"}, {"type": "paragraph", "text": "1\t2"}])
    await call(env, "docx_edit", path="r.docx", ops=[{"op": "set_style", "index": 1, "style": "Heading 1"},
                                                     {"op": "paragraphs_to_table", "start": 2, "end": 3}])
    obs = await call(env, "read_document", path="r.docx")
    assert obs.data["tables"] == [[["a", "b"], ["1", "2"]]]
    assert [p["style"] for p in obs.data["paragraphs"]] == ["Title", "Heading 1"]


async def test_pptx_write_edit_and_pdf(env):
    await call(env, "pptx_write", path="d.pptx", slides=[
        {"layout": "title", "title": "Deck"},
        {"title": "Chart", "chart": {"type": "column", "categories": ["a", "b"], "series": [{"name": "v",
                                                                                              "values": [1, 2]}]},
         "notes": "n"}])
    await call(env, "pptx_edit", path="d.pptx", ops=[{"op": "set_chart_data", "slide": 2, "categories": ["a", "b"],
                                                      "series": [{"name": "v", "values": [5, 6]}]},
                                                     {"op": "move_slide", "slide": 2, "to": 1}])
    obs = await call(env, "read_document", path="d.pptx")
    assert [s["title"] for s in obs.data["slides"]] == ["Chart", "Deck"]
    assert obs.data["slides"][0]["charts"][0]["series"][0]["values"] == [5.0, 6.0]
    await call(env, "pdf_export", source="d.pptx", dest="d.pdf")
    merged = await call(env, "pdf_merge", dest="all.pdf", parts=[{"path": "d.pdf", "bookmark": "Deck"}])
    assert merged.data["pages"] == 2
    obs = await call(env, "read_document", path="all.pdf")
    assert obs.data["outline"] == [["Deck", 1]] or obs.data["outline"] == [("Deck", 1)]


@pytest.mark.parametrize("bad", ["../x.docx", "/etc/passwd.docx", ".envhub/recalc/x.xlsx", "a/../../b.docx"])
async def test_paths_cannot_leave_the_workspace(env, bad):
    with pytest.raises(AgentError):
        await call(env, "docx_write", path=bad, blocks=[{"type": "paragraph", "text": "x"}])


async def test_symlinks_are_refused(env):
    os.symlink("/etc", env.ws.root / "etc")
    with pytest.raises(AgentError, match="symbolic"):
        await call(env, "read_document", path="etc/hosts.pdf")


@pytest.mark.parametrize("where", ["sheet", "rows"])
async def test_a_control_character_a_workbook_cannot_hold_is_an_agent_error(env, where):
    """In a cell, openpyxl refuses it with its own exception, not a ValueError: that was a tool crash
    (env_error). In a sheet name it was a ValueError already; both must read as the agent's."""
    args = {"sheet": "S\x01" if where == "sheet" else "S", "rows": [["a\x01b"]] if where == "rows" else [["ok"]]}
    with pytest.raises(AgentError, match="control characters"):
        await call(env, "xlsx_write", path="c.xlsx", create=True, **args)


async def test_bad_agent_file_is_an_agent_error(env):
    (env.ws.root / "x.xlsx").write_bytes(b"this is text, not a workbook")
    with pytest.raises(AgentError, match="not a xlsx"):
        await call(env, "read_document", path="x.xlsx")
    with pytest.raises(AgentError, match="unknown tool"):
        await call(env, "rm_rf")
    with pytest.raises(AgentError, match="is not a parameter of this tool"):
        await call(env, "list_files", evil=1)


async def test_100mb_document_is_an_agent_error(env):
    with (env.ws.root / "big.docx").open("wb") as f:
        f.write(b"PK\x03\x04")
        f.truncate(100 * 1024 * 1024)
    with pytest.raises(AgentError, match="over the"):
        await call(env, "read_document", path="big.docx")


async def test_recalculated_cell_filename_shows_the_workspace_not_the_host(env, tmp_path):
    """`=CELL("filename")` after a recalculation names the document as the agent knows it
    (/workspace/...), never the host folder the session's workspace lives in."""
    await call(env, "xlsx_write", path="dir/m.xlsx", sheet="S", cells={"A1": '=CELL("filename")'}, create=True)
    obs = await call(env, "xlsx_recalculate", path="dir/m.xlsx")
    [cell] = [c for row in obs.data["sheets"]["S"]["cells"] for c in row if c["cell"] == "A1"]
    assert "/workspace/dir/m.xlsx" in str(cell["value"]), cell
    for shown in (obs.text, str(obs.data)):
        assert str(tmp_path) not in shown and "recalc-" not in shown and "/tmp/" not in shown


@pytest.mark.parametrize("start", ["\u0015\U000270ca}", "A0", "ZZZZ1", "1A"])
async def test_a_bad_start_cell_is_an_agent_error(env, start):
    """`xlsx_write`'s rows start at an A1 cell; anything else is the agent's error, not a crash
    (openpyxl's CellCoordinatesException is no ValueError: found by tests/core/test_tool_fuzz.py)."""
    with pytest.raises(AgentError, match="start cell"):
        await call(env, "xlsx_write", path="raw/x.xlsx", sheet="S", rows=[[1, 2]], start=start, create=True)
