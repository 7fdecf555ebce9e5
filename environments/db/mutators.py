"""Validation mutators: perturb an exported final state so that a sound verifier must fail.

Each edits `final/` and `replayed/` identically, so the replay check still holds and the failure
comes from the diff, collateral or answer checks (a broken replay is an environment fault, which
validation does not count as a kill). Each returns False when it does not apply to the task.

The process mutators edit the call log (`calls.json`, `answers.json`) instead, leaving a final
state that is still right: a refusal without its look-up or with the wrong grounds (rule or
figure), two outcomes in one episode (a refusal with an answer or a write, before or after it;
a question given a wrong answer before the right one), a write to another row undone by a later
call. Only the process checks can catch them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

from envhub.env import Mutator
from envhub.tasks.model import Task
from environments.db import domains as registry

Rows = list[dict[str, Any]]


def _expected(task: Task) -> dict[str, Any]:
    return json.loads((task.tests_dir / "expected.json").read_text(encoding="utf-8"))


def _schema(state: Path) -> dict[str, Any]:
    return json.loads((state / "schema.json").read_text())


def _read(state: Path, which: str, table: str) -> Rows:
    return json.loads((state / which / f"{table}.json").read_text(encoding="utf-8"))


def _edit(state: Path, table: str, fn: Callable[[Rows], None]) -> None:
    """Apply the same edit to the final and the replayed copy of `table`, at once (an edit made in a
    loop binds the loop's values as defaults all the same, so it cannot see a later iteration's)."""
    for which in ("final", "replayed"):
        path = state / which / f"{table}.json"
        rows = json.loads(path.read_text(encoding="utf-8"))
        fn(rows)
        path.write_text(json.dumps(rows, ensure_ascii=False, sort_keys=True, indent=0) + "\n", encoding="utf-8")


def _pk(row: dict[str, Any], pk: list[str]) -> str:
    return "|".join(str(row[c]) for c in pk)


def _other(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 7
    if isinstance(value, float):
        return value + 7.5
    if value is None:
        return "mutated"
    return f"{value}-mutated"


def _plain_column(schema: dict[str, Any], table: str) -> str:
    info = schema[table]
    return next(c for c in info["columns"] if c not in info["pk"] and c not in info["fks"])


def drop_operation(task: Task, state: Path) -> bool:
    """Undo one expected change: revert a field, remove a new row or restore a deleted one."""
    diff = _expected(task).get("diff") or {}
    schema = _schema(state)
    for table, change in diff.items():
        pk = schema[table]["pk"]
        if change["updated"]:
            key, cols = next(iter(change["updated"].items()))
            col, (old, _new) = next(iter(cols.items()))

            def revert(rows: Rows, pk: list[str] = pk, key: str = key, col: str = col, old: Any = old) -> None:
                for r in rows:
                    if _pk(r, pk) == key:
                        r[col] = old
            _edit(state, table, revert)
            return True
    for table, change in diff.items():
        pk = schema[table]["pk"]
        if change["added"]:
            initial = {_pk(r, pk) for r in _read(state, "initial", table)}
            _edit(state, table, lambda rows, pk=pk, initial=initial: rows.remove(
                next(r for r in rows if _pk(r, pk) not in initial)))
            return True
        if change["deleted"]:
            gone = next(r for r in _read(state, "initial", table) if _pk(r, pk) == change["deleted"][0])
            _edit(state, table, lambda rows, gone=gone: rows.append(dict(gone)))
            return True
    return False


def change_field(task: Task, state: Path) -> bool:
    """Give one expected-changed field (or, with no expected change, any field) another value."""
    diff = _expected(task).get("diff") or {}
    schema = _schema(state)
    for table, change in diff.items():
        pk = schema[table]["pk"]
        if change["updated"]:
            key, cols = next(iter(change["updated"].items()))
            col = next(iter(cols))
            targets = {key}
        elif change["added"]:
            initial = {_pk(r, pk) for r in _read(state, "initial", table)}
            targets = {_pk(r, pk) for r in _read(state, "final", table) if _pk(r, pk) not in initial}
            targets = {sorted(targets)[0]}
            col = _plain_column(schema, table)
        else:
            continue

        def mutate(rows: Rows, pk: list[str] = pk, targets: set[str] = targets, col: str = col) -> None:
            for r in rows:
                if _pk(r, pk) in targets:
                    r[col] = _other(r[col])
        _edit(state, table, mutate)
        return True
    table = next(t for t in schema if _read(state, "final", t))
    col = _plain_column(schema, table)
    _edit(state, table, lambda rows: rows[0].__setitem__(col, _other(rows[0][col])))
    return True


def add_row(task: Task, state: Path) -> bool:
    """Insert one extra row (a changed copy of an existing one, with a fresh id)."""
    schema = _schema(state)
    table = next(t for t in schema if _read(state, "final", t) and schema[t]["pk"] == ["id"])
    col = _plain_column(schema, table)

    def insert(rows: Rows) -> None:
        extra = dict(rows[-1])
        extra["id"] = max(r["id"] for r in rows) + 1
        extra[col] = _other(extra[col])
        rows.append(extra)
    _edit(state, table, insert)
    return True


def _touched(task: Task) -> dict[str, set[str]]:
    diff = _expected(task).get("diff") or {}
    return {t: set(c["updated"]) | set(c["deleted"]) for t, c in diff.items()}


def delete_unrelated_row(task: Task, state: Path) -> bool:
    """Delete one row the task never asked to touch."""
    schema, touched = _schema(state), _touched(task)
    for table in reversed(list(schema)):  # leaf tables first
        pk = schema[table]["pk"]
        rows = _read(state, "final", table)
        victim = next((r for r in rows if _pk(r, pk) not in touched.get(table, set())), None)
        if victim is not None:
            key = _pk(victim, pk)
            _edit(state, table, lambda rows, pk=pk, key=key: rows.remove(next(r for r in rows if _pk(r, pk) == key)))
            return True
    return False


def touch_unrelated_table(task: Task, state: Path) -> bool:
    """Change a field in a table the task does not change at all."""
    schema = _schema(state)
    diff = _expected(task).get("diff") or {}
    table = next((t for t in schema if t not in diff and _read(state, "final", t)), None)
    if table is None:
        return False
    col = _plain_column(schema, table)
    _edit(state, table, lambda rows: rows[-1].__setitem__(col, _other(rows[-1][col])))
    return True


def wrong_answer(task: Task, state: Path) -> bool:
    """Replace the agent's answer (or refusal) with a wrong one: every candidate, or one short."""
    exp = _expected(task)
    path = state / "answers.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    spec = exp.get("answer")
    if spec is not None:
        if spec["kind"] == "scalar":
            wrong = f"{spec['accept'][0]}, {_other(spec['accept'][0])}, unknown"
        else:
            alts = [a[0] for a in spec["items"]]
            wrong = ", ".join(alts[:-1]) if len(alts) > 1 else f"{alts[0]}, {_other(alts[0])}"
        data["answers"] = [wrong]
    elif exp.get("refusal"):
        data["refusals"] = []
        data["answers"] = ["done"]
    else:
        return False
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return True


