"""app.log with mixed levels; some non-ERROR lines mention 'error' in their text."""
import hashlib
import json

from common import fresh_state, rng, task_dir

NAME = "count-error-lines"
r = rng(NAME)
state = fresh_state(NAME)
(state / "logs").mkdir()
levels = ["INFO"] * 12 + ["DEBUG"] * 5 + ["WARN"] * 3 + ["ERROR"] * 2
msgs = ["request served", "cache miss", "retrying after error", "user login", "error budget ok",
        "connection reset", "disk almost full", "ERROR count reset", "job finished"]
lines = []
for i in range(3000):
    lvl = r.choice(levels)
    lines.append(f"2024-03-10T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z {r.randint(100, 999)} {lvl} "
                 f"{r.choice(msgs)}")
text = "\n".join(lines) + "\n"
(state / "logs" / "app.log").write_text(text)
count = sum(1 for ln in lines if ln.split()[2] == "ERROR")
(task_dir(NAME) / "tests" / "expected.json").write_text(json.dumps(
    {"count": count, "log_sha256": hashlib.sha256(text.encode()).hexdigest()}) + "\n")
