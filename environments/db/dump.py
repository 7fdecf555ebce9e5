"""Canonical JSON of a database: one file per table, rows sorted by primary key, typed values.

This is what the verifier reads (it has no SQLAlchemy): ints, strings, booleans and null stay
JSON types; dates and times become ISO text. The schema file tells the verifier each table's
primary key and foreign keys, so it can match new rows by content rather than by surrogate id.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, MetaData, select

Tables = dict[str, list[dict[str, Any]]]


def _value(v: Any) -> Any:
    if isinstance(v, dt.datetime):
        return v.replace(microsecond=0).isoformat()
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, Decimal):
        return str(v)
    return v


def dump(conn: Connection, metadata: MetaData) -> Tables:
    out: Tables = {}
    for table in metadata.sorted_tables:
        pk = [c for c in table.primary_key.columns]
        rows = conn.execute(select(table).order_by(*pk)).mappings().all()
        out[table.name] = [{k: _value(v) for k, v in r.items()} for r in rows]
    return out


def schema(metadata: MetaData) -> dict[str, Any]:
    return {t.name: {"pk": [c.name for c in t.primary_key.columns],
                     "columns": [c.name for c in t.columns],
                     "fks": {fk.parent.name: fk.column.table.name for fk in t.foreign_keys}}
            for t in metadata.sorted_tables}


def write_tables(tables: Tables, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for name, rows in tables.items():
        (dest / f"{name}.json").write_text(json.dumps(rows, ensure_ascii=False, sort_keys=True, indent=0) + "\n",
                                           encoding="utf-8")


def tables_sha256(tables: Tables) -> str:
    """One hash of a whole database dump (tasks record their seed database's)."""
    return hashlib.sha256(json.dumps(tables, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
