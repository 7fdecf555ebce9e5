"""How far each db question template's answers spread over drawn databases (issue #38).

    .venv/bin/python scripts/db_answer_spread.py [--dbs 40] [--domain retail ...] [--json]

Draws every intent once per database, on `--dbs` databases per domain (the db
seeds drawn sets use), and prints per template: tasks drawn, distinct answers, the most common
answer's share (what a constant policy earns), the answer entropy in bits and the sibling-hit
rate (how often another task's answer of the same template passes this task's check). Rows over
the bar (`environments.db.spread`) are marked. Exit status 1 when any row is over the bar.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from environments.db import domains as registry  # noqa: E402
from environments.db.spread import MAX_SIBLING_HITS, MAX_TOP_SHARE, draw, from_tasks, spread  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dbs", type=int, default=40, help="databases drawn per domain")
    ap.add_argument("--domain", action="append", choices=registry.NAMES, help="only these domains")
    ap.add_argument("--set", dest="taskset", help="measure a task set's own tasks instead (e.g. db/drawn)")
    ap.add_argument("--json", action="store_true", help="print JSON rows instead of a table")
    args = ap.parse_args()
    if args.taskset:
        from envhub.tasks.catalog import Catalog

        catalog = Catalog(Path(__file__).resolve().parents[1] / "tasks", families=["db"])
        folders = [t.path for t in catalog.tasks.values() if t.taskset and t.taskset.id == args.taskset
                   and t.config.metadata.get("domain") in (args.domain or registry.NAMES)]
        if not folders:
            ap.error(f"no tasks in set {args.taskset!r}")
        rows = spread(from_tasks(folders))
        where = f"the {len(folders)} tasks of {args.taskset}"
    else:
        rows = spread(draw(args.dbs, tuple(args.domain or registry.NAMES)))
        where = f"{args.dbs} drawn databases per domain"
    bad = [f for r in rows for f in r.failures()]
    if args.json:
        out = {"over": where, "max_top_share": MAX_TOP_SHARE, "max_sibling_hits": MAX_SIBLING_HITS,
               "templates": [{**asdict(r), "ok": not r.failures()} for r in rows], "failures": bad}
        print(json.dumps(out, ensure_ascii=False, indent=1))  # noqa: T201 - a command-line entry
        return 1 if bad else 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"db template answers over {where}")
    for col in ("domain", "template", "kind", "tasks", "distinct", "top share", "top answer", "entropy (bits)",
                "sibling hits", "ok"):
        table.add_column(col, justify="right" if col in ("tasks", "distinct", "top share", "entropy (bits)",
                                                         "sibling hits") else "left")
    for r in rows:
        ok = not r.failures()
        table.add_row(r.domain, r.slug, r.kind, str(r.tasks), str(r.distinct), f"{r.top_share:.1%}", r.top[:30],
                      f"{r.entropy:.2f}", f"{r.sibling_hits:.2%}", "yes" if ok else "[red]NO[/red]")
    console = Console(width=160)
    console.print(table)
    for line in bad:
        console.print(f"[red]over the bar[/red] {line}", markup=True, highlight=False)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
