"""How far a template's answers spread over drawn databases (issue #38).

A drawn task set asks each template on many starting databases. If a template's answer is
nearly always the same (a count of 1 to 4, a status, a cap), a policy that never looks anything
up earns it: a constant, or the answer of a sibling task of the same template. A write
template's "answer" is what its oracle writes (the calls of `writes` tools, in order): if a few
entity ids, the same on every database, cover most tasks, a memorised call list earns it (the
gate's `replay` baseline). `draw` drafts every intent of a domain on `n` databases (db seeds
`1_000_000 + k`, as drawn sets use), the way `environments.db.generate.materialize` does (draft,
then execute; a draft whose oracle fails is dropped; writes are only drafted, their calls being
the measure), and `spread` measures, per template:

- the share of its tasks that the most common answer covers (a constant policy's reward);
- the sibling-hit rate: the share of (task, other task of the template) pairs where the other's
  answer passes this task's answer check (`verifiers.db_state.check_answer`, or for a refusal
  the figure check of `check_refusal_grounds`), so the same normalisation of case, money and
  sets judges it; for a write, where the other's write calls are this task's;
- tasks that share both their prompt and their answer (one task, twice);
- the answer entropy in bits.

`scripts/db_answer_spread.py` prints the table; `tests/db/test_drawn_answers.py` holds the bar.
"""

from __future__ import annotations

import json
import math
import random
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

import yaml

from environments.db import domains as registry
from environments.db.synth import Synth
from verifiers import db_state

BASE = 1_000_000  # drawn sets' db seeds start here (environments.db.generate.db_seed)
ATTEMPTS = 6  # draws of one intent on one database before giving up on it (as generate does)

#: The bar per template over the drawn databases. Two tasks may always share an answer (over 40
#: tasks that is the 5 %; a template drawn on a few less databases is not failed for one pair).
MAX_TOP_SHARE = 0.05
MAX_SIBLING_HITS = 0.02


@dataclass
class Drawn:
    domain: str
    slug: str
    kind: str
    db_seed: int
    prompt: str
    given: str  # what the oracle submits: the answer, the refusal's figure, a write's calls (JSON)
    spec: dict[str, Any]  # the expected answer, the grounds, or {"writes": given}


@dataclass
class Spread:
    domain: str
    slug: str
    kind: str
    tasks: int
    distinct: int
    top: str
    top_share: float
    top_count: int
    entropy: float
    sibling_hits: float
    twins: list[str] = field(default_factory=list)  # prompts drawn twice with the same answer

    def failures(self) -> list[str]:
        out = []
        if self.top_share > MAX_TOP_SHARE and self.top_count > 2:
            out.append(f"{self.domain}/{self.slug}: answer {self.top!r} covers {self.top_share:.0%} of its "
                       f"{self.tasks} tasks (at most {MAX_TOP_SHARE:.0%})")
        if self.sibling_hits > MAX_SIBLING_HITS:
            out.append(f"{self.domain}/{self.slug}: a sibling task's answer is right on {self.sibling_hits:.1%} of "
                       f"(task, sibling) pairs (at most {MAX_SIBLING_HITS:.0%}); most common {self.top!r}")
        if self.twins:
            out.append(f"{self.domain}/{self.slug}: {len(self.twins)} prompts drawn twice with the same answer, "
                       f"e.g. {self.twins[0][:120]!r}")
        return out


def writes(actions: list[dict[str, Any]], domain: str) -> str:
    """A write oracle's calls of the domain's `writes` tools, as one canonical string."""
    writing = {t.name for t in registry.get(domain).tools if t.writes}
    return json.dumps([[a["tool"], a["arguments"]] for a in actions if a["tool"] in writing], sort_keys=True)


def _given(draft: Any, domain: str) -> tuple[str, dict[str, Any]]:
    if draft.kind == "write":
        calls = writes(draft.actions, domain)
        return calls, {"writes": calls}
    if draft.kind == "refusal":
        return draft.grounds["figure"][0], draft.grounds
    submitted = [c for c in draft.actions if c["tool"] == "submit_answer"]
    return str(submitted[-1]["arguments"]["answer"]) if submitted else "", draft.answer


