"""Constant-policy baselines: what a lazy learner finds first must earn about nothing.

A reward that a policy can collect without reading the task (always refuse, submit an empty or
a fixed answer, run the tests and stop, copy the prompt's keywords into the output, call every
read tool once and decline) is what RL optimises first. `envhub validate --baselines` runs each
policy over the catalogue (or a sample) and reports the mean reward per policy and family; the
target is at most `TARGET` each.

The policies read only the task's prompt and the tool list (names and input schemas), never a
family's code, and where a task's tests declare the file its answer goes in (`expected.json`'s
`output`), they write there only, as a learner that read the prompt would, not over its inputs: a
policy that needs a tool the family lacks does not apply there.

Per template (`--by-template`): a generator's template (db's `metadata.template`, office's task
type) makes tasks whose answers a lazy policy can learn without reading any of them, which a mean
over the whole family hides. `template_policies` adds, for each template, every answer its tasks'
oracles submit (or, for a task answered in a file, what its output must hold: `written`), played
as a constant on each of its tasks ("answer"), each task played with a sibling's answer
("sibling": the answer of another task of the same template) and with a sibling's whole oracle
("replay": a fixed action sequence, which catches a template whose answer is in what a task does),
all capped for a large template (`template_policies`); `by_template` reports each template's best
constant answer, the siblings', the replays' and the generic policies' means.
"""

from __future__ import annotations

import json
import random
import re
import shlex
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from envhub.errors import EnvhubError, FailureClass
from envhub.spec import ResetRequest, StepRequest, ToolCall, ToolSpec
from envhub.tasks.model import Task

TARGET = 0.02
READ_PREFIXES = ("get_", "search_", "list_", "read_", "view_")
_STOP = {"the", "and", "with", "that", "this", "from", "into", "each", "every", "then", "only", "when", "their",
         "them", "they", "have", "what", "which", "your", "please", "write", "file", "files", "line", "lines"}

Tools = dict[str, ToolSpec]
Policy = Callable[[Task, Tools], "list[ToolCall] | None"]


def keywords(prompt: str, limit: int = 40) -> list[str]:
    """Backticked terms, identifiers and numbers, then longer words: what a keyword dump copies."""
    found: list[str] = re.findall(r"`([^`\n]{1,80})`", prompt)
    found += re.findall(r"\b[A-Z]{2,}-?\d+\b|\$?\d[\d,]*(?:\.\d+)?", prompt)
    found += [w for w in re.findall(r"[^\W\d_]{4,}", prompt) if w.lower() not in _STOP]
    out: list[str] = []
    for k in found:
        k = k.strip().lstrip("$")
        if k and k not in out:
            out.append(k)
    return out[:limit]


def outputs(prompt: str) -> list[str]:
    """Files the prompt names (backticked, with an extension): where an answer would be written."""
    return [p for p in dict.fromkeys(re.findall(r"`([\w./-]+\.[A-Za-z0-9]{1,5})`", prompt))
            if not p.startswith(("/", "-")) and ".." not in p]


def _number(prompt: str) -> int:
    m = re.search(r"\d+", prompt)
    return int(m.group()) if m else 1


def _fill(spec: ToolSpec, prompt: str) -> dict[str, Any]:
    """The tool's required arguments, filled the lazy way: the prompt's first number, file or word."""
    schema = spec.input_schema or {}
    props = schema.get("properties", {})
    args: dict[str, Any] = {}
    words = keywords(prompt) or ["x"]
    files = outputs(prompt) or words
    for name in schema.get("required", []):
        p = props.get(name, {})
        if p.get("enum"):
            args[name] = p["enum"][0]
        elif p.get("type") in ("integer", "number"):
            args[name] = _number(prompt)
        elif p.get("format") == "date":
            args[name] = "2025-01-01"
        elif p.get("type") == "array":
            args[name] = []
        elif p.get("type") == "object":
            args[name] = {}
        else:
            args[name] = files[0] if name in ("path", "source", "file") else words[0]
    return args


