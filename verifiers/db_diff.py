"""Diffs between two canonical database dumps (standard library only).

A dump is a folder of `<table>.json` files (lists of rows) plus `schema.json` naming each
table's primary key and foreign keys. New rows have surrogate ids that depend on the order
work was done in, so they are matched by *content*: a row's canonical key is its non-key
columns, with any foreign key that points at another new row replaced by that row's own
canonical key (the natural key, computed recursively).

Used both by task synthesis (to record the expected diff) and by verifiers (to judge).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

Rows = dict[str, dict[str, Any]]  # pk text -> row


def pk_text(row: dict[str, Any], pk: list[str]) -> str:
    return "|".join(str(row[c]) for c in pk)


def load_dump(folder: Path, schema: dict[str, Any]) -> dict[str, Rows]:
    """Every table of `schema` from `folder`; a missing or malformed table file is an error."""
    out: dict[str, Rows] = {}
    for table, info in schema.items():
        path = folder / f"{table}.json"
        if not path.is_file():
            raise FileNotFoundError(f"{path} is missing")
        rows = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(rows, list):
            raise ValueError(f"{path} is not a list of rows")
        out[table] = {pk_text(r, info["pk"]): r for r in rows}
    return out


class Canon:
    """Canonical keys of rows in `final`, given which rows are new."""

    def __init__(self, schema: dict[str, Any], final: dict[str, Rows], added: dict[str, set[str]]) -> None:
        self.schema = schema
        self.final = final
        self.added = added
        self._memo: dict[tuple[str, str], str] = {}

    def value(self, table: str, col: str, v: Any, depth: int = 0) -> Any:
        ref = self.schema[table]["fks"].get(col)
        if ref is not None and v is not None and str(v) in self.added.get(ref, ()):
            if depth > 8:
                return {"new": "..."}
            return {"new": self.row(ref, str(v), depth + 1)}
        return v

    def row(self, table: str, pk: str, depth: int = 0) -> str:
        key = (table, pk)
        if key not in self._memo:
            info = self.schema[table]
            r = self.final[table][pk]
            content = {c: self.value(table, c, r[c], depth) for c in sorted(r) if c not in info["pk"]}
            self._memo[key] = json.dumps(content, sort_keys=True, ensure_ascii=False)
        return self._memo[key]


def diff(schema: dict[str, Any], initial: dict[str, Rows], final: dict[str, Rows]) -> dict[str, Any]:
    """Field-level changes from `initial` to `final`, new rows by canonical key.

    Returns `{table: {"updated": {pk: {col: [old, new]}}, "added": [canon, ...], "deleted": [pk, ...]}}`
    with only the tables that changed; new values of foreign keys to new rows are canonical.
    """
    added = {t: set(final[t]) - set(initial[t]) for t in schema}
    canon = Canon(schema, final, added)
    out: dict[str, Any] = {}
    for t in schema:
        ini, fin = initial[t], final[t]
        updated: dict[str, dict[str, list[Any]]] = {}
        for pk in sorted(set(ini) & set(fin)):
            a, b = ini[pk], fin[pk]
            cols = {c: [a.get(c), canon.value(t, c, b.get(c))] for c in sorted(set(a) | set(b))
                    if a.get(c) != b.get(c)}
            if cols:
                updated[pk] = cols
        new = sorted(canon.row(t, pk) for pk in added[t])
        deleted = sorted(set(ini) - set(fin))
        if updated or new or deleted:
            out[t] = {"updated": updated, "added": new, "deleted": deleted}
    return out


def compare(expected: dict[str, Any], actual: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(missing, extra): expected changes absent from `actual`, and changes nobody asked for."""
    missing: list[str] = []
    extra: list[str] = []
    for t, exp in expected.items():
        act = actual.get(t, {"updated": {}, "added": [], "deleted": []})
        for pk, cols in exp["updated"].items():
            got = act["updated"].get(pk, {})
            for c, (old, new) in cols.items():
                if c not in got:
                    missing.append(f"{t}[{pk}].{c} should change from {old!r} to {new!r} but did not")
                elif got[c][1] != new:
                    missing.append(f"{t}[{pk}].{c} should be {new!r}, is {got[c][1]!r}")
        for pk in exp["deleted"]:
            if pk not in act["deleted"]:
                missing.append(f"{t}[{pk}] should be deleted")
        short = Counter(exp["added"]) - Counter(act["added"])
        missing += [f"{t}: expected new row {row}" for row in sorted(short.elements())]
    for t, act in actual.items():
        exp = expected.get(t, {"updated": {}, "added": [], "deleted": []})
        for pk, cols in act["updated"].items():
            for c, (old, new) in cols.items():
                if c not in exp["updated"].get(pk, {}):
                    extra.append(f"{t}[{pk}].{c} changed from {old!r} to {new!r} (not requested)")
        for pk in act["deleted"]:
            if pk not in exp["deleted"]:
                extra.append(f"{t}[{pk}] was deleted (not requested)")
        surplus = Counter(act["added"]) - Counter(exp["added"])
        extra += [f"{t}: unexpected new row {row}" for row in sorted(surplus.elements())]
    return missing, extra