def _log(state: Path) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    calls = json.loads((state / "calls.json").read_text(encoding="utf-8"))
    answers = json.loads((state / "answers.json").read_text(encoding="utf-8"))
    return calls, answers


def _save_log(state: Path, calls: list[dict[str, Any]], answers: dict[str, list[str]]) -> None:
    (state / "calls.json").write_text(json.dumps(calls, ensure_ascii=False, indent=1), encoding="utf-8")
    (state / "answers.json").write_text(json.dumps(answers, ensure_ascii=False, indent=1), encoding="utf-8")


def refuse_without_lookup(task: Task, state: Path) -> bool:
    """A refusal task's right refusal, but the look-ups before it are gone: a guessed refusal."""
    if not _expected(task).get("refusal"):
        return False
    calls, answers = _log(state)
    _save_log(state, [c for c in calls if c["tool"] == "refuse"], answers)
    return True


def refuse_after_dump(task: Task, state: Path) -> bool:
    """The rows a refusal rests on were only seen in a dump of their whole table, not looked up."""
    exp = _expected(task)
    if not exp.get("refusal"):
        return False
    calls, answers = _log(state)
    first = next(i for i, c in enumerate(calls) if c["tool"] == "refuse")
    dump = []
    for key in exp.get("evidence") or []:
        table = key.split("|", 1)[0]
        dump += [f"{table}|{r}" for r in range(1, 200)] + [key]
    calls = [{**c, "seen": []} for c in calls[:first]] + [{"tool": "dump_everything", "arguments": {},
                                                             "writes": False, "ok": True, "seen": dump}] + calls[first:]
    _save_log(state, calls, answers)
    return True


