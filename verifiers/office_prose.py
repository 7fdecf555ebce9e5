"""Substance checks for prose with no model: is it the task's language, does it say something of
its own, are the figures and entities it cites the right ones.

Shape checks (headings, a table, a word count) pass filler: lorem ipsum, a paragraph of the
prompt's keywords, the same sentence pasted under every heading. Each helper here returns a list
of problems (empty when the text is fine) so a check can assert on it and say why.

Language identification is by function words (English) and by script (Korean): filler and
keyword lists have almost no function words, and any real English sentence of a few words has
some. Thresholds were set on the oracle texts and the filler/stuffing mutators (see
`environments/office/mutators.py`); they are deliberately loose so plain, terse prose passes.
"""

from __future__ import annotations

import re
import zlib

EN_FUNCTION = frozenset("""a about above across after against all along also although am among an and any are as at
be because been before being below between both but by can could did do does down during each either for from had
has have he her here his how i if in into is it its itself may might more most must my no nor not of off on once
only or other our out over per should since so some such than that the their them then there these they this
those through to too under until up upon us very was we were what when where whether which while who whom whose
why will with within without would you your""".split())

SENTENCE_END = re.compile(r"(?<=[.!?。])\s+|\n+")
WORD = re.compile(r"\w+", re.UNICODE)
HANGUL = re.compile(r"[\uac00-\ud7a3]")
LETTER = re.compile(r"[^\W\d_]", re.UNICODE)
MONEY = re.compile(r"(?<![\d,.])\d{1,3}(?:,\d{3})*\.\d{2}(?![\d])")


def words(text: str) -> list[str]:
    return [w.lower() for w in WORD.findall(text)]


def sentences(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE_END.split(text) if s and len(WORD.findall(s)) >= 3]


def language_problems(text: str, lang: str) -> list[str]:
    """The text is not in the task's language (lorem ipsum, a keyword list, another language)."""
    letters = LETTER.findall(text)
    if len(letters) < 20:
        return []
    if lang == "ko":
        share = len(HANGUL.findall(text)) / len(letters)
        return [] if share >= 0.5 else [f"only {share:.0%} of its letters are Korean"]
    alpha = [w for w in words(text) if w.isalpha()]
    if not alpha:
        return ["it has no words"]
    share = sum(w in EN_FUNCTION for w in alpha) / len(alpha)
    return [] if share >= 0.12 else [f"it does not read as English ({share:.0%} function words)"]


def repetition_problems(text: str) -> list[str]:
    """Text padded by repeating itself: it compresses too well or repeats its word trigrams."""
    data = text.encode()
    out = []
    if len(data) >= 300:
        ratio = len(zlib.compress(data, 9)) / len(data)
        if ratio < 0.3:
            out.append(f"it repeats itself (compresses to {ratio:.0%})")
    ws = words(text)
    if len(ws) >= 30:
        grams = list(zip(ws, ws[1:], ws[2:]))
        distinct = len(set(grams)) / len(grams)
        if distinct < 0.6:
            out.append(f"only {distinct:.0%} of its word trigrams are distinct")
    return out


def prompt_overlap(text: str, prompt: str) -> float:
    """The share of the text's word 4-grams copied from the prompt."""
    ws, ps = words(text), words(prompt)
    grams = list(zip(ws, ws[1:], ws[2:], ws[3:]))
    if len(grams) < 5:
        return 0.0
    have = set(zip(ps, ps[1:], ps[2:], ps[3:]))
    return sum(g in have for g in grams) / len(grams)


def stuffing_problems(paragraph: str, lang: str = "en", prompt: str = "") -> list[str]:
    """A keyword-stuffed paragraph: many words and no sentence structure (a long run with no end),
    nothing but the prompt's own words, or (English) almost no function words among many."""
    ws = WORD.findall(paragraph)
    if len(ws) < 25:
        return []
    out = []
    longest = max(len(WORD.findall(part)) for part in re.split(r"[.!?。;:]\s", paragraph))
    if longest > 45:
        out.append(f"a run of {longest} words with no sentence end (a keyword list?)")
    distinct = set(words(paragraph))
    if prompt and len(distinct) >= 20:
        share = len(distinct & set(words(prompt))) / len(distinct)
        if share >= 0.9:
            out.append(f"{share:.0%} of its words are the prompt's (a keyword list?)")
    alpha = [w for w in words(paragraph) if w.isalpha()]
    if lang != "ko" and len(alpha) >= 25:
        share = sum(w in EN_FUNCTION for w in alpha) / len(alpha)
        if share < 0.15:
            out.append(f"only {share:.0%} of its words are function words (a keyword list?)")
    return out


def filler_problems(text: str, lang: str, prompt: str) -> list[str]:
    """Everything that makes `text` filler rather than prose, or [] when it reads as real prose."""
    out = language_problems(text, lang) + repetition_problems(text)
    for para in text.split("\n"):
        out += stuffing_problems(para, lang, prompt)
    overlap = prompt_overlap(text, prompt)
    if overlap >= 0.5:
        out.append(f"{overlap:.0%} of it is copied from the task's prompt")
    return out


def own_sentences(section: str, others: list[str]) -> list[str]:
    """Sentences of `section` (three words or more) that no other section also has."""
    elsewhere = {re.sub(r"\s+", " ", s).lower() for o in others for s in sentences(o)}
    return [s for s in sentences(section) if re.sub(r"\s+", " ", s).lower() not in elsewhere]


def mentions(text: str, names: list[str]) -> list[str]:
    """Names that occur in `text`, longest first, a longer name hiding the shorter names inside it."""
    found, rest = [], text
    for name in sorted(names, key=len, reverse=True):
        if name and name in rest:
            found.append(name)
            rest = rest.replace(name, " ")
    return found


def misattributed(text: str, figures: dict[str, str]) -> list[str]:
    """Sentences that name exactly one entity but cite the figure of another one.

    `figures` maps each entity (a category) to its figure as written (e.g. "1,234.56")."""
    owner = {}
    for name, fig in figures.items():
        owner.setdefault(fig, set()).add(name)
    out = []
    for s in sentences(text):
        named = mentions(s, list(figures))
        if len(named) != 1:
            continue
        for fig in MONEY.findall(s):
            if fig in owner and named[0] not in owner[fig]:
                out.append(f"{s!r} cites {fig} ({', '.join(sorted(owner[fig]))}) for {named[0]}")
    return out
