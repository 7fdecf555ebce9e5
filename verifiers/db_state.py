"""Checks over an exported database state (the db family's verifiers call these).

The state folder holds `schema.json`, `initial/`, `final/`, `replayed/` (canonical JSON per
table), `meta.json`, `calls.json` (the call log) and `answers.json`; the task's
`tests/expected.json` holds the expected diff (from running the oracle's calls through the same
tools at synthesis time), for questions the expected answer, and for refusals the rows the
refusal rests on (`evidence`). Every helper asserts that what it reads exists first.

Outcome checks read the final state; process checks read the call log, because some cheats
leave a clean final state: a refusal guessed without looking anything up, a refusal hedged with
an action or an answer, a write to another row that a later call undid.
"""

from __future__ import annotations

import json
import re
import unicodedata
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from verifiers import STATE, EnvFault
from verifiers.db_diff import compare, diff, load_dump


def _json(path: Path) -> Any:
    assert path.is_file(), f"{path.name} is missing from the exported state"
    return json.loads(path.read_text(encoding="utf-8"))


def expected(test_file: str) -> dict[str, Any]:
    """The task's expected outcome, next to its test module."""
    path = Path(test_file).resolve().parent / "expected.json"
    assert path.is_file(), f"{path} is missing"
    return json.loads(path.read_text(encoding="utf-8"))


def schema() -> dict[str, Any]:
    if not (STATE / "schema.json").is_file():
        raise EnvFault("the exported state has no schema.json")
    return _json(STATE / "schema.json")


def tables(which: str) -> dict[str, Any]:
    """`initial`, `final` or `replayed`, indexed by primary key."""
    try:
        return load_dump(STATE / which, schema())
    except (FileNotFoundError, ValueError) as e:
        raise EnvFault(f"the exported {which} state is incomplete: {e}") from e


def actual_diff() -> dict[str, Any]:
    return diff(schema(), tables("initial"), tables("final"))


def check_replay() -> None:
    """Replaying the logged tool calls on a fresh copy must give the final state; otherwise the
    database was changed outside the tools (an environment fault, never the agent's reward)."""
    meta = _json(STATE / "meta.json")
    if meta.get("replay_failures"):
        raise EnvFault(f"logged calls failed on replay: {meta['replay_failures'][:3]}")
    final, replayed = tables("final"), tables("replayed")
    for t in final:
        if final[t] != replayed[t]:
            changed = sorted(set(final[t]) ^ set(replayed[t]))[:5] or sorted(
                k for k in final[t] if final[t][k] != replayed[t].get(k))[:5]
            raise EnvFault(f"table {t} differs from the replay of the logged calls (rows {changed}): "
                           "an out-of-band edit")


def check_expected_changes(exp: dict[str, Any]) -> None:
    """Every expected field change, deletion and new row is present, exactly."""
    assert exp.get("diff"), "this task expects changes but none are recorded (broken task)"
    missing, _ = compare(exp["diff"], actual_diff())
    assert not missing, "expected changes missing: " + "; ".join(missing[:8])


def check_no_collateral(exp: dict[str, Any]) -> None:
    """The changed tables, rows and fields are exactly the expected ones."""
    _, extra = compare(exp.get("diff") or {}, actual_diff())
    assert not extra, "changes that were not requested: " + "; ".join(extra[:8])


def answers() -> dict[str, list[str]]:
    data = _json(STATE / "answers.json")
    assert isinstance(data.get("answers"), list) and isinstance(data.get("refusals"), list), "answers.json malformed"
    return data


def normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", str(text)).strip().lower()
    text = re.sub(r"\s+", " ", text)
    return text.strip(" .。\"'`")


def as_number(text: str) -> Decimal | None:
    t = normalize(text).replace(",", "").replace("$", "").replace("₩", "").replace("원", "").strip()
    if not re.fullmatch(r"-?\d+(\.\d+)?", t):
        return None
    try:
        return Decimal(t)
    except InvalidOperation:
        return None


def same(given: str, want: str) -> bool:
    a, b = as_number(given), as_number(want)
    if a is not None and b is not None:
        return a == b
    return normalize(given) == normalize(want)


