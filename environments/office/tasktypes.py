"""The 12 OfficeVerse task types (research note verifiers.md §6.5), one builder each.

A builder gets a `Ctx` (industry, language, seeded RNG and Faker, the task's `state/` folder) and
writes the starting documents, then returns a `Built`: the prompt, what the verifier expects, the
oracle's tool calls (run through the same tools the agent has), the deliverables, and where the
mutators should strike. Expected values are computed here in Python from the same data; formula
results are checked after LibreOffice recalculation at export.
"""

from __future__ import annotations

import datetime as dt
import random
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docx
import openpyxl
import pptx
from docx.shared import Pt
from pptx.chart.data import CategoryChartData
from pptx.enum.chart import XL_CHART_TYPE
from pptx.util import Inches

from environments.office.data import Industry, amounts, categories, faker, label


@dataclass
class Ctx:
    ind: Industry
    lang: str
    seed: int
    state: Path
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.fake = faker(self.lang, self.seed)

    def t(self, en: str, ko: str) -> str:
        return ko if self.lang == "ko" else en

    @property
    def ko(self) -> bool:
        return self.lang == "ko"

    def cats(self, k: int | None = None) -> list[str]:
        c = list(categories(self.ind, self.lang))
        return c[:k] if k else c

    def entity(self) -> str:
        return label(self.ind, self.lang, "entity")

    def amount(self) -> str:
        return label(self.ind, self.lang, "amount")

    def industry(self) -> str:
        return label(self.ind, self.lang, "name")

    def party(self) -> str:
        return self.fake.company() if self.rng.random() < 0.6 else self.fake.name()

    def date(self) -> dt.date:
        return dt.date(2024, 1, 1) + dt.timedelta(days=self.rng.randrange(0, 360))

    def records(self, n: int, k_cats: int = 5) -> list[dict[str, Any]]:
        cats = self.cats(k_cats)
        ids = sorted(self.rng.sample(range(1000, 9999), n))
        amts = amounts(self.ind, self.rng, n)
        return [{"id": f"{self.ind.prefix}-{i}", "name": self.party(), "category": cats[j % len(cats)] if j < len(cats)
                 else self.rng.choice(cats), "date": self.date().isoformat(), "amount": a}
                for j, (i, a) in enumerate(zip(ids, amts))]


@dataclass
class Built:
    title: str
    prompt: str
    expected: dict[str, Any]
    actions: list[dict[str, Any]]
    deliverables: list[str]
    inputs: list[str] = field(default_factory=list)
    mutate: dict[str, Any] = field(default_factory=dict)
    difficulty: str = "medium"
    #: {workbook: {"Sheet!A1": number}}: inputs export changes in a recalculated copy (liveness).
    perturb: dict[str, dict[str, float]] = field(default_factory=dict)


def money(v: float) -> str:
    return f"{v:,.2f}"


def save_xlsx(path: Path, sheets: dict[str, list[list[Any]]]) -> None:
    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for name, rows in sheets.items():
        ws = wb.create_sheet(name)
        for r in rows:
            ws.append(r)
    path.parent.mkdir(parents=True, exist_ok=True)
    wb.save(path)


def save_docx(path: Path, blocks: list[tuple[str, Any]]) -> None:
    """Blocks: ("title", text) ("h1", text) ("h2", text) ("p", text) ("bold", text) ("table", rows)."""
    d = docx.Document()
    for kind, val in blocks:
        if kind == "title":
            d.add_heading(val, level=0)
        elif kind in ("h1", "h2"):
            d.add_heading(val, level=int(kind[1]))
        elif kind == "p":
            d.add_paragraph(val)
        elif kind == "bold":
            r = d.add_paragraph().add_run(val)
            r.bold = True
            r.font.size = Pt(12)
        elif kind == "table":
            t = d.add_table(rows=len(val), cols=len(val[0]))
            t.style = "Table Grid"
            for i, row in enumerate(val):
                for j, v in enumerate(row):
                    t.cell(i, j).text = str(v)
    path.parent.mkdir(parents=True, exist_ok=True)
    d.save(str(path))


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"tool": tool, "arguments": arguments}


def totals_by(recs: list[dict[str, Any]], key: str = "category") -> dict[str, float]:
    out: dict[str, float] = {}
    for r in recs:
        out[r[key]] = round(out.get(r[key], 0.0) + r["amount"], 2)
    return dict(sorted(out.items()))


