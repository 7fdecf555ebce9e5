"""T2: calculation model with live formulas."""

from __future__ import annotations

from typing import Any

from environments.office.data import amounts
from environments.office.tasktypes._common import Built, Ctx, call, save_xlsx


def t02_model(c: Ctx) -> Built:
    n = c.rng.randint(5, 8)
    items = [f"{c.cats()[i % 5]} {c.fake.word().capitalize() if not c.ko else c.fake.word()} {i + 1}" for i in range(n)]
    qty = [c.rng.randint(2, 40) for _ in range(n)]
    unit = amounts(c.ind, c.rng, n)
    unit = [round(u / 10, 2) for u in unit]
    rate = round(c.rng.choice([0.05, 0.075, 0.1, 0.125, 0.15]), 3)
    rows = [["Item", "Quantity", "Unit cost", None, "Rate", rate]] + [[items[i], qty[i], unit[i]] for i in range(n)]
    save_xlsx(c.state / "model.xlsx", {"Inputs": rows})
    expected_rows = [round(qty[i] * unit[i] * (1 + rate), 2) for i in range(n)]
    total = round(sum(qty[i] * unit[i] * (1 + rate) for i in range(n)), 2)
    last = n + 1
    cells: dict[str, Any] = {"A1": "Item", "B1": "Cost"}
    for i in range(n):
        r = i + 2
        cells[f"A{r}"] = f"=Inputs!A{r}"
        cells[f"B{r}"] = f"=Inputs!B{r}*Inputs!C{r}*(1+Inputs!$F$1)"
    cells[f"A{last + 1}"] = "Total"
    cells[f"B{last + 1}"] = f"=SUM(B2:B{last})"
    # Liveness (hidden, drawn afresh at every verify by `liveness.py`): the inputs and the range
    # each may take; the check computes cost = quantity × unit cost × (1 + rate) at each point.
    liveness = {"Inputs!F1": {"base": rate, "min": 0.01, "max": 0.3, "decimals": 3}} | \
        {f"Inputs!B{i + 2}": {"base": qty[i], "min": 1, "max": 80, "decimals": 0} for i in range(n)} | \
        {f"Inputs!C{i + 2}": {"base": unit[i], "min": 0.01, "max": round(max(unit) * 3, 2), "decimals": 2}
         for i in range(n)}
    prompt = c.t(
        f"`model.xlsx` has an `Inputs` sheet: items in A2:A{last}, quantities in B, unit costs in C, and a "
        f"{c.amount().lower()} uplift rate in F1. Add a sheet `Model` with headers Item (A1) and Cost (B1); for each "
        f"input row r (2..{last}) put in A r the item and in B r its cost = quantity × unit cost × (1 + rate), as live "
        f"formulas that reference the Inputs sheet (no typed-in numbers). In A{last + 1} write Total and in "
        f"B{last + 1} a SUM formula of the costs. Leave the Inputs sheet unchanged.",
        f"`model.xlsx`의 `Inputs` 시트에는 A2:A{last}에 항목, B열에 수량, C열에 단가, F1에 {c.amount()} 가산율이 있습니다. "
        f"`Model` 시트를 추가하고 A1에 Item, B1에 Cost 머리글을 넣으십시오. 각 입력 행 r(2..{last})에 대해 A r에는 항목, "
        f"B r에는 비용 = 수량 × 단가 × (1 + 가산율)을 Inputs 시트를 참조하는 수식으로 넣으십시오(숫자 직접 입력 금지). "
        f"A{last + 1}에 Total, B{last + 1}에 비용의 SUM 수식을 넣으십시오. Inputs 시트는 변경하지 마십시오.")
    return Built(
        title=c.t(f"Cost model with live formulas ({c.ind.name})", f"수식 기반 원가 모델 ({c.ind.name_ko})"),
        prompt=prompt,
        expected={"file": "model.xlsx", "n": n, "costs": expected_rows, "total": total, "items": items,
                  "inputs": rows},
        liveness={"model.xlsx": liveness},
        actions=[call("xlsx_write", path="model.xlsx", sheet="Model", cells=cells)],
        deliverables=["model.xlsx"],
        mutate={"number": {"file": "model.xlsx", "sheet": "Model", "cell": "B2"},
                "formula": {"file": "model.xlsx", "sheet": "Model", "cell": f"B{last + 1}"},
                "section": {"file": "model.xlsx", "sheet": "Model"}})