def split_items(text: str) -> list[str]:
    parts = re.split(r"[,;\n]+|\band\b|그리고", str(text))
    return [p for p in (normalize(x) for x in parts) if p]


def check_answer(exp: dict[str, Any]) -> None:
    """The last submitted answer equals the expected one: a scalar exactly (any accepted form),
    a set item by item with nothing extra, so an answer listing every candidate fails."""
    spec = exp.get("answer")
    assert spec, "this task has no expected answer recorded (broken task)"
    given = answers()["answers"]
    assert given, "no answer was submitted (use submit_answer)"
    last = given[-1]
    if spec["kind"] == "scalar":
        accepted = [str(a) for a in spec["accept"]]
        assert any(same(last, a) for a in accepted), f"answer {last[:200]!r} is not the expected value"
    else:
        items = split_items(last)
        want = [[str(a) for a in alts] for alts in spec["items"]]
        remaining = list(items)
        for alts in want:
            hit = next((x for x in remaining if any(same(x, a) for a in alts)), None)
            assert hit is not None, f"answer {last[:200]!r} misses an expected item ({alts[0]})"
            remaining.remove(hit)
        assert not remaining, f"answer lists items that are not part of the answer: {remaining[:5]}"


def check_refused() -> None:
    """The agent declined explicitly (a do-nothing agent does not)."""
    assert answers()["refusals"], "the request should have been declined with the refuse tool"


def check_not_refused() -> None:
    """The agent did not decline a request it should have carried out (a refusal as well as the
    work or the answer is a hedge, which `check_one_outcome` names)."""
    got = answers()["refusals"]
    assert not got, f"the agent refused a request it should have carried out: {got[-1][:200]!r}"


# --- process checks: the call log --------------------------------------------------------------

#: A look-up counts as evidence for a row only when it was aimed at it: the call showed at most
#: this many rows of that table. A listing (a search with no filter shows 20 rows by default) is
#: not a look-up of one account: a policy that lists everything and then refuses earns nothing.
MAX_LOOKUP_ROWS = 10


def targeted(seen: list[str]) -> list[str]:
    """The rows of `seen` ("table|pk") in tables of which the call showed few enough rows."""
    per_table: dict[str, int] = {}
    for key in seen:
        per_table[key.split("|", 1)[0]] = per_table.get(key.split("|", 1)[0], 0) + 1
    return [k for k in seen if per_table[k.split("|", 1)[0]] <= MAX_LOOKUP_ROWS]


def calls() -> list[dict[str, Any]]:
    data = _json(STATE / "calls.json")
    assert isinstance(data, list) and all(isinstance(c, dict) and "tool" in c for c in data), "calls.json malformed"
    return data


def _writes(log: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for c in log if c.get("writes") and c.get("ok", True)]


def check_refusal_justified(exp: dict[str, Any]) -> None:
    """The refusal came after a look-up of every row it rests on (`evidence`): the account and its
    balance, the order, the shift it would overlap... A refusal guessed from the prompt alone fails.
    A call that a rule rejected counts as a look-up too: the tool showed the agent the rule."""
    evidence = exp.get("evidence")
    assert evidence, "this refusal task records no evidence rows (broken task: re-synthesize)"
    log = calls()
    first = next((i for i, c in enumerate(log) if c["tool"] == "refuse"), None)
    assert first is not None, "the request should have been declined with the refuse tool"
    looked: set[str] = set()
    for c in log[:first]:
        looked.update(targeted([str(k) for k in c.get("seen") or []]))
    unseen = [k for k in evidence if k not in looked]
    assert not unseen, (f"refused without looking up what the refusal rests on ({', '.join(unseen)}): "
                        "look the record up before declining")


def _figure(text: str) -> str:
    """A figure as compared: ids without their '#', times with a space or a 'T' alike."""
    return re.sub(r"^(\d{4}-\d\d-\d\d)t(\d\d:\d\d)", r"\1 \2", normalize(text).lstrip("#"))