# --- T1 clean & normalise ---------------------------------------------------------------------

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


# --- T2 calculation model with live formulas --------------------------------------------------

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
    # Liveness: every input changes at once (so a constant added to a reference, or any input
    # left out, shows) and the model must follow: cost = quantity × unit cost × (1 + rate).
    qty2 = [q + 3 + i for i, q in enumerate(qty)]
    unit2 = [round(u * 1.5 + 7.25, 2) for u in unit]
    rate2 = round(rate + 0.05, 3)
    perturb = {"Inputs!F1": rate2} | {f"Inputs!B{i + 2}": qty2[i] for i in range(n)} | \
        {f"Inputs!C{i + 2}": unit2[i] for i in range(n)}
    costs2 = [round(qty2[i] * unit2[i] * (1 + rate2), 2) for i in range(n)]
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
                  "inputs": rows, "perturbed": {"costs": costs2, "total": round(sum(costs2), 2)}},
        perturb={"model.xlsx": perturb},
        actions=[call("xlsx_write", path="model.xlsx", sheet="Model", cells=cells)],
        deliverables=["model.xlsx"],
        mutate={"number": {"file": "model.xlsx", "sheet": "Model", "cell": "B2"},
                "formula": {"file": "model.xlsx", "sheet": "Model", "cell": f"B{last + 1}"},
                "section": {"file": "model.xlsx", "sheet": "Model"}})


# --- T3 summary + chart -----------------------------------------------------------------------

def t03_summary(c: Ctx) -> Built:
    recs = c.records(c.rng.randint(15, 25))
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


# --- T4 reconcile two sources -----------------------------------------------------------------

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
                      formula=f"COUNTIF(Exceptions!$A:$A,$A2)>0", fill="FFC7CE")],
        deliverables=["recon.xlsx"],
        mutate={"number": {"file": "recon.xlsx", "sheet": "Ledger", "cell": "C2"},
                "section": {"file": "recon.xlsx", "sheet": "Exceptions"}}, difficulty="hard")


# --- T5 business document from data -----------------------------------------------------------

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


# --- T6 template fill / mail merge ------------------------------------------------------------

def t06_merge(c: Ctx) -> Built:
    recs = c.records(c.rng.randint(3, 5))
    org = c.fake.company()
    tmpl = [("title", c.t(f"{org}: {c.entity().capitalize()} notice", f"{org} {c.entity()} 안내문")),
            ("p", c.t("Dear {{name}},", "{{name}} 귀하")),
            ("p", c.t("This letter concerns reference {{ref}} dated {{date}}.",
                      "본 안내문은 {{date}}자 참조번호 {{ref}}에 관한 것입니다.")),
            ("p", c.t(f"The {c.amount().lower()} on record is {{{{amount}}}}.",
                      f"기록된 {c.amount()}은(는) {{{{amount}}}}입니다.")),
            ("p", c.t("Please contact us with any questions.", "문의 사항이 있으시면 연락해 주십시오.")),
            ("p", org)]
    save_docx(c.state / "template.docx", tmpl)
    save_xlsx(c.state / "records.xlsx", {"Records": [["ref", "name", "date", "amount"]] +
                                         [[r["id"], r["name"], r["date"], money(r["amount"])] for r in recs]})
    letters = {}
    actions = []
    for r in recs:
        vals = {"name": r["name"], "ref": r["id"], "date": r["date"], "amount": money(r["amount"])}
        texts = []
        for _, t in tmpl:
            for k, v in vals.items():
                t = t.replace("{{" + k + "}}", v)
            texts.append(t)
        letters[f"letters/{r['id']}.docx"] = texts
        actions.append(call("copy_file", source="template.docx", dest=f"letters/{r['id']}.docx"))
        actions.append(call("docx_edit", path=f"letters/{r['id']}.docx",
                            ops=[{"op": "replace", "find": "{{" + k + "}}", "replace": v} for k, v in vals.items()]))
    prompt = c.t(
        "Mail-merge `template.docx` with `records.xlsx` (sheet Records: ref, name, date, amount): for every record "
        "create `letters/<ref>.docx`, a copy of the template with each {{placeholder}} replaced by the record's value "
        "exactly as it appears in the sheet. Keep every other word of the template as it is; no {{ }} may remain.",
        "`template.docx`와 `records.xlsx`(시트 Records: ref, name, date, amount)로 메일 머지를 하십시오. 레코드마다 "
        "`letters/<ref>.docx`를 만들되, 템플릿을 복사하고 각 {{자리표시자}}를 시트에 있는 값 그대로 바꾸십시오. 템플릿의 "
        "나머지 문구는 그대로 두고 {{ }}가 남아 있으면 안 됩니다.")
    first = next(iter(letters))
    return Built(
        title=c.t(f"Mail merge {c.entity()} letters ({c.ind.name})", f"{c.entity()} 안내문 메일 머지 ({c.ind.name_ko})"),
        prompt=prompt, expected={"letters": letters}, actions=actions,
        deliverables=[first] + [k for k in letters if k != first], inputs=["template.docx", "records.xlsx"],
        mutate={"number": {"file": first, "find": money(recs[0]["amount"])}}, difficulty="easy")