# --- hedges: two outcomes in one episode (check_one_outcome) ------------------------------------
# Each adds to the oracle's episode, in its call log and answers alike, the outcome the task does
# not call for: a refusal to a question or a write, an answer or a write to a refusal. The final
# state stays right, so only the one-outcome check can catch them, in either order.

def _refusal(task: Task) -> dict[str, Any]:
    """A well-formed refusal, under the domain's first rule."""
    rules = registry.get(str(task.config.metadata.get("domain", ""))).tool("refuse").params["rule"].enum or ("",)
    return {"tool": "refuse", "arguments": {"rule": rules[0], "figure": "0", "reason": "policy does not allow it"},
            "writes": False, "ok": True, "seen": []}


def _answer(text: str) -> dict[str, Any]:
    return {"tool": "submit_answer", "arguments": {"answer": text}, "writes": False, "ok": True, "seen": []}


def _write(task: Task) -> dict[str, Any]:
    """A successful write that changed nothing (a phone set to the number it had): the log's only trace."""
    tool = next(t for t in registry.get(str(task.config.metadata.get("domain", ""))).tools if t.writes)
    return {"tool": tool.name, "arguments": {}, "writes": True, "ok": True, "seen": [], "wrote": []}


def _hedge(state: Path, entry: dict[str, Any], first: bool) -> bool:
    """Put `entry` into the oracle's log (and a refusal's or an answer's text into answers.json)
    before everything else (`first`) or after it."""
    calls, answers = _log(state)
    texts = {"refuse": ("refusals", "reason"), "submit_answer": ("answers", "answer")}
    if entry["tool"] in texts:
        key, arg = texts[entry["tool"]]
        text = entry["arguments"][arg]
        answers[key] = [text, *answers[key]] if first else [*answers[key], text]
    _save_log(state, [entry, *calls] if first else [*calls, entry], answers)
    return True


def _other_outcome(task: Task) -> dict[str, Any]:
    """A refusal task's other outcome is an answer; a question's or a write's, a refusal."""
    return _answer("done") if _expected(task).get("refusal") else _refusal(task)


def hedge_after(task: Task, state: Path) -> bool:
    """The oracle's outcome, then the other one: a question answered (or the work done) and then
    refused, a refusal then answered."""
    return _hedge(state, _other_outcome(task), first=False)


def hedge_before(task: Task, state: Path) -> bool:
    """The other outcome first, then the oracle's: refused, then answered or done anyway; an answer,
    then the refusal."""
    return _hedge(state, _other_outcome(task), first=True)


def refusal_then_write(task: Task, state: Path) -> bool:
    """A refusal task's refusal, then a successful write all the same."""
    return bool(_expected(task).get("refusal")) and _hedge(state, _write(task), first=False)


def write_then_refusal(task: Task, state: Path) -> bool:
    """A successful write first, then the refusal task's refusal."""
    return bool(_expected(task).get("refusal")) and _hedge(state, _write(task), first=True)


def _another_answer(spec: dict[str, Any]) -> str:
    """A candidate answer that is not the right one: a number one off, a set one item short."""
    if spec["kind"] == "set" and len(spec["items"]) > 1:
        return ", ".join(alts[0] for alts in spec["items"][:-1])
    right = spec["accept"][0] if spec["kind"] == "scalar" else spec["items"][0][0]
    return str(Decimal(right) + 1) if re.fullmatch(r"-?\d+(\.\d+)?", right) else f"{right}-mutated"