def key(spec: dict[str, Any], kind: str) -> str:
    """An answer as counted: a scalar's first form, a set's items sorted, a refusal's figure, a
    write's calls."""
    if kind == "write":
        return spec["writes"]
    if kind == "refusal":
        return db_state.normalize(spec["figure"][0])
    if spec["kind"] == "scalar":
        a = spec["accept"][0]
        n = db_state.as_number(a)
        return format(n.normalize(), "f") if n is not None else db_state.normalize(a)
    return " | ".join(sorted(db_state.normalize(alts[0]) for alts in spec["items"]))


def accepted(given: str, spec: dict[str, Any], kind: str) -> bool:
    """Would `given` pass the verifier's check of this expected answer (or refusal figure)? A write
    counts as passing when it makes the same calls."""
    if kind == "write":
        return given == spec["writes"]
    if kind == "refusal":
        return any(db_state.same(given, f) or db_state._figure(given) == db_state._figure(f)  # noqa: SLF001
                   for f in spec["figure"])
    with mock.patch.object(db_state, "answers", lambda: {"answers": [given], "refusals": []}):
        return _passes(spec)


def _passes(spec: dict[str, Any]) -> bool:
    try:
        db_state.check_answer({"answer": spec})
    except AssertionError:
        return False
    return True


def draw(n: int, names: tuple[str, ...] = registry.NAMES, scratch: Path | None = None,
         tag: str = "spread") -> list[Drawn]:
    """Every intent of each domain, drawn once on each of `n` databases."""
    out: list[Drawn] = []
    with tempfile.TemporaryDirectory(prefix="db-spread-", dir=scratch) as tmp:
        synth = Synth(Path(tmp))
        for name in names:
            domain = registry.get(name)
            intents = registry.intents(name)
            for k in range(n):
                db_seed = BASE + k
                for index in range(len(intents)):
                    for attempt in range(ATTEMPTS):
                        rng = random.Random(f"{tag}:{name}:{k}:{index}:{attempt}")
                        draft = synth.draft(domain, rng, index, db_seed=db_seed)
                        if draft is None:
                            continue
                        if draft.kind != "write":
                            try:
                                synth.execute(domain, draft, db_seed)
                            except ValueError:
                                continue
                        given, spec = _given(draft, name)
                        out.append(Drawn(name, draft.slug, draft.kind, db_seed, draft.prompt, given, spec))
                        break
    return out


def from_tasks(folders: list[Path]) -> list[Drawn]:
    """The tasks among materialised task folders (a drawn set's), as drawn."""
    out: list[Drawn] = []
    for folder in folders:
        expected = json.loads((folder / "tests" / "expected.json").read_text(encoding="utf-8"))
        meta = yaml.safe_load((folder / "task.yaml").read_text(encoding="utf-8"))["metadata"]
        actions = json.loads((folder / "solution" / "actions.json").read_text(encoding="utf-8"))
        if expected["kind"] == "write":
            given = writes(actions, meta["domain"])
            spec = {"writes": given}
        elif expected["kind"] == "refusal":
            given, spec = expected["grounds"]["figure"][0], expected["grounds"]
        else:
            given = next(str(a["arguments"]["answer"]) for a in reversed(actions) if a["tool"] == "submit_answer")
            spec = expected["answer"]
        out.append(Drawn(meta["domain"], meta["template"], expected["kind"], int(meta.get("db_seed", 0)),
                         (folder / "prompt.md").read_text(encoding="utf-8"), given, spec))
    return out


def spread(drawn: list[Drawn]) -> list[Spread]:
    by: dict[tuple[str, str], list[Drawn]] = {}
    for d in drawn:
        by.setdefault((d.domain, d.slug), []).append(d)
    out = []
    for (domain, slug), tasks in by.items():
        kind = tasks[0].kind
        keys = [key(t.spec, kind) for t in tasks]
        counts = Counter(keys)
        top, top_n = counts.most_common(1)[0]
        n = len(tasks)
        entropy = -sum(c / n * math.log2(c / n) for c in counts.values())
        pairs = hits = 0
        for i, t in enumerate(tasks):
            for j, other in enumerate(tasks):
                if i != j:
                    pairs += 1
                    hits += accepted(other.given, t.spec, kind)
        seen: Counter[tuple[str, str]] = Counter((t.prompt, k) for t, k in zip(tasks, keys, strict=True))
        twins = [p for (p, _), c in seen.items() if c > 1]
        out.append(Spread(domain, slug, kind, n, len(counts), top, top_n / n, top_n, entropy,
                          hits / pairs if pairs else 0.0, twins))
    return sorted(out, key=lambda s: (s.domain, s.kind, s.slug))