def _write_outputs(task: Task, tools: Tools, text: str, files: list[str] | None = None) -> list[ToolCall] | None:
    """Write `text` into `files`: by default the output the task's tests declare, or else every file
    the prompt names (an input among them then changes too), with whatever writing tool there is."""
    if files is None:
        declared = _declared(task)
        files = [declared[0]] if declared else outputs(task.prompt)
    if "bash" in tools:
        body = text.replace("'", "")
        cmd = "; ".join(f"printf '%s\\n' '{body}' > {shlex.quote(f)}" for f in files) or "true"
        return [ToolCall(tool="bash", arguments={"command": cmd})]
    calls = []
    for f in files:
        if f.endswith(".xlsx") and "xlsx_write" in tools:
            calls.append(ToolCall(tool="xlsx_write", arguments={"path": f, "sheet": "Sheet1",
                                                                 "rows": [[w] for w in text.split(", ")]}))
        elif f.endswith(".docx") and "docx_write" in tools:
            calls.append(ToolCall(tool="docx_write", arguments={"path": f, "blocks": [
                {"type": "paragraph", "text": text or " "}]}))
        elif f.endswith(".pptx") and "pptx_write" in tools:
            calls.append(ToolCall(tool="pptx_write", arguments={"path": f, "slides": [
                {"title": text[:80] or " ", "bullets": text.split(", ")[:10]}]}))
    return calls or None


def _answer(tools: Tools, text: str) -> list[ToolCall] | None:
    return [ToolCall(tool="submit_answer", arguments={"answer": text})] if "submit_answer" in tools else None


def always_refuse(task: Task, tools: Tools) -> list[ToolCall] | None:
    """Decline, filling whatever else the refusal asks for the lazy way (a rule: the first listed)."""
    if "refuse" not in tools:
        return None
    args = {**_fill(tools["refuse"], task.prompt), "reason": "This request cannot be carried out under policy."}
    return [ToolCall(tool="refuse", arguments=args)]


def empty_answer(task: Task, tools: Tools) -> list[ToolCall] | None:
    return _answer(tools, "") or _write_outputs(task, tools, "")


def fixed_answer(task: Task, tools: Tools) -> list[ToolCall] | None:
    return _answer(tools, "0") or _write_outputs(task, tools, "0")


def keyword_dump(task: Task, tools: Tools) -> list[ToolCall] | None:
    text = ", ".join(keywords(task.prompt))
    return _answer(tools, text) or _write_outputs(task, tools, text)


def run_tests_and_stop(task: Task, tools: Tools) -> list[ToolCall] | None:
    if "run_tests" in tools:
        return [ToolCall(tool="run_tests", arguments={})]
    if "bash" in tools:
        return [ToolCall(tool="bash", arguments={"command": "ls -la; (make test || python3 -m pytest -q) 2>&1 | "
                                                            "tail -20; true"})]
    return None


def read_everything(task: Task, tools: Tools) -> list[ToolCall] | None:
    """Every read tool once (bash: list and print every file), then decline where one can."""
    calls = [ToolCall(tool=name, arguments=_fill(spec, task.prompt)) for name, spec in tools.items()
             if name.startswith(READ_PREFIXES)]
    if "bash" in tools:
        calls.append(ToolCall(tool="bash", arguments={"command": "find . -type f | head -200 | xargs -r head -c 2000"}))
    if not calls:
        return None
    return calls + (always_refuse(task, tools) or [])


POLICIES: dict[str, Policy] = {
    "refuse": always_refuse,
    "empty": empty_answer,
    "fixed": fixed_answer,
    "keywords": keyword_dump,
    "run_tests": run_tests_and_stop,
    "read_all": read_everything,
}


@dataclass
class Outcome:
    task_id: str
    family: str
    policy: str
    reward: float
    failure_class: str
    seconds: float
    template: str = ""


