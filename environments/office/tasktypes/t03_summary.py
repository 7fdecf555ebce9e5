"""T3: summary + chart."""

from __future__ import annotations

from typing import Any

from environments.office.tasktypes._common import Built, Ctx, call, save_xlsx, totals_by


def t03_summary(c: Ctx) -> Built:
    # Which of the industry's categories appear is drawn per task (3 to all but one of them, in the
    # industry's order): a fixed category list made the same SUMIF rows right for every task of it.
    pool = c.cats()
    recs = c.records(c.rng.randint(15, 25), cats=sorted(c.rng.sample(pool, c.rng.randint(3, len(pool) - 1)),
                                                          key=pool.index))
    save_xlsx(c.state / "data.xlsx", {"Data": [["ID", "Category", "Amount"]] +
                                      [[r["id"], r["category"], r["amount"]] for r in recs]})
    tot = totals_by(recs)
    k = len(tot)
    title = c.t(f"{c.amount()} by category", f"카테고리별 {c.amount()}")
    n = len(recs) + 1
    cells: dict[str, Any] = {"A1": "Category", "B1": "Total"}
    for i, cat in enumerate(tot, 2):
        cells[f"A{i}"] = cat
        cells[f"B{i}"] = f"=SUMIF(Data!$B$2:$B${n},A{i},Data!$C$2:$C${n})"
    prompt = c.t(
        f"In `data.xlsx` (sheet `Data`: ID, Category, Amount), add a sheet `Summary` with A1 Category and B1 Total, "
        f"then one row per category sorted alphabetically with the category's total {c.amount().lower()}. Add a "
        f"column chart to the Summary sheet whose data is Summary!B1:B{k + 1} and categories Summary!A2:A{k + 1}, "
        f"titled \"{title}\". Leave the Data sheet unchanged.",
        f"`data.xlsx`(시트 `Data`: ID, Category, Amount)에 `Summary` 시트를 추가하고 A1에 Category, B1에 Total을 넣은 뒤 "
        f"카테고리별로 한 행씩 가나다(문자) 순으로 정렬하여 카테고리별 {c.amount()} 합계를 넣으십시오. Summary 시트에 "
        f"데이터 Summary!B1:B{k + 1}, 항목 Summary!A2:A{k + 1}인 세로 막대(column) 차트를 추가하고 제목을 \"{title}\"로 "
        "하십시오. Data 시트는 변경하지 마십시오.")
    return Built(
        title=c.t(f"Summary table and chart ({c.ind.name})", f"요약표와 차트 ({c.ind.name_ko})"), prompt=prompt,
        expected={"file": "data.xlsx", "totals": tot, "chart_title": title, "data_rows": len(recs)},
        actions=[call("xlsx_write", path="data.xlsx", sheet="Summary", cells=cells),
                 call("xlsx_chart", path="data.xlsx", sheet="Summary", type="column", data=f"Summary!B1:B{k + 1}",
                      categories=f"Summary!A2:A{k + 1}", anchor="D2", title=title)],
        deliverables=["data.xlsx"],
        mutate={"number": {"file": "data.xlsx", "sheet": "Summary", "cell": "B2"},
                "section": {"file": "data.xlsx", "sheet": "Summary"}}, difficulty="easy")
