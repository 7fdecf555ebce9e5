"""T11: assemble a PDF deliverable."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from environments.office.tasktypes._common import Built, Ctx, call, save_docx

#: The parts a packet draws after its cover (file, English title, Korean title): which, how many and
#: in what order are drawn per task, so no fixed list of exports and bookmarks assembles two packets.
PARTS = (("summary", "{entity} Summary", "{entity} 요약"), ("schedules", "Supporting Schedules", "부속 명세"),
         ("figures", "Key Figures", "주요 수치"), ("terms", "Terms and Conditions", "약관 및 조건"),
         ("contacts", "Contacts", "연락처"), ("appendix", "Appendix", "부록"))


def t11_packet(c: Ctx, pdf: Callable[[Path, Path], None]) -> Built:
    entity = c.entity()
    drawn = c.rng.sample(PARTS, c.rng.randint(2, 4))
    parts = [("cover", c.t(f"{c.industry()} Packet", f"{c.industry()} 자료집"))] + [
        (key, c.t(en.format(entity=entity.capitalize()), ko.format(entity=entity))) for key, en, ko in drawn]
    marks, pages, expected_parts = [], 0, []
    import pypdf

    for key, title in parts:
        token = f"{c.ind.prefix}-{c.rng.randint(100000, 999999)}"
        body = [("title", title), ("p", c.t(f"Document reference {token}.", f"문서 번호 {token}."))]
        if key == parts[-1][0]:  # the last part runs over several pages
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
