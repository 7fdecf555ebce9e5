"""A data/ tree with files around the 50 KiB line (one exactly on it, which must not count)."""
import json

from common import fresh_state, rng, task_dir

NAME = "find-large-files"
r = rng(NAME)
state = fresh_state(NAME)
sizes = {"data/reports/2023/q4.csv": 60_000, "data/reports/2024/q1.csv": 51_201, "data/reports/2024/q2.csv": 51_200,
         "data/img/logo.svg": 3_000, "data/img/banner large.png": 70_123, "data/dump.sql": 80_000,
         "data/notes.txt": 400, "data/.cache/blob.bin": 55_555, "data/archive/old/x.log": 20_000,
         "data/archive/old/y.log": 52_000, "README.md": 90_000}
for rel, size in sizes.items():
    p = state / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(bytes(r.randrange(32, 127) for _ in range(size)))
expected = sorted(rel[len("data/"):] for rel, s in sizes.items() if rel.startswith("data/") and s > 51_200)
(task_dir(NAME) / "tests" / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
