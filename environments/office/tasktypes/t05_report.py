"""T5: business document from data."""

from __future__ import annotations

from environments.office.tasktypes._common import Built, Ctx, call, money, save_xlsx, totals_by


def t05_report(c: Ctx) -> Built:
    recs = c.records(c.rng.randint(12, 20))
    save_xlsx(c.state / "data.xlsx", {"Data": [["ID", "Category", "Amount"]] +
                                      [[r["id"], r["category"], r["amount"]] for r in recs]})
    tot = totals_by(recs)
    grand = round(sum(tot.values()), 2)
    h = [c.t("Summary", "요약"), c.t("Key Figures", "주요 수치"), c.t("Recommendations", "권고 사항")]
    title = c.t(f"{c.industry()} {c.amount()} Report", f"{c.industry()} {c.amount()} 보고서")
    top = max(tot, key=tot.get)
    summary = c.t(
        f"Total {c.amount().lower()} across {len(recs)} {c.entity()}s was {money(grand)}. {top} was the largest "
        f"category with {money(tot[top])}.",
        f"{len(recs)}건의 {c.entity()} 전체 {c.amount()}은(는) {money(grand)}입니다. 가장 큰 카테고리는 {top}(으)로 "
        f"{money(tot[top])}입니다.")
    recs_txt = c.t(
        f"Focus review on {top}, which drives the largest share of {c.amount().lower()} at {money(tot[top])}. "
        "Monitor the smaller categories monthly and report material changes to the committee.",
        f"{c.amount()} 비중이 가장 큰 {top}({money(tot[top])})에 검토를 집중하고, 나머지 카테고리는 매월 점검하여 "
        "중요한 변동을 위원회에 보고할 것을 권고합니다.")
    table = [["Category", "Total"]] + [[k, money(v)] for k, v in tot.items()]
    prompt = c.t(
        f"Using `data.xlsx`, write `report.docx`: a title \"{title}\" (Title style), then three Heading 1 sections "
        f"in this order: {h[0]}, {h[1]}, {h[2]}. {h[0]} states the grand total {c.amount().lower()} (formatted like "
        "1,234.56). Key Figures contains a table with header row Category, Total and one row per category "
        "(alphabetical) with its total formatted like 1,234.56. Recommendations gives at least one concrete "
        "recommendation that names the category it concerns and, in the same sentence, that category's total. "
        "Every section must have body text of its own, written as prose; keep the document between 60 and 1500 "
        "words.",
        f"`data.xlsx`를 이용해 `report.docx`를 작성하십시오. 제목 \"{title}\"(Title 스타일) 다음에 Heading 1 섹션 세 개를 "
        f"이 순서로 두십시오: {h[0]}, {h[1]}, {h[2]}. {h[0]}에는 전체 {c.amount()} 합계를 1,234.56 형식으로 적으십시오. "
        f"{h[1]}에는 머리글 행이 Category, Total 인 표를 넣고 카테고리별(문자 순) 합계를 1,234.56 형식으로 한 행씩 넣으십시오. "
        f"{h[2]}에는 대상 카테고리와 그 카테고리의 합계를 같은 문장에 밝힌 구체적인 권고를 하나 이상 적으십시오. 모든 섹션에 "
        "각자의 본문(문장으로 쓴 글)이 있어야 하며 문서는 60~1500 단어로 하십시오.")
    blocks = [{"type": "heading", "text": title, "level": 0}, {"type": "heading", "text": h[0], "level": 1},
              {"type": "paragraph", "text": summary}, {"type": "heading", "text": h[1], "level": 1},
              {"type": "paragraph", "text": c.t("Totals by category:", "카테고리별 합계:")},
              {"type": "table", "rows": table}, {"type": "heading", "text": h[2], "level": 1},
              {"type": "paragraph", "text": recs_txt}]
    return Built(
        title=c.t(f"Write a {c.amount().lower()} report ({c.ind.name})", f"{c.amount()} 보고서 작성 ({c.ind.name_ko})"),
        prompt=prompt,
        expected={"file": "report.docx", "title": title, "headings": h, "totals": tot, "grand": grand,
                  "min_words": 60, "max_words": 1500, "language": c.lang, "prompt": prompt},
        actions=[call("docx_write", path="report.docx", blocks=blocks)], deliverables=["report.docx"],
        inputs=["data.xlsx"],
        mutate={"number": {"file": "report.docx", "find": money(next(iter(tot.values())))},
                "section": {"file": "report.docx", "heading": h[2]}, "reorder": {"heading": h[0]},
                "prose": {"file": "report.docx", "headings": [h[0], h[2]]}})