# --- T7 edit / restructure a document ---------------------------------------------------------

def t07_restructure(c: Ctx) -> Built:
    secs = [c.t("Scope", "적용 범위"), c.t("Responsibilities", "책임"), c.t("Procedure", "절차"), c.t("Records", "기록")]
    days = c.rng.randint(5, 45)
    blocks: list[tuple[str, Any]] = [("title", c.t(f"{c.industry()} Operations Manual", f"{c.industry()} 운영 매뉴얼"))]
    heads: list[list[Any]] = []
    body: list[str] = []
    table_rows = [[c.t("Task", "업무"), c.t("Owner", "담당"), c.t("Frequency", "주기")]] + [
        [c.t(f"Review {x}", f"{x} 검토"), c.fake.name(), c.rng.choice([c.t("Monthly", "매월"), c.t("Weekly", "매주")])]
        for x in c.cats(3)]
    for i, s in enumerate(secs, 1):
        blocks.append(("bold", f"{i}. {s}"))
        heads.append([1, f"{i}. {s}"])
        for j in (1, 2):
            sub = f"{i}.{j} " + c.t(f"{s} detail {j}", f"{s} 세부 {j}")
            blocks.append(("bold", sub))
            heads.append([2, sub])
            line = c.fake.sentence(nb_words=12) if not c.ko else c.fake.catch_phrase() + "에 관한 사항을 정리합니다."
            blocks.append(("p", line))
            body.append(line)
        if i == 3:
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
        "2 style. Convert the tab-separated lines in section 3 (Task/Owner/Frequency) into a real table with the same "
        "cells, header row first. Keep every other paragraph's text unchanged and in the same order.",
        "`manual.docx`를 직접 수정해 구조를 정리하십시오. 섹션 제목(\"1. ...\" 형식)은 굵은 Normal 문단입니다. 번호 섹션 "
        "제목에는 Heading 1, 하위 섹션 제목(\"1.1 ...\" 형식)에는 Heading 2 스타일을 적용하십시오. 3장의 탭으로 구분된 "
        "줄(업무/담당/주기)은 같은 셀을 가진 실제 표로 바꾸고 머리글 행을 첫 행으로 두십시오. 나머지 문단의 텍스트는 "
        "바꾸지 말고 순서도 유지하십시오.")
    return Built(
        title=c.t(f"Restructure an operations manual ({c.ind.name})", f"운영 매뉴얼 구조 정리 ({c.ind.name_ko})"),
        prompt=prompt, expected={"file": "manual.docx", "headings": heads, "table": table_rows, "body": body,
                                 "title": blocks[0][1]},
        actions=[call("docx_edit", path="manual.docx", ops=ops)], deliverables=["manual.docx"],
        mutate={"number": {"file": "manual.docx", "find": str(days)},
                "section": {"file": "manual.docx", "heading": heads[3][1]}, "reorder": {"heading": heads[0][1]}})


# --- T8 deck from brief + data ----------------------------------------------------------------

