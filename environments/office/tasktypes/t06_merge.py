"""T6: template fill / mail merge."""

from __future__ import annotations

from environments.office.tasktypes._common import Built, Ctx, call, money, save_docx, save_xlsx


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
