"""T10: pdf -> structured xlsx."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from environments.office.tasktypes._common import Built, Ctx, call, money, save_docx


def t10_extract(c: Ctx, pdf: Callable[[Path, Path], None]) -> Built:
    recs = c.records(c.rng.randint(6, 10))
    for r in recs:
        r["amount"] = round(r["amount"], 2)
    chunks = [recs[i::3] for i in range(3)]
    for n, chunk in enumerate(chunks, 1):
        src = c.state / f"_tmp_statement_{n}.docx"
        save_docx(src, [("title", c.t(f"Statement {n}", f"명세서 {n}")),
                        ("p", c.t(f"Issued by {c.fake.company()}", f"발행: {c.fake.company()}")),
                        ("table", [["Ref", "Date", "Party", "Amount"]] +
                         [[r["id"], r["date"], r["name"], money(r["amount"])] for r in chunk])])
        (c.state / "statements").mkdir(exist_ok=True)
        pdf(src, c.state / "statements" / f"statement_{n}.pdf")
        src.unlink()
    rows = sorted([[r["id"], r["date"], r["name"], r["amount"]] for r in recs])
    head = ["Ref", "Date", "Party", "Amount"]
    prompt = c.t(
        "The PDFs in `statements/` each list records in a table (Ref, Date, Party, Amount). Extract every record into "
        "`extracted.xlsx`, sheet `Records`, header row Ref, Date, Party, Amount, one row per record sorted by Ref, "
        "dates as YYYY-MM-DD text and amounts as numbers.",
        "`statements/`의 PDF에는 각각 Ref, Date, Party, Amount 표가 있습니다. 모든 레코드를 `extracted.xlsx`의 `Records` "
        "시트로 추출하십시오. 머리글 행은 Ref, Date, Party, Amount, 레코드당 한 행, Ref 순 정렬, 날짜는 YYYY-MM-DD "
        "텍스트, 금액은 숫자로 넣으십시오.")
    return Built(
        title=c.t(f"Extract statements from PDF ({c.ind.name})", f"PDF 명세서 추출 ({c.ind.name_ko})"), prompt=prompt,
        expected={"file": "extracted.xlsx", "header": head, "rows": rows},
        actions=[call("xlsx_write", path="extracted.xlsx", sheet="Records", rows=[head] + rows, create=True)],
        deliverables=["extracted.xlsx"], inputs=[f"statements/statement_{n}.pdf" for n in (1, 2, 3)],
        mutate={"number": {"file": "extracted.xlsx", "sheet": "Records", "cell": "D2"}})