def t08_deck(c: Ctx) -> Built:
    recs = c.records(c.rng.randint(12, 20))
    save_xlsx(c.state / "data.xlsx", {"Data": [["ID", "Category", "Amount"]] +
                                      [[r["id"], r["category"], r["amount"]] for r in recs]})
    tot = totals_by(recs)
    titles = [c.t(f"{c.industry()} Review", f"{c.industry()} 리뷰"), c.t("Highlights", "주요 내용"),
              c.t(f"{c.amount()} by Category", f"카테고리별 {c.amount()}"), c.t("Next Steps", "향후 계획")]
    top = max(tot, key=tot.get)
    company = c.fake.company()
    # Notes speak to their own slide (its title, names or figures), as the deck checks require.
    slides = [
        {"layout": "title", "title": titles[0], "subtitle": company,
         "notes": c.t(f"Welcome: this is the {titles[0]} for {company}.", f"{company}의 {titles[0]} 발표를 시작합니다.")},
        {"title": titles[1], "bullets": [c.t(f"{len(recs)} {c.entity()}s analysed", f"{c.entity()} {len(recs)}건 분석"),
                                         c.t(f"Largest category: {top}", f"최대 카테고리: {top}")],
         "notes": c.t(f"We analysed {len(recs)} {c.entity()}s and {top} is the largest category.",
                      f"{c.entity()} {len(recs)}건을 분석했고 최대 카테고리는 {top} 입니다.")},
        {"title": titles[2], "chart": {"type": "column", "categories": list(tot),
                                       "series": [{"name": c.amount(), "values": list(tot.values())}]},
         "notes": c.t(f"The chart shows the totals per category from data.xlsx; {top} leads with {money(tot[top])}.",
                      f"차트는 data.xlsx 기준 카테고리별 합계이며 {top} 이(가) {money(tot[top])}(으)로 가장 큽니다.")},
        {"title": titles[3], "bullets": [c.t(f"Deep-dive on {top}", f"{top} 심층 분석")],
         "notes": c.t(f"We propose a deep-dive on {top} and ask for a decision.",
                      f"{top} 심층 분석을 제안하고 의사결정을 요청합니다.")}]
    prompt = c.t(
        f"Build `deck.pptx` from `data.xlsx`: exactly 4 slides titled, in order, \"{titles[0]}\" (a title slide), "
        f"\"{titles[1]}\", \"{titles[2]}\" and \"{titles[3]}\". Slide 3 holds a column chart with one category per "
        f"data category (alphabetical) and one series: the total {c.amount().lower()} per category. Every slide has "
        "speaker notes that speak to that slide (its names or figures), and every slide after the first carries body "
        "text, a table or a chart.",
        f"`data.xlsx`로 `deck.pptx`를 만드십시오. 슬라이드는 정확히 4장이며 제목은 순서대로 \"{titles[0]}\"(제목 슬라이드), "
        f"\"{titles[1]}\", \"{titles[2]}\", \"{titles[3]}\"입니다. 3번 슬라이드에는 카테고리(문자 순)마다 항목 하나, "
        f"계열 하나(카테고리별 {c.amount()} 합계)인 세로 막대(column) 차트를 넣으십시오. 모든 슬라이드에 그 슬라이드의 "
        f"내용(이름이나 수치)을 다루는 발표자 노트가 있어야 하며, 첫 슬라이드 이후의 슬라이드에는 본문, 표 또는 차트가 있어야 합니다.")
    return Built(
        title=c.t(f"Build a review deck ({c.ind.name})", f"리뷰 발표자료 작성 ({c.ind.name_ko})"), prompt=prompt,
        expected={"file": "deck.pptx", "titles": titles, "chart_slide": 3, "totals": tot, "language": c.lang},
        actions=[call("pptx_write", path="deck.pptx", slides=slides)], deliverables=["deck.pptx"], inputs=["data.xlsx"],
        mutate={"number": {"file": "deck.pptx", "slide": 3, "chart": True},
                "section": {"file": "deck.pptx", "slide": 2}, "slides": {"file": "deck.pptx"}})


# --- T9 update an existing deck ---------------------------------------------------------------

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


# --- T10 pdf -> structured xlsx ---------------------------------------------------------------

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


# --- T11 assemble a PDF deliverable -----------------------------------------------------------

