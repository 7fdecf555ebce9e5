"""T7: edit / restructure a document."""

from __future__ import annotations

from typing import Any

import docx

from environments.office.tasktypes._common import Built, Ctx, call, save_docx

#: Section names a manual draws from (the first always leads): how many sections, which, how many
#: sub-sections each and where the task table sits are drawn per task, so no fixed list of edits
#: (paragraph indices) restructures two manuals alike.
SECTIONS = (("Scope", "적용 범위"), ("Responsibilities", "책임"), ("Procedure", "절차"), ("Records", "기록"),
            ("Definitions", "정의"), ("Training", "교육"), ("Review", "검토"), ("Exceptions", "예외 처리"))


def t07_restructure(c: Ctx) -> Built:
    drawn = [SECTIONS[0], *c.rng.sample(SECTIONS[1:], c.rng.randint(2, 5))]
    secs = [c.t(en, ko) for en, ko in drawn]
    table_in = c.rng.randint(2, len(secs))  # the section holding the task table
    days = c.rng.randint(5, 45)
    blocks: list[tuple[str, Any]] = [("title", c.t(f"{c.industry()} Operations Manual", f"{c.industry()} 운영 매뉴얼"))]
    heads: list[list[Any]] = []
    body: list[str] = []
    cats = c.cats()
    table_rows = [[c.t("Task", "업무"), c.t("Owner", "담당"), c.t("Frequency", "주기")]] + [
        [c.t(f"Review {x}", f"{x} 검토"), c.fake.name(), c.rng.choice([c.t("Monthly", "매월"), c.t("Weekly", "매주")])]
        for x in c.rng.sample(cats, min(len(cats), c.rng.randint(2, 5)))]
    for i, s in enumerate(secs, 1):
        blocks.append(("bold", f"{i}. {s}"))
        heads.append([1, f"{i}. {s}"])
        for j in range(1, c.rng.randint(1, 3) + 1):
            sub = f"{i}.{j} " + c.t(f"{s} detail {j}", f"{s} 세부 {j}")
            blocks.append(("bold", sub))
            heads.append([2, sub])
            for _ in range(c.rng.randint(1, 2)):
                line = c.fake.catch_phrase() + "에 관한 사항을 정리합니다." if c.ko else c.fake.sentence(nb_words=12)
                blocks.append(("p", line))
                body.append(line)
        if i == table_in:
            figure = c.t(f"Every exception must be closed within {days} days.",
                         f"모든 예외 사항은 {days}일 이내에 종결해야 합니다.")
            blocks.append(("p", figure))
            body.append(figure)
            for r in table_rows:
                blocks.append(("p", "\t".join(r)))
    save_docx(c.state / "manual.docx", blocks)
    d = docx.Document(str(c.state / "manual.docx"))
    ops: list[dict[str, Any]] = []
    texts = [p.text for p in d.paragraphs]
    for lvl, h in heads:
        ops.append({"op": "set_style", "index": texts.index(h), "style": f"Heading {lvl}"})
    start = texts.index("\t".join(table_rows[0]))
    ops.append({"op": "paragraphs_to_table", "start": start, "end": start + len(table_rows) - 1, "sep": "\t"})
    prompt = c.t(
        "Restructure `manual.docx` in place. The section titles (\"1. Scope\" style lines) are bold Normal paragraphs: "
        "give each numbered section title the Heading 1 style and each sub-section title (like \"1.1 ...\") the Heading "
        f"2 style. Convert the tab-separated lines in section {table_in} (Task/Owner/Frequency) into a real table with "
        "the same cells, header row first. Keep every other paragraph's text unchanged and in the same order.",
        "`manual.docx`를 직접 수정해 구조를 정리하십시오. 섹션 제목(\"1. ...\" 형식)은 굵은 Normal 문단입니다. 번호 섹션 "
        "제목에는 Heading 1, 하위 섹션 제목(\"1.1 ...\" 형식)에는 Heading 2 스타일을 적용하십시오. "
        f"{table_in}장의 탭으로 구분된 "
        "줄(업무/담당/주기)은 같은 셀을 가진 실제 표로 바꾸고 머리글 행을 첫 행으로 두십시오. 나머지 문단의 텍스트는 "
        "바꾸지 말고 순서도 유지하십시오.")
    return Built(
        title=c.t(f"Restructure an operations manual ({c.ind.name})", f"운영 매뉴얼 구조 정리 ({c.ind.name_ko})"),
        prompt=prompt, expected={"file": "manual.docx", "headings": heads, "table": table_rows, "body": body,
                                 "title": blocks[0][1]},
        actions=[call("docx_edit", path="manual.docx", ops=ops)], deliverables=["manual.docx"],
        mutate={"number": {"file": "manual.docx", "find": str(days)},
                "section": {"file": "manual.docx", "heading": next(h for lvl, h in heads[1:] if lvl == 1)},
                "reorder": {"heading": heads[0][1]}})
