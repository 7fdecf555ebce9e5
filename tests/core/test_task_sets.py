"""Task sets: a generator, its version and a seed range, materialised into a cache, records in one file."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from envhub.errors import TaskFormatError
from envhub.records import validation_status, write_record
from envhub.tasks.catalog import Catalog
from envhub.tasks.digest import tree_sha256
from envhub.tasks.sets import TaskSet

CALLS: list[int] = []


def toy(set_id: str, seed: int, root: Path) -> Path:
    """A generator: one terminal task per seed, whose prompt names the seed."""
    CALLS.append(seed)
    folder = root / str(seed)
    (folder / "tests").mkdir(parents=True)
    (folder / "task.yaml").write_text(f"id: {set_id}/{seed}\nfamily: {set_id.split('/')[0]}\ntitle: task {seed}\n"
                                      f"metadata: {{seed: {seed}}}\n")
    (folder / "prompt.md").write_text(f"Write {seed * 7} into answer.txt\n")
    (folder / "tests" / "test_answer.py").write_text(f"def test_answer():\n    assert {seed * 7} == 0\n")
    return folder


def write_set(root: Path, seeds: int = 5, generator: str = "tests.core.test_task_sets:toy",
              set_id: str = "terminal/toy") -> Path:
    folder = root / set_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "taskset.yaml").write_text(f"id: {set_id}\nfamily: {set_id.split('/')[0]}\ntitle: toy\n"
                                         f"generator: {generator}\nversion: 1\nseeds: {seeds}\n")
    return folder


def test_a_set_is_listed_task_by_task_and_materialised_once(tmp_path):
    write_set(tmp_path / "tasks")
    CALLS.clear()
    catalog = Catalog(tmp_path / "tasks", tmp_path / "cache")
    assert sorted(catalog.tasks) == [f"terminal/toy/{s}" for s in range(5)]
    task = catalog.get("terminal/toy/3")
    assert task.config.metadata == {"seed": 3} and "21" in task.prompt
    assert task.taskset is catalog.sets["terminal/toy"]
    assert sorted(CALLS) == list(range(5))
    CALLS.clear()
    assert len(Catalog(tmp_path / "tasks", tmp_path / "cache").tasks) == 5
    assert CALLS == []  # the cache answers: nothing is written twice


def test_a_sets_parsed_configs_are_kept_beside_them_and_follow_a_changed_file(tmp_path, monkeypatch):
    """A catalogue of thousands of drawn tasks reads their `task.yaml` from one JSON file, not
    thousands of YAML files in every process; a file changed since is parsed again."""
    from envhub.tasks import sets

    write_set(tmp_path / "tasks")
    taskset = TaskSet.load(tmp_path / "tasks" / "terminal" / "toy")
    folders = taskset.materialize(tmp_path / "cache")
    assert taskset.configs(folders)[3]["metadata"] == {"seed": 3}
    kept = folders[0].parent / sets.CONFIGS_FILE
    assert kept.is_file() and kept.stat().st_mode & 0o777 == 0o644  # other users' processes read it too

    def no_yaml(path: Path) -> None:
        raise AssertionError(f"parsed again: {path}")

    with monkeypatch.context() as m:
        m.setattr(sets, "read_config", no_yaml)
        assert taskset.configs(folders) == {s: {"id": f"terminal/toy/{s}", "family": "terminal", "title": f"task {s}",
                                                "metadata": {"seed": s}} for s in range(5)}
    (folders[3] / "task.yaml").write_text("id: terminal/toy/3\nfamily: terminal\ntitle: task 3\nmetadata: {seed: 33}\n")
    assert taskset.configs(folders)[3]["metadata"] == {"seed": 33}
    assert Catalog(tmp_path / "tasks", tmp_path / "cache").get("terminal/toy/3").config.metadata == {"seed": 33}
    assert sorted(p.name for p in kept.parent.iterdir() if not p.is_dir()) == [sets.CONFIGS_FILE]  # no temp left


def test_the_same_set_materialises_the_same_bytes_anywhere(tmp_path):
    """The db family's drawn set: two caches, the same bytes (a set is data, its folders a cache)."""
    tasks = tmp_path / "tasks"
    write_set(tasks, seeds=10, generator="environments.db.generate:materialize", set_id="db/drawn")
    one = TaskSet.load(tasks / "db" / "drawn").materialize(tmp_path / "a")
    two = TaskSet.load(tasks / "db" / "drawn").materialize(tmp_path / "b")
    assert [tree_sha256(one[s]) for s in range(10)] == [tree_sha256(two[s]) for s in range(10)]
    metas = [json.loads(json.dumps(Catalog(tasks, tmp_path / "a").get(f"db/drawn/{s}").config.metadata))
             for s in range(10)]
    assert len({m["db_seed"] for m in metas}) == 2  # seeds 0-7 share a database, 8-9 the next
    assert len({m["initial_sha256"] for m in metas}) == 2  # ... and the two databases differ
    assert len({m["template"] for m in metas[:8]}) == 8  # a database never asks one question twice