def template_of(task: Task) -> str:
    """The generator's template a task comes from (`family/<template>`), or its family."""
    meta = task.config.metadata or {}
    key = meta.get("template") or meta.get("task_type")
    return f"{task.family}/{key}" if key else task.family


def submitted(actions: list[ToolCall]) -> str | None:
    """The answer a list of calls submits (the last `submit_answer`), or None."""
    answers = [str(a.arguments.get("answer", "")) for a in actions if a.tool == "submit_answer"]
    return answers[-1] if answers else None


def _declared(task: Task) -> tuple[str, str] | None:
    """(output, text) where the task's tests declare the file its answer goes in and what it must
    hold (`expected.json` with `output` and `answer`: terminal's drawn tasks)."""
    return _declared_in(task.tests_dir)


@cache
def _declared_in(tests_dir: Path) -> tuple[str, str] | None:
    """Read once a run: every policy played on a task asks it."""
    try:
        expected = json.loads((tests_dir / "expected.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(expected, dict):
        return None
    output, answer = expected.get("output"), expected.get("answer")
    return (output, answer) if isinstance(output, str) and isinstance(answer, str) else None


def written(task: Task) -> str | None:
    """The text a file-answer task's output must hold: what a learner that remembers a sibling's
    answer writes (into that task's own output)."""
    declared = _declared(task)
    return declared[1] if declared else None


def template_policies(tasks: list[Task], answer_of: Callable[[Task], str | None], *, constants: int = 5,
                      siblings: int = 3, actions_of: Callable[[Task], list[ToolCall] | None] | None = None
                      ) -> list[tuple[Task, str, Policy]]:
    """(task, policy name, policy) for the constant answers of each task's template and its
    siblings' answers: `answer=A` submits A on every task of the template, `sibling=ID` submits
    task ID's answer, and (with `actions_of`) `replay=ID` plays task ID's whole oracle, call for
    call: a fixed action sequence is a constant too, one a learner can memorise from any task of
    the template where the answer is in what it does (the edits of a document whose layout never
    changes), not in what it submits. Played in full these are quadratic in a template's size, so
    a large template plays its `constants` most common answers (a constant earns most where it is
    most often the answer) and each task `siblings` of its siblings' answers and oracles, drawn by
    the task's id."""
    groups: dict[str, list[Task]] = {}
    for t in tasks:
        groups.setdefault(template_of(t), []).append(t)
    out: list[tuple[Task, str, Policy]] = []
    for group in groups.values():
        answers = {t.id: a for t in group if (a := answer_of(t)) is not None}
        common = Counter(answers.values()).most_common()
        for answer, _ in sorted(common, key=lambda c: (-c[1], c[0]))[:constants]:
            out += [(t, f"answer={answer}", _constant(answer)) for t in group]
        oracles = {t.id: a for t in group if (a := actions_of(t))} if actions_of is not None else {}
        for t in group:
            out += [(t, f"sibling={sid}", _constant(answers[sid])) for sid in _siblings(t.id, answers, siblings)]
            out += [(t, f"replay={sid}", _replay(oracles[sid]))
                    for sid in _siblings(t.id, oracles, siblings, salt="replay:")]
    return out


def _siblings(task_id: str, of: dict[str, Any], k: int, salt: str = "") -> list[str]:
    """Up to `k` ids of `of` other than `task_id`, drawn by the task's id (and `salt`), sorted."""
    others = sorted(sid for sid in of if sid != task_id)
    return sorted(random.Random(f"{salt}{task_id}").sample(others, min(k, len(others))))


def _replay(actions: list[ToolCall]) -> Policy:
    return lambda task, tools: list(actions)


def _constant(answer: str) -> Policy:
    """Submit `answer`, or, where there is nothing to submit, write it where the answer goes."""
    return lambda task, tools: _answer(tools, answer) or _write_outputs(task, tools, answer)


async def run_policy(manager: Any, task: Task, name: str, policy: Policy) -> Outcome | None:
    """One episode of `policy` on `task` through the session manager; None where it does not apply."""
    started = time.monotonic()
    created = await manager.create(ResetRequest(env=task.family, task_id=task.id))
    try:
        tools = {t.name: t for t in created.tools}
        actions = policy(task, tools)
        if actions is None:
            return None
        for action in actions:
            await manager.step(created.session_id, StepRequest(action=action))
        result = await manager.verify(created.session_id)
        reward, failure = result.reward, result.failure_class.value
    except EnvhubError as e:
        reward, failure = 0.0, e.failure_class.value
    finally:
        await manager.close(created.session_id)
    return Outcome(task.id, task.family, name, reward, failure, time.monotonic() - started, template_of(task))


def summarize(outcomes: list[Outcome]) -> list[dict[str, Any]]:
    """Mean reward per (family, policy) over the judged episodes; masked ones are counted apart."""
    groups: dict[tuple[str, str], list[Outcome]] = {}
    for o in outcomes:
        groups.setdefault((o.family, o.policy), []).append(o)
    rows = []
    for (family, policy), group in sorted(groups.items()):
        judged = [o for o in group if FailureClass(o.failure_class).trainable]
        mean = sum(o.reward for o in judged) / len(judged) if judged else 0.0
        rows.append({"family": family, "policy": policy, "tasks": len(group), "judged": len(judged),
                     "mean_reward": round(mean, 4), "rewarded": sorted(o.task_id for o in judged if o.reward > 0),
                     "masked": len(group) - len(judged), "ok": mean <= TARGET})
    return rows


def sources(tasks: list[Task], answer_of: Callable[[Task], str | None]) -> dict[tuple[str, str], str]:
    """(template, answer) -> the task a constant answer is learned from: the first, by id, whose
    oracle submits it."""
    found: dict[tuple[str, str], str] = {}
    for t in sorted(tasks, key=lambda t: t.id):
        if (a := answer_of(t)) is not None:
            found.setdefault((template_of(t), a), t.id)
    return found


def by_template(outcomes: list[Outcome], learned_from: dict[tuple[str, str], str] | None = None
                ) -> list[dict[str, Any]]:
    """Per template: each generic policy's mean reward, the best constant answer's (`answer`, with
    the answer) and the siblings' (`sibling`: a task answered with another task's answer); masked
    episodes are counted apart. `ok`: at most `TARGET`.

    With `learned_from` (`sources`), a constant is scored held out, as a learner meets it: on the
    template's tasks but the one it was learned from (there it is that task's own answer, right by
    construction, which would put a floor of 1/k under every template of k tasks); every other
    task that shares the answer still counts."""
    groups: dict[tuple[str, str], list[Outcome]] = {}
    for o in outcomes:
        kind = o.policy.split("=", 1)[0]
        key = o.policy if kind == "answer" else kind
        if kind == "answer" and learned_from is not None and \
                learned_from.get((o.template or o.family, o.policy.split("=", 1)[1])) == o.task_id:
            continue
        groups.setdefault((o.template or o.family, key), []).append(o)
    means: dict[tuple[str, str], dict[str, Any]] = {}
    for (template, policy), group in groups.items():
        judged = [o for o in group if FailureClass(o.failure_class).trainable]
        mean = sum(o.reward for o in judged) / len(judged) if judged else 0.0
        means[(template, policy)] = {"template": template, "policy": policy, "tasks": len(group),
                                     "judged": len(judged), "mean_reward": round(mean, 4),
                                     "masked": len(group) - len(judged)}
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for (template, policy), row in means.items():
        if policy.startswith("answer="):
            best = rows.get((template, "answer"))
            if best is None or row["mean_reward"] > best["mean_reward"]:
                rows[(template, "answer")] = {**row, "policy": "answer", "answer": policy.split("=", 1)[1]}
        else:
            rows[(template, policy)] = row
    return [{**r, "ok": r["mean_reward"] <= TARGET} for _, r in sorted(rows.items())]