def t11_packet(c: Ctx, pdf: Callable[[Path, Path], None]) -> Built:
    parts = [("cover", c.t(f"{c.industry()} Packet", f"{c.industry()} 자료집")),
             ("part_a", c.t(f"{c.entity().capitalize()} Summary", f"{c.entity()} 요약")),
             ("part_b", c.t("Supporting Schedules", "부속 명세"))]
    marks, pages, expected_parts = [], 0, []
    import pypdf

    for key, title in parts:
        token = f"{c.ind.prefix}-{c.rng.randint(100000, 999999)}"
        body = [("title", title), ("p", c.t(f"Document reference {token}.", f"문서 번호 {token}."))]
        if key == "part_b":
            body += [("p", c.fake.paragraph(nb_sentences=8)) for _ in range(14)]
        save_docx(c.state / f"{key}.docx", body)
        tmp = c.state.parent / f"_{key}.pdf"
        pdf(c.state / f"{key}.docx", tmp)
        n = len(pypdf.PdfReader(str(tmp)).pages)
        tmp.unlink()
        expected_parts.append({"title": title, "first_page": pages + 1, "pages": n, "token": token})
        marks.append({"path": f"build/{key}.pdf", "bookmark": title})
        pages += n
    actions = [call("pdf_export", source=f"{k}.docx", dest=f"build/{k}.pdf") for k, _ in parts]
    actions.append(call("pdf_merge", dest="packet.pdf", parts=marks, title=parts[0][1]))
    names = ", ".join(f"`{k}.docx`" for k, _ in parts)
    prompt = c.t(
        f"Assemble `packet.pdf` from {names}, in that order: convert each to PDF and concatenate them. Add one "
        "top-level bookmark per part, titled with the part's title (\"" + "\", \"".join(t for _, t in parts) +
        "\") and pointing at the part's first page. The packet must contain nothing else.",
        f"{names}를 이 순서대로 PDF로 변환해 이어 붙여 `packet.pdf`를 만드십시오. 각 부분마다 그 제목(\"" +
        "\", \"".join(t for _, t in parts) + "\")으로 최상위 책갈피를 하나씩 달고 해당 부분의 첫 페이지를 가리키게 "
        "하십시오. 그 밖의 내용은 넣지 마십시오.")
    return Built(
        title=c.t(f"Assemble a PDF packet ({c.ind.name})", f"PDF 자료집 구성 ({c.ind.name_ko})"), prompt=prompt,
        expected={"file": "packet.pdf", "parts": expected_parts, "pages": pages}, actions=actions,
        deliverables=["packet.pdf"], inputs=[f"{k}.docx" for k, _ in parts],
        mutate={"section": {"file": "packet.pdf", "page": 1}})


# --- T12 cross-document consistency -----------------------------------------------------------

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


TYPES: dict[str, tuple[str, str]] = {
    "T01": ("clean", "xlsx clean & normalise a raw extract"),
    "T02": ("model", "xlsx calculation model with live formulas"),
    "T03": ("summary", "xlsx summary table + chart"),
    "T04": ("reconcile", "xlsx reconcile two sources, flag exceptions"),
    "T05": ("report", "docx business document from data + brief"),
    "T06": ("merge", "docx template fill / mail merge"),
    "T07": ("restructure", "docx edit/restructure an existing document"),
    "T08": ("deck", "pptx deck from brief + data"),
    "T09": ("update", "pptx update an existing deck"),
    "T10": ("extract", "pdf -> structured xlsx extraction"),
    "T11": ("packet", "produce/assemble a PDF deliverable"),
    "T12": ("consistency", "cross-document consistency review"),
}
BUILDERS: dict[str, Callable[..., Built]] = {
    "T01": t01_clean, "T02": t02_model, "T03": t03_summary, "T04": t04_reconcile, "T05": t05_report,
    "T06": t06_merge, "T07": t07_restructure, "T08": t08_deck, "T09": t09_update, "T10": t10_extract,
    "T11": t11_packet, "T12": t12_consistency,
}
NEEDS_PDF = {"T10", "T11"}


def cleanup_tmp(state: Path) -> None:
    for p in state.glob("_tmp*"):
        p.unlink() if p.is_file() else shutil.rmtree(p)


FIXED_TIME = (2024, 1, 1, 0, 0, 0)


def normalise_package(path: Path) -> None:
    """Make an OOXML file byte-reproducible: fixed zip entry times and document timestamps."""
    import re
    import zipfile

    entries = []
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            data = z.read(info)
            if info.filename == "docProps/core.xml":
                data = re.sub(rb"(<dcterms:(?:created|modified)[^>]*>)[^<]*", rb"\g<1>2024-01-01T00:00:00Z", data)
            entries.append((info.filename, data))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            z.writestr(zipfile.ZipInfo(name, FIXED_TIME), data, compress_type=zipfile.ZIP_DEFLATED)


def normalise_state(state: Path) -> None:
    for p in sorted(state.rglob("*")):
        if p.suffix in (".xlsx", ".docx", ".pptx"):
            normalise_package(p)
