"""T12: cross-document consistency."""

from __future__ import annotations

from typing import Any

import docx

from environments.office.data import amounts
from environments.office.tasktypes._common import Built, Ctx, call, money, save_docx, save_xlsx


def t12_consistency(c: Ctx) -> Built:
    cats = c.cats(5)
    vals = amounts(c.ind, c.rng, 5)
    save_xlsx(c.state / "figures.xlsx", {"Figures": [["Item", "Value"]] + [[k, v] for k, v in zip(cats, vals)]})
    wrong = sorted(c.rng.sample(range(5), 3))
    memo_vals = [round(v * c.rng.choice([1.1, 0.9, 1.25]), 2) if i in wrong else v for i, v in enumerate(vals)]
    title = c.t(f"{c.industry()} Memo", f"{c.industry()} 메모")
    def sentence(k: str, v: float) -> str:
        return c.t(f"{k} came in at {money(v)} this period.", f"이번 기간 {k}은(는) {money(v)}입니다.")
    blocks: list[tuple[str, Any]] = [("title", title), ("h1", c.t("Figures", "수치"))]
    blocks += [("p", sentence(k, v)) for k, v in zip(cats[:3], memo_vals[:3])]
    blocks += [("table", [["Item", "Value"]] + [[k, money(v)] for k, v in zip(cats[3:], memo_vals[3:])])]
    blocks += [("h1", c.t("Comment", "의견")), ("p", c.t("Figures above feed the quarterly pack.",
                                                       "위 수치는 분기 보고 자료에 반영됩니다."))]
    save_docx(c.state / "memo.docx", blocks)
    fixed = [(cats[i], money(memo_vals[i]), money(vals[i])) for i in wrong]
    corrected = docx.Document(str(c.state / "memo.docx"))
    from verifiers import office as ov

    expected_text = ov.text(corrected)
    for _, old, new in fixed:
        expected_text = expected_text.replace(old, new)
    prompt = c.t(
        "`figures.xlsx` (sheet Figures) is the authoritative source. `memo.docx` quotes the same items, but some of its "
        "figures are wrong. Correct every wrong figure in `memo.docx` in place (format like 1,234.56) and change "
        "nothing else. Then write `changes.xlsx` with a sheet `Changes`, header Item, Old, New, one row per figure you "
        "corrected (Old and New as they appear in the memo, e.g. 1,234.56).",
        "`figures.xlsx`(시트 Figures)가 기준 자료입니다. `memo.docx`에 같은 항목이 인용되어 있으나 일부 수치가 틀립니다. "
        "`memo.docx`의 틀린 수치를 모두 직접 고치고(1,234.56 형식) 그 밖에는 바꾸지 마십시오. 그런 다음 `changes.xlsx`를 "
        "만들어 `Changes` 시트에 머리글 Item, Old, New 와 고친 수치마다 한 행씩(메모에 적힌 형식 그대로, 예: 1,234.56) "
        "적으십시오.")
    actions = [call("docx_edit", path="memo.docx", ops=[{"op": "replace", "find": o, "replace": n}
                                                          for _, o, n in fixed]),
               call("xlsx_write", path="changes.xlsx", sheet="Changes", create=True,
                    rows=[["Item", "Old", "New"]] + [list(f) for f in fixed])]
    return Built(
        title=c.t(f"Fix figures across documents ({c.ind.name})", f"문서 간 수치 정합성 수정 ({c.ind.name_ko})"),
        prompt=prompt, expected={"file": "memo.docx", "text": expected_text, "fixes": fixed,
                                 "values": {k: money(v) for k, v in zip(cats, vals)}},
        actions=actions, deliverables=["memo.docx", "changes.xlsx"], inputs=["figures.xlsx"],
        mutate={"number": {"file": "memo.docx", "find": fixed[0][2]}}, difficulty="hard")
