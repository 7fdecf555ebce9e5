"""Seed data for OfficeVerse tasks: 11 industry profiles over data bundled in PyPI packages.

Numbers come from data sets that ship inside wheels (statsmodels' datasets, scikit-learn's toy
sets) and names from Faker (`en_US`, `ko_KR`); nothing is downloaded. A profile gives the
industry's vocabulary (English and Korean) and a column of real numbers that a seeded RNG samples
and rescales into amounts, so every instance differs but is reproducible from its seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache

from faker import Faker


@dataclass(frozen=True)
class Industry:
    key: str
    name: str
    name_ko: str
    source: str  # "statsmodels:<dataset>:<column>" or "sklearn:<loader>"
    entity: str  # what one record is
    entity_ko: str
    prefix: str  # record id prefix
    categories: tuple[str, ...]
    categories_ko: tuple[str, ...]
    amount: str  # what the money column means
    amount_ko: str
    scale: float  # amounts are roughly this big


INDUSTRIES: dict[str, Industry] = {i.key: i for i in [
    Industry("banking", "Banking & capital markets", "은행·자본시장", "statsmodels:macrodata:realinv", "transaction", "거래",
             "TX", ("Deposits", "Loans", "Cards", "Treasury", "Wealth"), ("예금", "대출", "카드", "자금", "자산관리"),
             "Amount", "금액", 5000),
    Industry("insurance", "Insurance", "보험", "statsmodels:randhie:mdvis", "claim", "청구",
             "CL", ("Auto", "Home", "Health", "Life", "Travel"), ("자동차", "주택", "건강", "생명", "여행"),
             "Claim amount", "청구액", 3000),
    Industry("healthcare", "Healthcare", "의료", "sklearn:diabetes", "visit", "진료",
             "PV", ("Cardiology", "Oncology", "Pediatrics", "Radiology", "Surgery"), ("심장내과", "종양내과", "소아과",
                                                                                      "영상의학과", "외과"),
             "Charge", "진료비", 800),
    Industry("manufacturing", "Manufacturing", "제조", "statsmodels:copper:WORLDCONSUMPTION", "work order", "작업지시",
             "WO", ("Assembly", "Machining", "Painting", "Packaging", "Testing"), ("조립", "가공", "도장", "포장", "검사"),
             "Cost", "원가", 2000),
    Industry("retail", "Retail & wholesale", "유통·도소매", "statsmodels:engel:foodexp", "order", "주문",
             "OR", ("Grocery", "Apparel", "Electronics", "Home", "Beauty"), ("식품", "의류", "전자제품", "생활용품", "뷰티"),
             "Sales", "매출", 400),
    Industry("realestate", "Real estate & construction", "부동산·건설", "statsmodels:grunfeld:value", "lease", "임대",
             "LS", ("Office", "Retail", "Industrial", "Residential", "Mixed use"), ("오피스", "상가", "물류", "주거", "복합"),
             "Rent", "임대료", 6000),
    Industry("government", "Government", "공공", "statsmodels:statecrime:violent", "grant", "보조금",
             "GR", ("Education", "Health", "Transport", "Housing", "Safety"), ("교육", "보건", "교통", "주거", "안전"),
             "Award", "지원액", 9000),
    Industry("professional", "Professional services", "전문 서비스", "statsmodels:strikes:duration", "engagement", "용역",
             "EN", ("Audit", "Tax", "Advisory", "Legal", "Consulting"), ("감사", "세무", "자문", "법률", "컨설팅"),
             "Fees", "수수료", 4000),
    Industry("media", "Information, media & telecom", "정보·미디어·통신", "statsmodels:nile:volume", "title", "콘텐츠",
             "MT", ("Drama", "Music", "News", "Sports", "Kids"), ("드라마", "음악", "뉴스", "스포츠", "키즈"),
             "Revenue", "수익", 1500),
    Industry("education", "Education", "교육", "statsmodels:star98:NABOVE", "enrolment", "수강",
             "ED", ("Math", "Science", "Language", "Arts", "History"), ("수학", "과학", "국어", "예술", "역사"),
             "Tuition", "수강료", 700),
    Industry("transport", "Transport, logistics & energy", "운송·물류·에너지", "statsmodels:co2:co2", "shipment", "운송",
             "SH", ("Air", "Rail", "Road", "Sea", "Pipeline"), ("항공", "철도", "도로", "해운", "배관"),
             "Freight", "운임", 2500),
]}


@cache
def _column(source: str) -> tuple[float, ...]:
    kind, *rest = source.split(":")
    if kind == "sklearn":
        from sklearn import datasets

        values = getattr(datasets, f"load_{rest[0]}")().target
    else:
        from statsmodels import datasets

        df = getattr(datasets, rest[0]).load_pandas().data
        values = df[rest[1]].dropna().to_numpy()
    vals = tuple(float(v) for v in values if float(v) > 0)
    assert vals, source
    return vals


def amounts(ind: Industry, rng: random.Random, n: int) -> list[float]:
    """`n` amounts sampled from the industry's real data column, rescaled to its usual size."""
    col = _column(ind.source)
    mean = sum(col) / len(col)
    return [round(rng.choice(col) / mean * ind.scale * rng.uniform(0.6, 1.4), 2) for _ in range(n)]


def faker(language: str, seed: int) -> Faker:
    f = Faker("ko_KR" if language == "ko" else "en_US")
    f.seed_instance(seed)
    return f


def label(ind: Industry, language: str, field: str) -> str:
    return getattr(ind, f"{field}_ko") if language == "ko" else getattr(ind, field)


def categories(ind: Industry, language: str) -> tuple[str, ...]:
    return ind.categories_ko if language == "ko" else ind.categories
