"""T2: calculation model with live formulas."""

from __future__ import annotations

from typing import Any

from environments.office.data import amounts
from environments.office.tasktypes._common import Built, Ctx, call, save_xlsx


def t02_model(c: Ctx) -> Built:
    # The Inputs layout is drawn (title rows above the header, the order of the quantity, unit cost
    # and note columns, where the rate sits): the model's formulas are then the task's own, and no
    # list of formulas learned on one task fits another (issue #38's replayed-oracle baseline).
    n = c.rng.randint(5, 8)
    items = [f"{c.cats()[i % 5]} {c.fake.word().capitalize() if not c.ko else c.fake.word()} {i + 1}" for i in range(n)]
    qty = [c.rng.randint(2, 40) for _ in range(n)]
    unit = amounts(c.ind, c.rng, n)
    unit = [round(u / 10, 2) for u in unit]
    rate = round(c.rng.choice([0.05, 0.075, 0.1, 0.125, 0.15]), 3)
    head = c.rng.randint(1, 3)  # the header's row; the title and a note above it
    first, last = head + 1, head + n
    qcol, ucol, ncol = c.rng.sample(["B", "C", "D"], 3)
    rcol = c.rng.choice(["G", "H", "I"])
    rate_cell = f"{rcol}{c.rng.randint(1, 3)}"
    grid: dict[str, Any] = {}
    above = [c.t(f"{c.industry()}: cost inputs", f"{c.industry()}: 원가 입력"),
             c.t(f"Prepared by {c.fake.name()}", f"작성자: {c.fake.name()}")]
    for r, text in enumerate(above[:head - 1], 1):
        grid[f"A{r}"] = text
    notes = [c.t("per unit", "단위당"), c.t("contracted", "계약"), c.t("estimate", "추정"), c.t("quoted", "견적")]
    grid |= {f"A{head}": "Item", f"{qcol}{head}": "Quantity", f"{ucol}{head}": "Unit cost", f"{ncol}{head}": "Note"}
    for i in range(n):
        r = first + i
        grid |= {f"A{r}": items[i], f"{qcol}{r}": qty[i], f"{ucol}{r}": unit[i], f"{ncol}{r}": c.rng.choice(notes)}
    grid |= {f"{chr(ord(rcol) - 1)}{rate_cell[1:]}": "Rate", rate_cell: rate}
    rows = _rows(grid)
    save_xlsx(c.state / "model.xlsx", {"Inputs": rows})
    expected_rows = [round(qty[i] * unit[i] * (1 + rate), 2) for i in range(n)]
    total = round(sum(qty[i] * unit[i] * (1 + rate) for i in range(n)), 2)
    fixed = f"Inputs!${rcol}${rate_cell[1:]}"
    cells: dict[str, Any] = {"A1": "Item", "B1": "Cost"}
    for i in range(n):
        r, src = i + 2, first + i
        cells[f"A{r}"] = f"=Inputs!A{src}"
        cells[f"B{r}"] = f"=Inputs!{qcol}{src}*Inputs!{ucol}{src}*(1+{fixed})"
    cells[f"A{n + 2}"] = "Total"
    cells[f"B{n + 2}"] = f"=SUM(B2:B{n + 1})"
    # Liveness (hidden, drawn afresh at every verify by `liveness.py`): the inputs and the range
    # each may take; the check computes cost = quantity × unit cost × (1 + rate) at each point.
    liveness = {f"Inputs!{rate_cell}": {"base": rate, "min": 0.01, "max": 0.3, "decimals": 3}} | \
        {f"Inputs!{qcol}{first + i}": {"base": qty[i], "min": 1, "max": 80, "decimals": 0} for i in range(n)} | \
        {f"Inputs!{ucol}{first + i}": {"base": unit[i], "min": 0.01, "max": round(max(unit) * 3, 2), "decimals": 2}
         for i in range(n)}
    prompt = c.t(
        f"`model.xlsx` has an `Inputs` sheet: a header in row {head}, items in A{first}:A{last}, quantities in column "
        f"{qcol}, unit costs in column {ucol}, and the {c.amount().lower()} uplift rate in {rate_cell}. Add a sheet "
        f"`Model` with headers Item (A1) and Cost (B1); for each input row, in order (Inputs rows {first}..{last} go "
        f"to Model rows 2..{n + 1}), put in column A the item and in column B its cost = quantity × unit cost × "
        f"(1 + rate), as live formulas that reference the Inputs sheet (no typed-in numbers). In A{n + 2} write Total "
        f"and in B{n + 2} a SUM formula of the costs. Leave the Inputs sheet unchanged.",
        f"`model.xlsx`의 `Inputs` 시트에는 {head}행에 머리글, A{first}:A{last}에 항목, {qcol}열에 수량, "
        f"{ucol}열에 단가, {rate_cell}에 {c.amount()} 가산율이 있습니다. `Model` 시트를 추가하고 A1에 Item, "
        f"B1에 Cost 머리글을 넣으십시오. 입력 행을 순서대로(Inputs {first}..{last}행을 Model 2..{n + 1}행에) "
        f"A열에는 항목, B열에는 비용 = 수량 × 단가 × (1 + 가산율)을 Inputs 시트를 참조하는 수식으로 "
        f"넣으십시오(숫자 직접 입력 금지). A{n + 2}에 Total, B{n + 2}에 비용의 SUM 수식을 넣으십시오. "
        f"Inputs 시트는 변경하지 마십시오.")
    return Built(
        title=c.t(f"Cost model with live formulas ({c.ind.name})", f"수식 기반 원가 모델 ({c.ind.name_ko})"),
        prompt=prompt,
        expected={"file": "model.xlsx", "n": n, "costs": expected_rows, "total": total, "items": items,
                  "inputs": rows, "layout": {"first": first, "quantity": qcol, "unit_cost": ucol, "rate": rate_cell}},
        liveness={"model.xlsx": liveness},
        actions=[call("xlsx_write", path="model.xlsx", sheet="Model", cells=cells)],
        deliverables=["model.xlsx"],
        mutate={"number": {"file": "model.xlsx", "sheet": "Model", "cell": "B2"},
                "formula": {"file": "model.xlsx", "sheet": "Model", "cell": f"B{n + 2}"},
                "section": {"file": "model.xlsx", "sheet": "Model"}})


def _rows(grid: dict[str, Any]) -> list[list[Any]]:
    """A sheet's rows from {cell: value} (columns A..Z), empty cells None, each row cut after its last value."""
    height = max(int(ref[1:]) for ref in grid)
    out: list[list[Any]] = []
    for r in range(1, height + 1):
        row = [grid.get(f"{chr(ord('A') + k)}{r}") for k in range(26)]
        while row and row[-1] is None:
            row.pop()
        out.append(row)
    return out
