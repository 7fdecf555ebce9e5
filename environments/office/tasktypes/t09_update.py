"""T9: update an existing deck."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pptx
from pptx.chart.data import CategoryChartData
from pptx.enum.chart import XL_CHART_TYPE
from pptx.util import Inches

from environments.office.data import amounts
from environments.office.tasktypes._common import Built, Ctx, call, money, save_xlsx


def _deck(path: Path, c: Ctx, titles: list[str], cats: list[str], values: list[float]) -> None:
    prs = pptx.Presentation()
    s = prs.slides.add_slide(prs.slide_layouts[0])
    s.shapes.title.text = titles[0]
    s.placeholders[1].text = c.fake.company()
    s = prs.slides.add_slide(prs.slide_layouts[5])
    s.shapes.title.text = titles[1]
    s.shapes.add_textbox(Inches(0.5), Inches(1.5), Inches(9), Inches(1)).text_frame.text = c.t(
        "Figures are refreshed each period from the operating data.", "수치는 매 기간 운영 데이터로 갱신합니다.")
    s = prs.slides.add_slide(prs.slide_layouts[5])
    s.shapes.title.text = titles[2]
    rows = [["Category", "Value"]] + [[k, money(v)] for k, v in zip(cats, values)]
    t = s.shapes.add_table(len(rows), 2, Inches(0.5), Inches(1.4), Inches(4), Inches(0.35) * len(rows)).table
    for i, r in enumerate(rows):
        for j, v in enumerate(r):
            t.cell(i, j).text = v
    cd = CategoryChartData()
    cd.categories = cats
    cd.add_series("Value", values)
    s.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(5), Inches(1.4), Inches(4.5), Inches(4), cd)
    s = prs.slides.add_slide(prs.slide_layouts[5])
    s.shapes.title.text = titles[3]
    s.shapes.add_textbox(Inches(0.5), Inches(1.5), Inches(9), Inches(1)).text_frame.text = c.t(
        "Outlook remains stable; next update next period.", "전망은 안정적이며 다음 기간에 갱신합니다.")
    prs.save(str(path))


def t09_update(c: Ctx) -> Built:
    cats = c.cats(c.rng.randint(3, 5))
    old = amounts(c.ind, c.rng, len(cats))
    new = amounts(c.ind, c.rng, len(cats))
    titles = [c.t(f"{c.industry()} Update", f"{c.industry()} 업데이트"), c.t("Overview", "개요"),
              c.t("Figures", "수치"), c.t("Outlook", "전망")]
    _deck(c.state / "deck.pptx", c, titles, cats, old)
    save_xlsx(c.state / "update.xlsx", {"Update": [["Category", "Value"]] + [[k, v] for k, v in zip(cats, new)]})
    from verifiers import office as ov

    orig = ov.slides(pptx.Presentation(str(c.state / "deck.pptx")))
    untouched = {str(s["index"]): ov.slide_text(s) for s in orig if s["index"] != 3}
    ops: list[dict[str, Any]] = [{"op": "set_table_cell", "slide": 3, "row": i + 1, "col": 1, "text": money(v)}
                                 for i, v in enumerate(new)]
    ops.append({"op": "set_chart_data", "slide": 3, "categories": cats, "series": [{"name": "Value", "values": new}]})
    prompt = c.t(
        "Update `deck.pptx` with the new figures in `update.xlsx`: on slide 3 (\"Figures\") set each category's "
        "Value in the table (formatted like 1,234.56) and the chart's Value series to the new numbers. Change nothing "
        "else: same slides, same order, same text on the other slides.",
        "`update.xlsx`의 새 수치로 `deck.pptx`를 갱신하십시오. 3번 슬라이드(\"수치\")의 표에서 각 카테고리의 Value를 "
        "1,234.56 형식으로, 차트의 Value 계열을 새 수치로 바꾸십시오. 그 밖에는 바꾸지 마십시오(슬라이드 구성, 순서, "
        "다른 슬라이드의 텍스트 유지).")
    return Built(
        title=c.t(f"Refresh figures in a deck ({c.ind.name})", f"발표자료 수치 갱신 ({c.ind.name_ko})"), prompt=prompt,
        expected={"file": "deck.pptx", "titles": titles, "categories": cats, "new": new, "untouched": untouched},
        actions=[call("pptx_edit", path="deck.pptx", ops=ops)], deliverables=["deck.pptx"], inputs=["update.xlsx"],
        mutate={"number": {"file": "deck.pptx", "find": money(new[0])}, "section": {"file": "deck.pptx", "slide": 2}},
        difficulty="easy")
