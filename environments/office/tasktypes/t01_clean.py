"""T1: clean & normalise."""

from __future__ import annotations

import datetime as dt
from typing import Any

from environments.office.tasktypes._common import Built, Ctx, call, save_xlsx


def t01_clean(c: Ctx) -> Built:
    recs = c.records(c.rng.randint(12, 18))
    head = ["ID", "Name", "Category", "Date", "Amount"]
    raw: list[list[Any]] = [head]
    for r in recs:
        d = dt.date.fromisoformat(r["date"])
        date_s = c.rng.choice([d.strftime("%Y/%m/%d"), d.strftime("%d.%m.%Y"), d.isoformat()])
        name = c.rng.choice([f"  {r['name']} ", r["name"].replace(" ", "  "), r["name"] + "  ", r["name"]])
        amt: Any = c.rng.choice([r["amount"], f"{r['amount']:,.2f}", f" {r['amount']:.2f} "])
        raw.append([r["id"], name, r["category"], date_s, amt])
    for r in c.rng.sample(raw[1:], 3):
        raw.insert(c.rng.randrange(1, len(raw)), list(r))
    raw.insert(c.rng.randrange(2, len(raw)), [None] * 5)
    save_xlsx(c.state / "raw" / "export.xlsx", {"Export": raw})
    rows = [[r["id"], r["name"], r["category"], r["date"], r["amount"]] for r in recs]
    prompt = c.t(
        f"`raw/export.xlsx` is a raw {c.industry().lower()} {c.entity()} extract with duplicate rows, a blank row, "
        "stray spaces, mixed date formats (YYYY/MM/DD, DD.MM.YYYY, YYYY-MM-DD) and amounts stored as text. Create "
        "`clean.xlsx` with one sheet named `Clean` whose first row is exactly ID, Name, Category, Date, Amount, then "
        "one row per distinct ID sorted by ID: names trimmed with single spaces between words, dates as text "
        "YYYY-MM-DD, amounts as numbers. Do not modify `raw/export.xlsx`.",
        f"`raw/export.xlsx`는 {c.industry()} {c.entity()} 원시 추출 파일로, 중복 행, 빈 행, 불필요한 공백, 여러 날짜 형식"
        "(YYYY/MM/DD, DD.MM.YYYY, YYYY-MM-DD), 텍스트로 저장된 금액이 섞여 있습니다. `clean.xlsx`를 만들고 시트 이름은 "
        "`Clean`, 첫 행은 정확히 ID, Name, Category, Date, Amount 로 하십시오. 그 아래에는 ID별로 한 행씩 ID 오름차순으로 "
        "정렬하고, 이름은 앞뒤 공백을 없애고 단어 사이 공백은 하나로, 날짜는 YYYY-MM-DD 텍스트로, 금액은 숫자로 넣으십시오. "
        "`raw/export.xlsx`는 수정하지 마십시오.")
    return Built(
        title=c.t(f"Clean a {c.entity()} extract ({c.ind.name})", f"{c.entity()} 추출 데이터 정제 ({c.ind.name_ko})"),
        prompt=prompt, expected={"file": "clean.xlsx", "sheet": "Clean", "header": head, "rows": rows},
        actions=[call("xlsx_write", path="clean.xlsx", sheet="Clean", rows=[head] + rows, create=True)],
        deliverables=["clean.xlsx"], inputs=["raw/export.xlsx"],
        mutate={"number": {"file": "clean.xlsx", "sheet": "Clean", "cell": "E2"}}, difficulty="easy")
