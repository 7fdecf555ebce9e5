"""T4: reconcile two sources."""

from __future__ import annotations

from environments.office.data import amounts
from environments.office.tasktypes._common import Built, Ctx, call, save_xlsx


def t04_reconcile(c: Ctx) -> Built:
    recs = c.records(c.rng.randint(14, 20))
    ledger = [[r["id"], r["date"], r["amount"]] for r in recs]
    bank = [list(r) for r in ledger]
    picks = c.rng.sample(range(len(bank)), 4)
    exc: dict[str, str] = {}
    exc[bank[picks[0]][0]] = "missing_in_bank"
    exc[bank[picks[1]][0]] = "amount_mismatch"
    exc[bank[picks[2]][0]] = "amount_mismatch"
    bank[picks[1]][2] = round(bank[picks[1]][2] + c.rng.choice([10, 25.5, 100, -40]), 2)
    bank[picks[2]][2] = round(bank[picks[2]][2] * 1.1, 2)
    extra = f"{c.ind.prefix}-{c.rng.randint(10000, 19999)}"
    bank.append([extra, c.date().isoformat(), amounts(c.ind, c.rng, 1)[0]])
    exc[extra] = "missing_in_ledger"
    bank = [b for i, b in enumerate(bank) if i != picks[0]]
    c.rng.shuffle(bank)
    head = ["Ref", "Date", "Amount"]
    save_xlsx(c.state / "recon.xlsx", {"Ledger": [head] + ledger, "Bank": [head] + bank})
    exc = dict(sorted(exc.items()))
    n = len(ledger) + 1
    prompt = c.t(
        f"`recon.xlsx` holds our {c.entity()} ledger (sheet `Ledger`) and the counterparty statement (sheet `Bank`), "
        "both with Ref, Date, Amount. Reconcile them by Ref. Add a sheet `Exceptions` with headers Ref and Issue and one "
        "row per exception sorted by Ref, where Issue is exactly one of missing_in_bank, missing_in_ledger, "
        "amount_mismatch. Also add a conditional formatting rule on Ledger!C2:C" + str(n) + " that highlights "
        "amounts whose Ref is listed in Exceptions. Do not change the Ledger or Bank data.",
        f"`recon.xlsx`에는 당사 {c.entity()} 원장(시트 `Ledger`)과 상대방 명세(시트 `Bank`)가 있으며 둘 다 Ref, Date, "
        "Amount 열을 가집니다. Ref 기준으로 대사하십시오. `Exceptions` 시트를 추가하여 머리글 Ref, Issue 아래에 예외 "
        "하나당 한 행씩 Ref 순으로 정렬해 넣고, Issue는 missing_in_bank, missing_in_ledger, amount_mismatch 중 정확히 "
        f"하나로 쓰십시오. 또한 Ledger!C2:C{n}에 Exceptions에 있는 Ref의 금액을 강조하는 조건부 서식 규칙을 추가하십시오. "
        "Ledger와 Bank 데이터는 변경하지 마십시오.")
    return Built(
        title=c.t(f"Reconcile ledger and statement ({c.ind.name})", f"원장과 명세 대사 ({c.ind.name_ko})"),
        prompt=prompt, expected={"file": "recon.xlsx", "exceptions": exc, "ledger": ledger, "bank": bank},
        actions=[call("xlsx_write", path="recon.xlsx", sheet="Exceptions",
                      rows=[["Ref", "Issue"]] + [[k, v] for k, v in exc.items()]),
                 call("xlsx_conditional_format", path="recon.xlsx", sheet="Ledger", range=f"C2:C{n}",
                      formula="COUNTIF(Exceptions!$A:$A,$A2)>0", fill="FFC7CE")],
        deliverables=["recon.xlsx"],
        mutate={"number": {"file": "recon.xlsx", "sheet": "Ledger", "cell": "C2"},
                "section": {"file": "recon.xlsx", "sheet": "Exceptions"},
                "conditional": {"file": "recon.xlsx", "sheet": "Ledger"}},
        difficulty="hard")
