"""T8: deck from brief + data."""

from __future__ import annotations

from environments.office.tasktypes._common import Built, Ctx, call, money, save_xlsx, totals_by


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