def second_answer(task: Task, state: Path) -> bool:
    """A question given a wrong answer first and the oracle's right one last: the hedge by
    enumeration, which a judge that reads only the last answer would pay."""
    spec = _expected(task).get("answer")
    return bool(spec) and _hedge(state, _answer(_another_answer(spec)), first=True)


def _edit_refusal(task: Task, state: Path, field: str, fn: Callable[[str], str]) -> bool:
    """Change one argument of the last refusal in the call log (a refusal task's only)."""
    if not _expected(task).get("refusal"):
        return False
    calls, answers = _log(state)
    last = next(c for c in reversed(calls) if c["tool"] == "refuse")
    last["arguments"] = {**last["arguments"], field: fn(str(last["arguments"].get(field, "")))}
    _save_log(state, calls, answers)
    return True


def wrong_rule(task: Task, state: Path) -> bool:
    """The right refusal, but naming another of the domain's rules (the first one, or the second)."""
    rules = registry.get(str(task.config.metadata.get("domain", ""))).tool("refuse").params["rule"].enum or ()
    return _edit_refusal(task, state, "rule", lambda rule: next(r for r in rules if r != rule))


def wrong_figure(task: Task, state: Path) -> bool:
    """The right refusal and rule, but a figure the records do not show (a number one off)."""
    def other(figure: str) -> str:
        return str(Decimal(figure) + 1) if re.fullmatch(r"-?\d+(\.\d+)?", figure) else f"{figure}-mutated"
    return _edit_refusal(task, state, "figure", other)


def reverted_side_effect(task: Task, state: Path) -> bool:
    """A row the task never mentions is changed and changed back: the final state is clean."""
    schema, touched = _schema(state), _touched(task)
    for table in schema:
        pk = schema[table]["pk"]
        victim = next((r for r in _read(state, "initial", table) if _pk(r, pk) not in touched.get(table, set())), None)
        if victim is None:
            continue
        col = _plain_column(schema, table)
        calls, answers = _log(state)
        write = {"tool": "update_record", "arguments": {}, "writes": True, "ok": True, "seen": [],
                 "wrote": [{"row": f"{table}|{_pk(victim, pk)}", "op": "update", "cols": [col]}]}
        calls += [write, dict(write)]  # the change, then its undo
        _save_log(state, calls, answers)
        return True
    return False


def temporary_row(task: Task, state: Path) -> bool:
    """A row created and deleted again along the way (a scratch order, a test transaction)."""
    schema = _schema(state)
    table = next(t for t in schema if schema[t]["pk"] == ["id"])
    new_id = max([r["id"] for r in _read(state, "final", table)] or [0]) + 1
    calls, answers = _log(state)
    calls += [{"tool": "create_record", "arguments": {}, "writes": True, "ok": True, "seen": [],
               "wrote": [{"row": f"{table}|{new_id}", "op": "insert"}]},
              {"tool": "delete_record", "arguments": {}, "writes": True, "ok": True, "seen": [],
               "wrote": [{"row": f"{table}|{new_id}", "op": "delete"}]}]
    _save_log(state, calls, answers)
    return True


MUTATORS: dict[str, Mutator] = {
    "drop_operation": drop_operation,
    "change_field": change_field,
    "add_row": add_row,
    "delete_unrelated_row": delete_unrelated_row,
    "touch_unrelated_table": touch_unrelated_table,
    "wrong_answer": wrong_answer,
    "refuse_without_lookup": refuse_without_lookup,
    "refuse_after_dump": refuse_after_dump,
    "hedge_after": hedge_after,
    "hedge_before": hedge_before,
    "refusal_then_write": refusal_then_write,
    "write_then_refusal": write_then_refusal,
    "second_answer": second_answer,
    "wrong_rule": wrong_rule,
    "wrong_figure": wrong_figure,
    "reverted_side_effect": reverted_side_effect,
    "temporary_row": temporary_row,
}
