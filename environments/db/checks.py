"""Family-specific validation of a db task: it still means what it meant when it was written.

The generic validator runs the oracle and the null agent; these checks catch drift it cannot
see: the seed database changed (a new Faker, an edited seed), or the tools now do something
else with the oracle's calls than what the task's expected diff records.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from environments.db import domains as registry
from environments.db import dump as dumping
from environments.db.calls import run_call
from environments.db.store import Store, seed_of
from envhub.env import ValidationFinding
from envhub.errors import AgentError, TaskInvalid
from envhub.spec import ToolCall
from envhub.tasks.model import Task
from verifiers.db_diff import diff


def validate_task(task: Task, store: Store) -> list[ValidationFinding]:
    out: list[ValidationFinding] = []
    try:
        domain = registry.get(str(task.config.metadata.get("domain", "")))
    except TaskInvalid as e:
        return [ValidationFinding("db-domain", False, e.detail)]
    path = task.tests_dir / "expected.json"
    if not path.is_file():
        return [ValidationFinding("db-expected", False, f"{path} is missing")]
    exp = json.loads(path.read_text(encoding="utf-8"))
    kind = exp.get("kind")
    out.append(ValidationFinding("db-kind", kind in ("write", "read", "refusal") and (
        (kind == "write" and bool(exp.get("diff"))) or (kind == "read" and bool(exp.get("answer")))
        or (kind == "refusal" and bool(exp.get("refusal")))), f"kind {kind!r} with its required expectation"))
    try:
        db_seed = seed_of(task.config.metadata)
    except TaskInvalid as e:
        return [ValidationFinding("db-seed", False, e.detail)]
    initial = store.initial(domain, db_seed)
    same_seed = dumping.tables_sha256(initial) == exp.get("initial_sha256")
    out.append(ValidationFinding("db-seed-unchanged", same_seed,
                                 "" if same_seed else "the seed database differs from the one the task was written "
                                 "against (Faker version or seed code changed): re-synthesize"))
    actions = json.loads((task.solution_dir / "actions.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="db-check-") as tmp:
        handle = store.create(domain, Path(tmp), tag="v", seed=db_seed)
        try:
            error = ""
            for a in actions:
                try:
                    run_call(handle, domain, ToolCall.model_validate(a))
                except AgentError as e:
                    error = f"oracle call {a['tool']} failed: {e.detail}"
                    break
            with handle.engine.connect() as conn:
                final = dumping.dump(conn, domain.base.metadata)
        finally:
            handle.drop()
    schema = dumping.schema(domain.base.metadata)

    def index(tables: dumping.Tables) -> dict:
        return {t: {"|".join(str(r[c]) for c in schema[t]["pk"]): r for r in rows} for t, rows in tables.items()}

    got = diff(schema, index(initial), index(final))
    ok = not error and got == (exp.get("diff") or {})
    out.append(ValidationFinding("db-oracle-reproduces-diff", ok, error or ("" if ok else
                                 "the oracle's calls no longer produce the recorded diff")))
    return out