def check_refusal_grounds(exp: dict[str, Any]) -> None:
    """The refusal names the rule the request breaks and the figure that rule rests on, as the
    records show it (the funds available, the shift it overlaps, the orders on file...). A refusal
    that is right only because refusing was right, without reading the records, fails here."""
    want = exp.get("grounds")
    assert want and want.get("figure"), "this refusal task records no grounds (broken task: re-synthesize)"
    refusals = [c for c in calls() if c["tool"] == "refuse" and c.get("ok", True)]
    assert refusals, "the request should have been declined with the refuse tool"
    args = refusals[-1].get("arguments") or {}
    rule, figure = str(args.get("rule", "")), str(args.get("figure", ""))
    assert rule == want["rule"], f"the refusal names rule {rule!r}, which is not the rule this request breaks"
    assert any(same(figure, f) or _figure(figure) == _figure(f) for f in want["figure"]), (
        f"the refusal's figure {figure[:80]!r} is not what the records show for rule {rule}")


def same_answer(a: str, b: str) -> bool:
    """Two submitted answers state the same outcome: one value in any accepted form, or the same
    items in any order ("A, B" and "B and A")."""
    if same(a, b):
        return True
    left, right = split_items(a), split_items(b)
    if len(left) != len(right):
        return False
    for item in left:
        hit = next((x for x in right if same(item, x)), None)
        if hit is None:
            return False
        right.remove(hit)
    return True


def _same_grounds(a: dict[str, Any], b: dict[str, Any]) -> bool:
    fa, fb = str(a.get("figure", "")), str(b.get("figure", ""))
    return str(a.get("rule", "")) == str(b.get("rule", "")) and (same(fa, fb) or _figure(fa) == _figure(fb))


def check_one_outcome(exp: dict[str, Any]) -> None:
    """One outcome per episode, on every db task: a refusal, or the work and its answer, never both.

    A refusal with a successful write or a submitted answer fails in either order: whichever way
    the task goes, the hedge holds the right outcome. Each outcome is stated once, too: a question
    given two different answers, or a request refused on two different grounds, fails even when
    the last is right. Not "the last counts": that lets a policy list candidates at no cost, and
    whoever reads the episode another way (its first answer, or all of them) sees an outcome other
    than the one rewarded. The same answer (in any accepted form) or the same grounds restated is
    still one outcome."""
    log = [c for c in calls() if c.get("ok", True)]
    refusals = [c.get("arguments") or {} for c in log if c["tool"] == "refuse"]
    given = [str((c.get("arguments") or {}).get("answer", "")) for c in log if c["tool"] == "submit_answer"]
    if refusals:
        acted = [c["tool"] for c in _writes(log)]
        assert not acted, (f"the agent refused and also acted ({', '.join(acted[:5])}), in one episode: "
                           "a refusal must stand alone")
        assert not given, "the agent refused and also submitted an answer, in one episode: a refusal must stand alone"
        other = next((r for r in refusals[1:] if not _same_grounds(refusals[0], r)), None)
        assert other is None, (f"the agent refused on two different grounds ({refusals[0].get('rule')!r}, "
                               f"then {other.get('rule')!r}): one refusal, on one ground, per episode")
    if exp.get("answer") and given:
        other = next((a for a in given[1:] if not same_answer(given[0], a)), None)
        assert other is None, (f"the agent submitted {len(given)} answers that differ ({given[0][:80]!r}, then "
                               f"{other[:80]!r}): one answer per question")


def check_no_collateral_calls(exp: dict[str, Any]) -> None:
    """No write along the way touched a row or field the task does not change, even when a later
    call undid it: the final state alone would hide a customer's phone changed and changed back.
    Rows created in the episode are judged by the final state (their content), unless deleted."""
    want = exp.get("diff") or {}
    initial = tables("initial")
    bad: list[str] = []
    for c in _writes(calls()):
        for w in c.get("wrote") or []:
            table, _, pk = str(w.get("row", "")).partition("|")
            exp_t = want.get(table, {"updated": {}, "added": [], "deleted": []})
            existing = pk in initial.get(table, {})
            if w.get("op") == "delete":
                if pk not in exp_t["deleted"]:
                    bad.append(f"{c['tool']} deleted {table}[{pk}]")
            elif w.get("op") == "update" and existing:
                extra = [col for col in w.get("cols") or [] if col not in exp_t["updated"].get(pk, {})]
                if extra:
                    bad.append(f"{c['tool']} changed {table}[{pk}].{','.join(extra)}")
    assert not bad, "writes outside the task's scope (even if undone later): " + "; ".join(bad[:8])