def test_records_live_in_one_file_and_go_stale_with_the_task(tmp_path):
    folder = write_set(tmp_path / "tasks")
    catalog = Catalog(tmp_path / "tasks", tmp_path / "cache")
    tasks = [catalog.get(f"terminal/toy/{s}") for s in range(5)]
    threads = [threading.Thread(target=write_record, args=(t, {"status": "validated"})) for t in tasks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = (folder / "validation.jsonl").read_text().splitlines()
    assert [json.loads(line)["seed"] for line in lines] == list(range(5))  # every writer's line, in seed order
    assert [validation_status(t) for t in tasks] == ["validated"] * 5
    assert not list(folder.glob("*/")), "no folder per task in the repository"
    # a torn line is no record (that task reads as unvalidated), the others stand
    (folder / "validation.jsonl").write_text("\n".join(lines[:4]) + "\n" + lines[4][:20] + "\n")
    assert [validation_status(t) for t in tasks] == ["validated"] * 4 + ["unvalidated"]
    # a task whose files changed (a generator that now draws otherwise) has a stale record
    (tasks[0].path / "prompt.md").write_text("something else\n")
    assert validation_status(tasks[0]) == "stale"


@pytest.mark.parametrize(("text", "field"), [
    ("id: terminal/toy\nfamily: terminal\ntitle: t\ngenerator: nope\nversion: 1\nseeds: 3\n", "generator"),
    ("id: terminal/toy\nfamily: terminal\ntitle: t\ngenerator: a.b:c\nversion: 1\nseeds: 0\n", "seeds"),
    ("id: db/toy\nfamily: terminal\ntitle: t\ngenerator: a.b:c\nversion: 1\nseeds: 3\n", "id"),
    ("id: terminal/toy\nfamily: terminal\ntitle: t\ngenerator: no.such.module:f\nversion: 1\nseeds: 3\n",
     "generator"),
])
def test_a_broken_set_file_is_named_and_stops_nothing(tmp_path, text, field):
    folder = tmp_path / "tasks" / "terminal" / "toy"
    folder.mkdir(parents=True)
    (folder / "taskset.yaml").write_text(text)
    write_set(tmp_path / "tasks", set_id="terminal/fine")
    catalog = Catalog(tmp_path / "tasks", tmp_path / "cache")
    assert len(catalog.tasks) == 5  # the good set is served
    (error,) = catalog.errors.values()
    assert isinstance(error, TaskFormatError) and field in error.detail and "taskset.yaml" in error.detail


def flaky(set_id: str, seed: int, root: Path) -> Path:
    """A generator with a bug on seed 2."""
    if seed == 2:
        raise ZeroDivisionError("a bug in the generator")
    return toy(set_id, seed, root)


def test_a_generator_failing_on_a_seed_loses_only_that_task(tmp_path):
    write_set(tmp_path / "tasks", generator="tests.core.test_task_sets:flaky")
    catalog = Catalog(tmp_path / "tasks", tmp_path / "cache")
    assert sorted(catalog.tasks) == [f"terminal/toy/{s}" for s in (0, 1, 3, 4)]
    (error,) = catalog.errors.values()
    assert "1 seeds" in error.detail and "seed 2: ZeroDivisionError: a bug in the generator" in error.detail


def test_a_server_materialises_only_its_families_sets(tmp_path):
    write_set(tmp_path / "tasks")
    write_set(tmp_path / "tasks", set_id="db/toy")
    CALLS.clear()
    catalog = Catalog(tmp_path / "tasks", tmp_path / "cache", families=["db"])
    assert sorted(catalog.tasks) == [f"db/toy/{s}" for s in range(5)] and list(catalog.sets) == ["db/toy"]
    assert sorted(CALLS) == list(range(5))  # the terminal set was not written
