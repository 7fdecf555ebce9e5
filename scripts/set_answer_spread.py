"""How far a task set's answers spread per template: what a constant policy could learn (issue #38).

    .venv/bin/python scripts/set_answer_spread.py office/drawn [terminal/drawn ...] [--json]

For each set's materialised tasks, a task's answer is what its verifier compares the final state
with: its `tests/expected.json` without what names files or fingerprints the inputs (`inputs`,
`unchanged`, `deliverables`, `file`, `language`, `prompt`), as canonical JSON. Per template
(db's and terminal's `metadata.template`, office's task type) it prints the tasks, the distinct
answers, the most common answer's share and the answer entropy in bits. It reads expected values,
not verdicts: two answers that differ here may still both pass one task (the baselines'
`sibling` policy measures that: `envhub validate --baselines --by-template`). db's question
templates have their own, answer-aware measure: scripts/db_answer_spread.py.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from envhub.config import get_settings  # noqa: E402
from envhub.tasks.catalog import Catalog  # noqa: E402

NOT_THE_ANSWER = {"inputs", "unchanged", "deliverables", "file", "language", "prompt"}


def answer_of(task_dir: Path) -> str:
    expected = json.loads((task_dir / "tests" / "expected.json").read_text(encoding="utf-8"))
    if isinstance(expected, dict):
        expected = {k: v for k, v in expected.items() if k not in NOT_THE_ANSWER}
    return json.dumps(expected, sort_keys=True, ensure_ascii=False)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="+", help="task set ids, e.g. office/drawn")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    families = sorted({s.split("/")[0] for s in args.sets})
    catalog = Catalog(get_settings().tasks_dir, families=families)
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for t in catalog.tasks.values():
        if t.taskset is None or t.taskset.id not in args.sets:
            continue
        meta = t.config.metadata
        template = str(meta.get("template") or meta.get("task_type") or "-")
        groups[(t.taskset.id, template)].append(answer_of(t.path))
    rows = []
    for (set_id, template), answers in sorted(groups.items()):
        counts = Counter(answers)
        n = len(answers)
        top = counts.most_common(1)[0][1]
        rows.append({"set": set_id, "template": template, "tasks": n, "distinct": len(counts),
                     "top_share": round(top / n, 4),
                     "entropy_bits": round(-sum(c / n * math.log2(c / n) for c in counts.values()), 2)})
    if args.json:
        print(json.dumps(rows, indent=1))  # noqa: T201 - a command-line entry
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table("set", "template", "tasks", "distinct", "top share", "entropy (bits)",
                  title="answers per template (expected.json, less file names and input fingerprints)")
    for r in rows:
        table.add_row(r["set"], r["template"], str(r["tasks"]), str(r["distinct"]), f"{r['top_share']:.1%}",
                      f"{r['entropy_bits']:.2f}")
    Console().print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
